// The README's quick start with the TypeScript SDK (built into dist/), against a running mesh
// (BASE, TOKEN: an operator key; crates/interop/tests/client_sdks.rs starts the mesh and runs
// this).
//
// Create a session with a (fake) claude agent, send it messages, follow the session's events
// while the connection is cut under the stream, approve the permission the agent asks for, and
// read the session's costs. The stream must resume by itself and yield every event of the
// session once, in order: the same seqs as the event log's own answer.
import assert from "node:assert/strict";
import net from "node:net";
import { RelayClient, RelayError } from "../dist/index.js";

const { BASE, TOKEN } = process.env;

const started = Date.now();
const step = (text) => console.log(`ok - ${text} (${((Date.now() - started) / 1000).toFixed(1)} s)`);

/** Polls `check` until it returns something truthy; fails naming `what` after `timeoutMs`. */
async function until(what, check, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A TCP proxy to the gateway whose open connections can be cut, as a network fails. */
function cuttingProxy(base) {
  const upstream = new URL(base);
  const open = new Set();
  let accepted = 0;
  const server = net.createServer((client) => {
    accepted += 1;
    const up = net.connect(Number(upstream.port), upstream.hostname);
    for (const s of [client, up]) {
      open.add(s);
      s.on("close", () => open.delete(s));
      s.on("error", () => {});
    }
    client.pipe(up).pipe(client);
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        accepted: () => accepted,
        cut: () => open.forEach((s) => s.destroy()),
        close: () => server.close(),
      }),
    ),
  );
}

const relay = new RelayClient({ baseUrl: BASE, token: TOKEN });

// Auth: without the key the gateway refuses, and the SDK throws its typed error.
await assert.rejects(new RelayClient({ baseUrl: BASE }).api.GET("/sessions"), (e) => {
  assert.ok(e instanceof RelayError, String(e));
  assert.deepEqual([e.status, e.code, e.retryable], [401, "unauthorized", false]);
  return true;
});
step("a call without the token throws RelayError(unauthorized, retryable=false)");

// Create a session with an agent: the spawner starts the fake claude CLI under a harness.
const { data: created } = await relay.api.POST("/sessions", {
  body: { cli: "claude", task: "hello", title: "typescript sdk quick start" },
});
const { sessionId: session, agentId: agent } = created;
assert.equal(typeof agent, "string");
step(`created session ${session} with agent ${agent} (${created.status})`);

// Follow the session from the start of the log, through a proxy that will drop the connection.
const proxy = await cuttingProxy(BASE);
const stream = new RelayClient({ baseUrl: proxy.url, token: TOKEN }).streamEvents({ sessionId: session, after: 0 });
const events = stream[Symbol.asyncIterator]();
const seen = [];

/** Reads the stream until `done(event)`; fails naming `what` when it takes longer. */
async function readUntil(what, done, timeoutMs = 60_000) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; saw ${seen.map((e) => e.type)}`)), timeoutMs);
  });
  try {
    for (;;) {
      const { value, done: ended } = await Promise.race([events.next(), timeout]);
      assert.ok(!ended, "the stream ended");
      seen.push(value);
      if (done(value)) return value;
    }
  } finally {
    clearTimeout(timer);
  }
}

const output = (text) => (e) => e.type === "terminal.output" && String(e.payload?.text ?? "").includes(text);

async function send(message) {
  const { data: sent } = await relay.api.POST("/sessions/{id}/messages", {
    params: { path: { id: session } },
    body: { message, mode: "on-idle" },
  });
  assert.ok(sent.success);
}

await readUntil("the task's echo", output("Received: hello"));
step("the stream replays the session from the start: the agent got its task");

await send("tool Grep TODO src");
await readUntil("the tool call", output("Grep"));
// Cut the connection mid-stream; what the agent does meanwhile must still come through.
proxy.cut();
await send("ask-permission Bash rm -rf build");
const requested = await readUntil("the permission request", (e) => e.type === "permission.requested");
assert.ok(proxy.accepted() >= 2 && stream.reconnects >= 1, `${proxy.accepted()} ${stream.reconnects}`);
step(`the stream resumed after the cut (${stream.reconnects} reconnect(s)) and saw the permission request`);

const { data: decided } = await relay.api.POST("/agents/{name}/permissions/{request_id}/approve", {
  params: { path: { name: agent, request_id: requested.payload.requestId } },
  body: { reason: "typescript sdk quick start" },
});
assert.ok(decided.success && decided.permission.status === "approved", JSON.stringify(decided));
await readUntil("the agent's grant", output("Permission granted"));
step("approved the pending permission; the agent went ahead");

// Costs: the fake agent prints a usage line, which its harness reports as tokens.
await send("tokens 1200 340");
const report = await until("the session's tokens in the cost report", async () => {
  const { data } = await relay.api.GET("/costs", { params: { query: { session } } });
  return data.total.totalTokens === 1540 && data;
});
step(`costs: ${report.total.totalTokens} tokens, $${report.total.estimatedCostUsd.toFixed(6)} for the session`);

// The stream against the log: every event of the session up to where the stream stands, each
// once, in order (the session's own sequence has no gap), and the log's answer is the same.
await readUntil("the usage event", (e) => e.type === "tokens.used");
const seqs = seen.map((e) => e.seq);
assert.deepEqual(seqs, [...new Set(seqs)].sort((a, b) => a - b), "a seq twice or out of order");
assert.deepEqual(
  seen.map((e) => e.sessionSeq),
  seen.map((_, i) => i + 1),
  "a gap in the session's events",
);
const { data: log } = await relay.api.GET("/events", { params: { query: { sessionId: session, limit: 10_000 } } });
assert.deepEqual(
  log.events.map((e) => e.seq).filter((s) => s <= seqs.at(-1)),
  seqs,
  "the stream and the log differ",
);
step(`the stream yielded the session's ${seqs.length} events once each, no gap, across the cut`);

// A stream with no start point begins after the newest event, live.
const head = await relay.head();
const live = relay.streamEvents({ sessionId: session });
const liveEvents = live[Symbol.asyncIterator]();
const firstLive = liveEvents.next();
await until("the live stream's start", () => live.lastSeq !== undefined);
await send("after the head");
const { value: first } = await Promise.race([
  firstLive,
  new Promise((_, reject) => setTimeout(() => reject(new Error("timed out waiting for the live stream's first event")), 60_000).unref()),
]);
assert.ok(first.seq > head, `${first.seq} <= ${head}`);
live.close();
stream.close();
proxy.close();
step("a live stream starts after the log's head");

// An operation whose body is optional, without one: the agent is released.
const { data: stopped } = await relay.api.POST("/agents/{name}/stop", { params: { path: { name: agent } } });
assert.ok(stopped.released, JSON.stringify(stopped));
step("stopped the agent (no request body)");

console.log(`typescript sdk quick start: all steps passed (${((Date.now() - started) / 1000).toFixed(1)} s)`);
// Done: a connection the runtime still holds open must not keep the process (and the test)
// waiting.
process.exit(0);
