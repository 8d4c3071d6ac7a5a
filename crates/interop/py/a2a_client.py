"""The official A2A Python SDK (`a2a-sdk` from PyPI, protocol 1.0, JSON-RPC) against the
gateway's A2A endpoints.

Env: BASE (gateway URL), TOKEN (an operator key), AGENT (a fake agent's handle). Prints
"a2a client: all steps passed" at the end.
"""

import asyncio
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
from a2a.client import A2ACardResolver, ClientCallContext, ClientConfig, ClientFactory
from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError
from a2a.types import a2a_pb2 as pb
from google.protobuf import json_format, struct_pb2

BASE, TOKEN, AGENT, ADMIN = (os.environ[k] for k in ("BASE", "TOKEN", "AGENT", "ADMIN"))
STATE = pb.TaskState.Name


def message(text, message_id, task_id=None, data=None):
    parts = [pb.Part(text=text)]
    if data is not None:
        value = struct_pb2.Value()
        json_format.ParseDict(data, value)
        parts.append(pb.Part(data=value))
    m = pb.Message(message_id=message_id, role=pb.Role.ROLE_USER, parts=parts)
    if task_id:
        m.task_id = task_id
    return pb.SendMessageRequest(message=m)


class PushReceiver(BaseHTTPRequestHandler):
    """Where the mesh posts a task's push notifications: each body parsed as an A2A
    StreamResponse with the SDK's own types, with the token header it came with."""

    posts = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers["content-length"]))
        response = json_format.ParseDict(json.loads(body), pb.StreamResponse())
        PushReceiver.posts.append((self.headers.get("X-A2A-Notification-Token"), response))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def push_states():
    states = []
    for _, r in PushReceiver.posts:
        if r.HasField("status_update"):
            states.append(STATE(r.status_update.status.state))
        elif r.HasField("task"):
            states.append(STATE(r.task.status.state))
    return states


def seq_of(update):
    return int(update.metadata["seq"])


async def main():
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120)
    agent_url = f"{BASE}/api/v1/a2a/agents/{AGENT}"

    # The cards: the agent's and the workspace's (one skill per live agent).
    card = await A2ACardResolver(http, agent_url).get_agent_card()
    assert card.name == f"@{AGENT}", card.name
    assert card.capabilities.streaming
    assert card.supported_interfaces[0].protocol_binding == "JSONRPC"
    assert card.supported_interfaces[0].protocol_version == "1.0"
    assert any(s.id == "chat" for s in card.skills)
    # A spawned CLI agent (the fake, read as Claude Code) declares what its path supports.
    assert any(s.id == "code" and "approval" in s.description for s in card.skills), card.skills
    workspace = await A2ACardResolver(http, f"{BASE}/api/v1/a2a").get_agent_card()
    assert any(s.id == AGENT for s in workspace.skills), workspace.skills
    print("cards:", card.name, "/", workspace.name)

    client = ClientFactory(ClientConfig(httpx_client=http, streaming=True)).create(card)

    # 1. Stream a task and drop the connection once the agent is working.
    first_seqs, task_id = [], None
    stream = client.send_message(message("sleep 1500", "a2a-m1"))
    async for r in stream:
        if r.HasField("task"):
            task_id = r.task.id
            assert r.task.context_id, r.task
        elif r.HasField("status_update"):
            first_seqs.append(seq_of(r.status_update))
            if r.status_update.status.state == pb.TaskState.TASK_STATE_WORKING:
                break
    await stream.aclose()
    assert task_id and first_seqs, (task_id, first_seqs)
    print("task", task_id, "dropped after seqs", first_seqs)

    # 2. Resubscribe after the last seq seen: the rest, none again, up to completion.
    resumed, states = [], []
    ctx = ClientCallContext(service_parameters={"Last-Event-ID": str(first_seqs[-1])})
    async for r in client.subscribe(pb.SubscribeToTaskRequest(id=task_id), context=ctx):
        if r.HasField("status_update"):
            resumed.append(seq_of(r.status_update))
            states.append(STATE(r.status_update.status.state))
    print("resumed seqs", resumed, states)
    assert states[-1] == "TASK_STATE_COMPLETED", states
    assert resumed and min(resumed) > first_seqs[-1], (first_seqs, resumed)

    # The whole history from the start (Last-Event-ID 0): exactly what the two streams saw.
    everything = []
    ctx = ClientCallContext(service_parameters={"Last-Event-ID": "0"})
    async for r in client.subscribe(pb.SubscribeToTaskRequest(id=task_id), context=ctx):
        if r.HasField("status_update"):
            everything.append(seq_of(r.status_update))
    assert everything == first_seqs + resumed, (everything, first_seqs, resumed)
    assert len(set(everything)) == len(everything)

    # A subscription without a cursor to an ended task: the task as it ended.
    ended = [r async for r in client.subscribe(pb.SubscribeToTaskRequest(id=task_id))]
    assert len(ended) == 1 and STATE(ended[0].task.status.state) == "TASK_STATE_COMPLETED", ended

    task = await client.get_task(pb.GetTaskRequest(id=task_id))
    assert STATE(task.status.state) == "TASK_STATE_COMPLETED"
    answer = task.artifacts[0].parts[0].text
    assert "Worked for" in answer or "1500" in answer, answer
    listed = await client.list_tasks(pb.ListTasksRequest())
    assert task_id in [t.id for t in listed.tasks], listed

    # 3. A permission request: the blocking send returns the task waiting for input; a reply
    #    on the task with {"approved": true} lets the agent carry on.
    polling = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)
    [r] = [r async for r in polling.send_message(message("ask-permission Bash rm -rf build", "a2a-m2"))]
    assert STATE(r.task.status.state) == "TASK_STATE_INPUT_REQUIRED", r.task
    print("input required:", r.task.status.message.parts[0].text)
    states = []
    async for u in client.send_message(message("approve", "a2a-m3", task_id=r.task.id, data={"approved": True})):
        if u.HasField("status_update"):
            states.append(STATE(u.status_update.status.state))
    assert states[-1] == "TASK_STATE_COMPLETED", states
    # Its history goes past the interrupt it had: the task is completed, not waiting.
    again = await client.get_task(pb.GetTaskRequest(id=r.task.id))
    assert STATE(again.status.state) == "TASK_STATE_COMPLETED", again
    # The same with the blocking send answering: it returns once the task is done.
    [r] = [r async for r in polling.send_message(message("ask-permission Bash rm -rf dist", "a2a-m6"))]
    assert STATE(r.task.status.state) == "TASK_STATE_INPUT_REQUIRED", r.task
    [done] = [u async for u in polling.send_message(message("deny", "a2a-m7", task_id=r.task.id))]
    assert STATE(done.task.status.state) == "TASK_STATE_COMPLETED", done.task

    # 4. Cancel a running task.
    stream = client.send_message(message("sleep 60000", "a2a-m4"))
    async for u in stream:
        if u.HasField("task"):
            long_id = u.task.id
        elif u.HasField("status_update") and u.status_update.status.state == pb.TaskState.TASK_STATE_WORKING:
            break
    await stream.aclose()
    cancelled = await client.cancel_task(pb.CancelTaskRequest(id=long_id))
    assert STATE(cancelled.status.state) == "TASK_STATE_CANCELED", cancelled
    try:
        await client.cancel_task(pb.CancelTaskRequest(id=long_id))
        raise AssertionError("a cancelled task cancelled again")
    except TaskNotCancelableError as e:
        print("cancel again:", e)

    try:
        await client.get_task(pb.GetTaskRequest(id="nobody:nothing"))
        raise AssertionError("an unknown task was found")
    except TaskNotFoundError as e:
        print("unknown task:", e)

    # 5. Push: a config made with the send posts the task's updates to a receiver, as A2A
    #    StreamResponses with the token. Push configs are webhooks: an admin key makes them.
    server = ThreadingHTTPServer(("127.0.0.1", 0), PushReceiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    receiver = f"http://127.0.0.1:{server.server_port}/a2a-push"
    admin_http = httpx.AsyncClient(headers={"Authorization": f"Bearer {ADMIN}"}, timeout=120)
    admin = ClientFactory(ClientConfig(httpx_client=admin_http, streaming=True)).create(card)
    request = message("tool Read src/lib.rs", "a2a-m5")
    request.configuration.task_push_notification_config.CopyFrom(
        pb.TaskPushNotificationConfig(url=receiver, token="push-secret")
    )
    async for u in admin.send_message(request):
        if u.HasField("task"):
            pushed_id = u.task.id
    for _ in range(600):
        if "TASK_STATE_COMPLETED" in push_states():
            break
        await asyncio.sleep(0.05)
    print("pushed:", push_states())
    assert all(token == "push-secret" for token, _ in PushReceiver.posts)
    # A push posts its task's updates one at a time, in seq order, none twice; the last says
    # the task completed.
    updates = [
        (seq_of(r.status_update), STATE(r.status_update.status.state))
        if r.HasField("status_update")
        else (seq_of(r.task), STATE(r.task.status.state))  # the answer and completion at once
        for _, r in PushReceiver.posts
    ]
    seqs = [seq for seq, _ in updates]
    assert seqs == sorted(set(seqs)), updates
    assert updates[-1][1] == "TASK_STATE_COMPLETED", updates

    configs = await admin.list_task_push_notification_configs(pb.ListTaskPushNotificationConfigsRequest(task_id=pushed_id))
    [config] = configs.configs
    assert config.url == receiver and config.token == "push-secret", config
    got = await admin.get_task_push_notification_config(pb.GetTaskPushNotificationConfigRequest(task_id=pushed_id, id=config.id))
    assert got.id == config.id
    # A push for a task that already ended says so once.
    before = len(PushReceiver.posts)
    again = await admin.create_task_push_notification_config(
        pb.TaskPushNotificationConfig(task_id=pushed_id, url=receiver, token="second")
    )
    for _ in range(600):
        if len(PushReceiver.posts) > before:
            break
        await asyncio.sleep(0.05)
    token, final = PushReceiver.posts[before]
    assert token == "second" and STATE(final.task.status.state) == "TASK_STATE_COMPLETED", final
    for c in (config, again):
        await admin.delete_task_push_notification_config(pb.DeleteTaskPushNotificationConfigRequest(task_id=pushed_id, id=c.id))
    configs = await admin.list_task_push_notification_configs(pb.ListTaskPushNotificationConfigsRequest(task_id=pushed_id))
    assert len(configs.configs) == 0, configs
    # An operator's key may not make one.
    try:
        await client.create_task_push_notification_config(pb.TaskPushNotificationConfig(task_id=pushed_id, url=receiver))
        raise AssertionError("an operator made a push config")
    except Exception as e:  # a refusal for the role is HTTP 403 (A2A leaves authorization to HTTP)
        assert "403" in str(e), e
    server.shutdown()
    await admin_http.aclose()

    await http.aclose()
    print("a2a client: all steps passed")


asyncio.run(main())
