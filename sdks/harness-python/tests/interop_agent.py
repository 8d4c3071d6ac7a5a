"""An agent on the Python harness SDK, run by crates/interop/tests/harness_sdks.rs against the real
mesh (its twin on the TypeScript SDK is sdks/harness-typescript/test/interop-agent.mjs).

It attaches as @HANDLE, waits for "go", asks two permissions (one a policy approves, one a person
decides: EXPECT), sends PEER three numbered messages and the PTY agent two (one it relays to PEER
with the `->relay:` convention), then waits for the same from the others and for its release.
Each step is a `log` event in the agent's event log. Environment: RELAY_NATS__URL and the
agent's identity (RELAY_NATS__CREDS or RELAY_NATS__CREDS_FILE), SESSION_ID, HANDLE, PEER, PTY,
PERMISSION_COMMAND, EXPECT.
"""

import asyncio
import datetime
import os
import sys
import traceback

from relay_mesh_harness import AgentSession, AttachOptions, Binding, adapter, capabilities, connect, receipt

HANDLE, PEER, PTY = os.environ["HANDLE"], os.environ["PEER"], os.environ["PTY"]


class Inbox(AgentSession):
    """Surfaces every message into a queue the script reads (a real agent would prompt its model)."""

    def __init__(self):
        self.queue = asyncio.Queue()
        self.surfaced = []  # delivery ids, in the order surfaced
        self.released_because = None

    async def receive_message(self, message, ctx):
        self.surfaced.append(ctx["id"])
        sender = ((message.get("relay") or {}).get("from") or {}).get("handle")
        await self.queue.put((sender, message["contentText"]))
        return receipt("delivered")

    async def release(self, reason):
        self.released_because = reason


def check(ok, what):
    if not ok:
        raise AssertionError(what)


async def main():
    bus = await connect()
    inbox = Inbox()
    opts = AttachOptions(
        session_id=os.environ["SESSION_ID"],
        agent=adapter("python-sdk"),
        handle=HANDLE,
        capabilities=capabilities(["immediate", "on-idle"]),
    )
    binding = await Binding.attach(bus, opts, inbox)
    check(binding.handle == HANDLE, f"handle {binding.handle}")
    binding.events.status("idle")

    def step(n, what):
        print(f"{HANDLE} step {n}: {what}", flush=True)
        binding.events.emit("log", {"level": "info", "message": f"{HANDLE} step {n}: {what}"})

    step(1, f"attached as agent {binding.agent_id}")

    # A payload JSON cannot carry is refused at the call and not queued: the later steps and the
    # release (which flushes) still reach the log.
    try:
        binding.events.emit("log", {"level": "info", "at": datetime.datetime.now()})
        refused = False
    except TypeError:
        refused = True
    check(refused, "emit took a payload JSON cannot encode")

    sender, text = await inbox.queue.get()
    check(text == "go", f"first message {text!r} from {sender}")
    step(2, "go")

    read = await binding.ask_permission("Read", file_path="README.md", description="read the README")
    check(read == "approved", f"Read was {read}")
    decided = await binding.ask_permission("Bash", command=os.environ["PERMISSION_COMMAND"], description="clean up")
    check(decided == os.environ["EXPECT"], f"Bash was {decided}")
    step(3, f"Read approved by policy, Bash {decided} by a person")

    sends = [(f"@{PEER}", f"hello {PEER} from {HANDLE} #{i}") for i in (1, 2, 3)]
    sends += [(f"@{PTY}", f"say ->relay:@{PEER} pty relays for {HANDLE}"), (f"@{PTY}", f"hello pty from {HANDLE}")]
    for to, text in sends:
        sent = await binding.send_message(to, text)
        statuses = [r["status"] for r in sent["recipients"]]
        check(statuses == ["queued"], f"send to {to}: {sent}")
    step(4, "sent three messages to the peer and two to the PTY agent")

    expected = {f"hello {HANDLE} from {PEER} #{i}" for i in (1, 2, 3)} | {f"pty relays for {PEER}"}
    got = []
    while len(got) < len(expected):
        sender, text = await inbox.queue.get()
        check(text in expected and text not in got, f"unexpected {text!r} from {sender}")
        check(sender == (PTY if text.startswith("pty") else PEER), f"{text!r} from {sender}")
        got.append(text)
    numbered = [t for t in got if t.startswith("hello")]
    check(numbered == sorted(numbered), f"out of order: {numbered}")
    step(5, f"received {len(got)} messages, the peer's in order")

    step(6, "waiting for release")
    await binding.released()
    check(len(inbox.surfaced) == len(set(inbox.surfaced)) == 5, f"surfaced {inbox.surfaced}")
    check(inbox.released_because is not None, "released without a reason")
    await binding.close()
    await bus.close()
    print(f"{HANDLE}: all steps passed", flush=True)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except Exception:
        traceback.print_exc()
        print(f"{HANDLE}: FAILED", flush=True)
        sys.exit(1)
