// The official AG-UI client (`@ag-ui/client` 1.0 `HttpAgent`, npm, installed by
// `make interop-deps` into crates/interop/js) as a driver for tests/attack_protocols.rs.
//
// One JSON request a line on stdin, one JSON answer a line on stdout:
//   {"key": <token or null>, "agent": <name>, "input": {threadId, runId, messages, resume}}
// runs `HttpAgent.runAgent` against POST /api/v1/agents/{agent}/agui and answers
// {"events": [every event received], "error": {"status", "message"} | null}. A run still going
// after a few seconds is aborted (what it sent so far is the answer).
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const { HttpAgent } = await import(pathToFileURL(process.env.AGUI_CLIENT).href);
const BASE = process.env.BASE;

async function handle(req) {
  const headers = req.key ? { Authorization: `Bearer ${req.key}` } : {};
  const agent = new HttpAgent({
    url: `${BASE}/api/v1/agents/${encodeURIComponent(req.agent)}/agui`,
    headers,
    threadId: req.input.threadId,
  });
  for (const m of req.input.messages ?? []) agent.addMessage(m);
  const events = [];
  let error = null;
  const timer = setTimeout(() => agent.abortRun(), 3000);
  try {
    await agent.runAgent(
      { runId: req.input.runId, ...(req.input.resume ? { resume: req.input.resume } : {}) },
      { onEvent: ({ event }) => void events.push(event) },
    );
  } catch (e) {
    error = { status: e?.status ?? null, message: String(e?.message ?? e).slice(0, 400) };
  } finally {
    clearTimeout(timer);
  }
  return { events, error };
}

const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
  if (!line.trim()) continue;
  process.stdout.write(JSON.stringify(await handle(JSON.parse(line))) + "\n");
}
