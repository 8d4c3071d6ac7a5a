"""The README's quick start with the Python SDK, against a running mesh (BASE, TOKEN: an
operator key; crates/interop/tests/client_sdks.rs starts the mesh and runs this).

Create a session with a (fake) claude agent, send it messages, follow the session's events
while the connection is cut under the stream, approve the permission the agent asks for, and
read the session's costs. The stream must resume by itself and yield every event of the
session once, in order: the same seqs as the event log's own answer.
"""

import asyncio
import os
import socket
import threading
import time

from relay_mesh import Client, RelayError
from relay_mesh.generated.api.agents import stop
from relay_mesh.generated.api.costs import costs
from relay_mesh.generated.api.events import query_events
from relay_mesh.generated.api.permissions import approve
from relay_mesh.generated.api.sessions import create_session, list_sessions, send_message
from relay_mesh.generated.models import CreateSession, Reason, SendMessage

BASE, TOKEN = os.environ["BASE"], os.environ["TOKEN"]


STARTED = time.monotonic()


def step(text):
    print(f"ok - {text} ({time.monotonic() - STARTED:.1f} s)", flush=True)


def until(what, check, timeout=60.0):
    """Polls `check` until it returns something truthy; fails naming `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


class CuttingProxy:
    """A TCP proxy to the gateway whose open connections can be cut, as a network fails."""

    def __init__(self, base):
        host, port = base.removeprefix("http://").split(":")
        self.upstream = (host, int(port))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.open, self.accepted, self.lock = [], 0, threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            client, _ = self.listener.accept()
            upstream = socket.create_connection(self.upstream)
            with self.lock:
                self.open += [client, upstream]
                self.accepted += 1
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src, dst):
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        with self.lock:
            for s in self.open:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()
            self.open = []


relay = Client(BASE, TOKEN)

# Auth: without the key the gateway refuses, and the SDK raises its typed error, from the
# generated sync and asyncio functions alike.
for call in (
    lambda: list_sessions.sync(client=Client(BASE).api),
    lambda: asyncio.run(list_sessions.asyncio(client=Client(BASE).api)),
):
    try:
        call()
        raise AssertionError("a call without a token succeeded")
    except RelayError as e:
        assert (e.status, e.code, e.retryable) == (401, "unauthorized", False), e
assert asyncio.run(list_sessions.asyncio(client=relay.api)).total >= 0
step("a call without the token raises RelayError(unauthorized, retryable=False); with it, it succeeds")

# Create a session with an agent: the spawner starts the fake claude CLI under a harness.
created = create_session.sync(
    client=relay.api, body=CreateSession(cli="claude", task="hello", title="python sdk quick start")
)
session, agent = created.session_id, created.agent_id
assert isinstance(agent, str), created
step(f"created session {session} with agent {agent} ({created.status})")

# Follow the session from the start of the log, through a proxy that will drop the connection.
proxy = CuttingProxy(BASE)
stream = Client(proxy.url, TOKEN).stream_events(session_id=session, after=0)
seen = []


def read_until(what, done, timeout=60.0):
    """Reads the stream until `done(event)`; fails naming `what` when it takes longer."""
    deadline = time.monotonic() + timeout
    for event in stream:
        seen.append(event)
        if done(event):
            return event
        if time.monotonic() > deadline:
            break
    raise AssertionError(f"timed out waiting for {what}; saw {[e.type_ for e in seen]}")


def output(text):
    return lambda e: e.type_ == "terminal.output" and text in str(e.payload.get("text", ""))


def send(text):
    sent = send_message.sync(client=relay.api, id=session, body=SendMessage(message=text, mode="on-idle"))
    assert sent.success, sent


read_until("the task's echo", output("Received: hello"))
step("the stream replays the session from the start: the agent got its task")

send("tool Grep TODO src")
read_until("the tool call", output("Grep"))
# Cut the connection mid-stream; what the agent does meanwhile must still come through.
proxy.cut()
send("ask-permission Bash rm -rf build")
requested = read_until("the permission request", lambda e: e.type_ == "permission.requested")
assert proxy.accepted >= 2 and stream.reconnects >= 1, (proxy.accepted, stream.reconnects)
step(f"the stream resumed after the cut ({stream.reconnects} reconnect(s)) and saw the permission request")

decided = approve.sync(
    agent, requested.payload["requestId"], client=relay.api, body=Reason(reason="python sdk quick start")
)
assert decided.success and decided.permission.status == "approved", decided
read_until("the agent's grant", output("Permission granted"))
step("approved the pending permission; the agent went ahead")

# Costs: the fake agent prints a usage line, which its harness reports as tokens.
send("tokens 1200 340")
report = until(
    "the session's tokens in the cost report",
    lambda: (r := costs.sync(client=relay.api, session=session)).total.total_tokens == 1540 and r,
)
step(f"costs: {report.total.total_tokens} tokens, ${report.total.estimated_cost_usd:.6f} for the session")

# The stream against the log: every event of the session up to where the stream stands, each
# once, in order (the session's own sequence has no gap), and the log's answer is the same.
read_until("the usage event", lambda e: e.type_ == "tokens.used")
seqs = [e.seq for e in seen]
assert seqs == sorted(set(seqs)), f"a seq twice or out of order: {seqs}"
session_seqs = [e.session_seq for e in seen]
assert session_seqs == list(range(1, len(seen) + 1)), f"a gap in the session's events: {session_seqs}"
log = query_events.sync(client=relay.api, session_id=session, limit=10_000)
assert [e.seq for e in log.events if e.seq <= seqs[-1]] == seqs, "the stream and the log differ"
step(f"the stream yielded the session's {len(seqs)} events once each, no gap, across the cut")

# A stream with no start point begins after the newest event, live.
live = relay.stream_events(session_id=session)
head = live.last_seq
send("after the head")
first = next(live)
assert first.seq > head, (first.seq, head)
live.close()
stream.close()
step("a live stream starts after the log's head")

# An operation whose body is optional, without one: the agent is released.
stopped = stop.sync(agent, client=relay.api)
assert stopped.released, stopped
step("stopped the agent (no request body)")

print("python sdk quick start: all steps passed", flush=True)
