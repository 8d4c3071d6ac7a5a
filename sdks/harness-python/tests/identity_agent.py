"""An agent on the Python harness SDK, run by crates/interop/tests/harness_sdk_identity.rs: which
credentials let an agent send. Environment: RELAY_NATS__URL and the credentials to try
(RELAY_NATS__CREDS_FILE), SESSION_ID, HANDLE, PEER, and MODE:

- `refused`: the credentials carry no agent identity; attaching must be refused. Prints
  "REFUSED <code>: <message>".
- `answered`: the agent's own credentials; it sends PEER a DM, prints "SENT <messageId>", and
  waits for a reply in that thread: "GOT <text>".
"""

import asyncio
import os
import sys

from relay_mesh_harness import AgentSession, AttachOptions, Binding, RelayError, adapter, connect, receipt


class Inbox(AgentSession):
    def __init__(self):
        self.queue = asyncio.Queue()

    async def receive_message(self, message, ctx):
        await self.queue.put(message["contentText"])
        return receipt("delivered")

    async def release(self, reason):
        pass


async def main() -> int:
    bus = await connect()
    inbox = Inbox()
    opts = AttachOptions(session_id=os.environ["SESSION_ID"], agent=adapter("python-sdk"), handle=os.environ["HANDLE"])
    try:
        binding = await Binding.attach(bus, opts, inbox)
    except RelayError as e:
        print(f"REFUSED {e.code}: {e.message}", flush=True)
        return 0 if os.environ["MODE"] == "refused" else 1
    if os.environ["MODE"] == "refused":
        print(f"ATTACHED as {binding.agent_id}", flush=True)
        return 1
    binding.events.status("idle")
    sent = await binding.send_message("@" + os.environ["PEER"], "is the build green?")
    print(f"SENT {sent['messageId']}", flush=True)
    text = await asyncio.wait_for(inbox.queue.get(), 60)
    print(f"GOT {text}", flush=True)
    await bus.close()
    return 0


sys.exit(asyncio.run(main()))
