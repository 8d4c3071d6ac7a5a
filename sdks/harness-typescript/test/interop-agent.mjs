// An agent on the TypeScript harness SDK, run by crates/interop/tests/harness_sdks.rs against the
// real mesh (its twin on the Python SDK is sdks/harness-python/tests/interop_agent.py); the
// test builds dist/ first.
//
// It attaches as @HANDLE, waits for "go", asks two permissions (one a policy approves, one a
// person decides: EXPECT), sends PEER three numbered messages and the PTY agent two (one it
// relays to PEER with the `->relay:` convention), then waits for the same from the others and
// for its release. Each step is a `log` event in the agent's event log. Environment:
// RELAY_NATS__URL and the agent's identity (RELAY_NATS__CREDS or RELAY_NATS__CREDS_FILE),
// SESSION_ID, HANDLE, PEER, PTY, PERMISSION_COMMAND, EXPECT.

import { Binding, adapter, capabilities, connect, receipt } from "../dist/index.js";

const { HANDLE, PEER, PTY } = process.env;

/** Surfaces every message into a queue the script reads (a real agent would prompt its model). */
class Inbox {
  queue = [];
  waiters = [];
  surfaced = []; // delivery ids, in the order surfaced
  releasedBecause = undefined;

  async receiveMessage(message, ctx) {
    this.surfaced.push(ctx.id);
    const item = [message.relay?.from?.handle, message.contentText];
    const waiter = this.waiters.shift();
    if (waiter) waiter(item);
    else this.queue.push(item);
    return receipt("delivered");
  }

  next() {
    return this.queue.length ? Promise.resolve(this.queue.shift()) : new Promise((r) => this.waiters.push(r));
  }

  async release(reason) {
    this.releasedBecause = reason;
  }
}

function check(ok, what) {
  if (!ok) throw new Error(what);
}

async function main() {
  const bus = await connect();
  const inbox = new Inbox();
  const binding = await Binding.attach(
    bus,
    {
      sessionId: process.env.SESSION_ID,
      agent: adapter("typescript-sdk"),
      handle: HANDLE,
      capabilities: capabilities(["immediate", "on-idle"]),
    },
    inbox,
  );
  check(binding.handle === HANDLE, `handle ${binding.handle}`);
  binding.events.status("idle");

  const step = (n, what) => {
    console.log(`${HANDLE} step ${n}: ${what}`);
    binding.events.emit("log", { level: "info", message: `${HANDLE} step ${n}: ${what}` });
  };

  step(1, `attached as agent ${binding.agentId}`);

  // A payload JSON cannot carry is refused at the call and not queued: the later steps and the
  // release (which flushes) still reach the log.
  let refused = false;
  try {
    binding.events.emit("log", { level: "info", size: 1n });
  } catch (e) {
    refused = e instanceof TypeError;
  }
  check(refused, "emit took a payload JSON cannot encode");

  const [sender, text] = await inbox.next();
  check(text === "go", `first message ${text} from ${sender}`);
  step(2, "go");

  const read = await binding.askPermission("Read", { filePath: "README.md", description: "read the README" });
  check(read === "approved", `Read was ${read}`);
  const decided = await binding.askPermission("Bash", { command: process.env.PERMISSION_COMMAND, description: "clean up" });
  check(decided === process.env.EXPECT, `Bash was ${decided}`);
  step(3, `Read approved by policy, Bash ${decided} by a person`);

  const sends = [1, 2, 3].map((i) => [`@${PEER}`, `hello ${PEER} from ${HANDLE} #${i}`]);
  sends.push([`@${PTY}`, `say ->relay:@${PEER} pty relays for ${HANDLE}`], [`@${PTY}`, `hello pty from ${HANDLE}`]);
  for (const [to, text] of sends) {
    const sent = await binding.sendMessage(to, text);
    const statuses = sent.recipients.map((r) => r.status);
    check(JSON.stringify(statuses) === '["queued"]', `send to ${to}: ${JSON.stringify(sent)}`);
  }
  step(4, "sent three messages to the peer and two to the PTY agent");

  const expected = new Set([1, 2, 3].map((i) => `hello ${HANDLE} from ${PEER} #${i}`));
  expected.add(`pty relays for ${PEER}`);
  const got = [];
  while (got.length < expected.size) {
    const [sender, text] = await inbox.next();
    check(expected.has(text) && !got.includes(text), `unexpected ${text} from ${sender}`);
    check(sender === (text.startsWith("pty") ? PTY : PEER), `${text} from ${sender}`);
    got.push(text);
  }
  const numbered = got.filter((t) => t.startsWith("hello"));
  check(JSON.stringify(numbered) === JSON.stringify([...numbered].sort()), `out of order: ${numbered}`);
  step(5, `received ${got.length} messages, the peer's in order`);

  step(6, "waiting for release");
  await binding.released();
  check(inbox.surfaced.length === 5 && new Set(inbox.surfaced).size === 5, `surfaced ${inbox.surfaced}`);
  check(inbox.releasedBecause !== undefined, "released without a reason");
  binding.close();
  await bus.close();
  console.log(`${HANDLE}: all steps passed`);
}

main().then(() => process.exit(0)).catch((e) => {
  console.error(e);
  console.log(`${HANDLE}: FAILED`);
  process.exit(1);
});
