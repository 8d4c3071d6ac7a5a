// The official AG-UI client (`@ag-ui/client` 1.0, HttpAgent) against the gateway's
// POST /api/v1/agents/{name}/agui. Env: BASE, TOKEN, AGENT (a fake agent's handle).
// Run 1: a turn with a tool call. Run 2: a permission request ends the run as an interrupt.
// Run 3: resumes it, approving; the agent carries on and the run finishes.
import assert from "node:assert/strict";
import { HttpAgent } from "@ag-ui/client";

const { BASE, TOKEN, AGENT } = process.env;
const agent = new HttpAgent({
  url: `${BASE}/api/v1/agents/${AGENT}/agui`,
  headers: { Authorization: `Bearer ${TOKEN}` },
});

async function run(params, label) {
  const events = [];
  let finished;
  await agent.runAgent(params, {
    onEvent: ({ event }) => {
      events.push(event);
    },
    onRunFinishedEvent: (p) => {
      finished = p;
    },
    onRunErrorEvent: ({ event }) => {
      throw new Error(`${label}: RUN_ERROR ${event.code}: ${event.message}`);
    },
  });
  const types = events.map((e) => e.type);
  console.log(`${label}:`, types.join(" "));
  assert.equal(types[0], "RUN_STARTED", label);
  assert.equal(types.at(-1), "RUN_FINISHED", label);
  assert.ok(finished, `${label}: no RUN_FINISHED`);
  return { events, types, finished };
}

// 1. A turn with a tool call.
agent.addMessage({ id: "m1", role: "user", content: "tool Read src/lib.rs" });
const first = await run({}, "tool turn");
for (const t of ["STATE_SNAPSHOT", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT", "TEXT_MESSAGE_CONTENT"]) {
  assert.ok(first.types.includes(t), `tool turn: no ${t}`);
}
const start = first.events.find((e) => e.type === "TOOL_CALL_START");
assert.equal(start.toolCallName, "Read");
const result = first.events.find((e) => e.type === "TOOL_CALL_RESULT");
assert.equal(result.toolCallId, start.toolCallId);
assert.equal(first.finished.outcome, "success");
const snapshot = first.events.find((e) => e.type === "STATE_SNAPSHOT").snapshot;
assert.ok(snapshot.sessionId && snapshot.agentId, JSON.stringify(snapshot));
// The client folded the stream into its conversation: the tool call and the agent's text.
assert.ok(agent.messages.some((m) => m.role === "assistant" && m.toolCalls?.some((c) => c.function.name === "Read")));
assert.ok(agent.messages.some((m) => m.role === "tool" && m.toolCallId === start.toolCallId));

// 2. A permission request: the run ends with the interrupt outcome.
agent.addMessage({ id: "m2", role: "user", content: "ask-permission Bash rm -rf build" });
const asked = await run({}, "permission turn");
assert.equal(asked.finished.outcome, "interrupt");
assert.equal(agent.pendingInterrupts.length, 1);
const interrupt = agent.pendingInterrupts[0];
assert.equal(interrupt.reason, "tool_approval");
assert.match(interrupt.id, /^permission:/);
console.log("interrupt:", JSON.stringify(interrupt));

// A new run that does not answer the interrupt is refused by the client itself.
await assert.rejects(agent.runAgent({}), /pending interrupt/);

// 3. Resume, approving: the agent carries on and the run finishes.
const resumed = await run(
  { resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true, reason: "AG-UI test" } }] },
  "resumed turn",
);
assert.equal(resumed.finished.outcome, "success");
assert.equal(agent.pendingInterrupts.length, 0);

console.log("ag-ui client: all steps passed");
// Done: nothing the client left open may keep the process (and the test) waiting.
process.exit(0);
