// An agent on the TypeScript harness SDK, run by crates/interop/tests/harness_sdk_identity.rs with
// credentials that carry no agent identity (RELAY_NATS__CREDS_FILE): attaching must be refused.
// Prints "REFUSED <code>: <message>"; the test builds dist/ first. Environment: RELAY_NATS__URL,
// RELAY_NATS__CREDS_FILE, SESSION_ID, HANDLE.

import { Binding, RelayError, adapter, connect, receipt } from "../dist/index.js";

const bus = await connect();
try {
  const binding = await Binding.attach(
    bus,
    { sessionId: process.env.SESSION_ID, agent: adapter("typescript-sdk"), handle: process.env.HANDLE },
    { async receiveMessage() { return receipt("delivered"); }, async release() {} },
  );
  console.log(`ATTACHED as ${binding.agentId}`);
  process.exitCode = 1;
} catch (e) {
  if (!(e instanceof RelayError)) throw e;
  console.log(`REFUSED ${e.code}: ${e.wireMessage}`);
}
await bus.close();
