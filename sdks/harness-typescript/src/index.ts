// relay-mesh harness SDK for TypeScript: an agent attaches as a relay session over NATS, with
// the official NATS client for Node (@nats-io/transport-node). The twin of the Rust
// `relay-harness` crate and of the Python `relay_mesh_harness` package.

export {
  Binding,
  DEFAULT_EMITS,
  adapter,
  capabilities,
  receipt,
  type ActionAnswer,
  type ActionCall,
  type AgentSession,
  type AttachOptions,
  type CancelHeld,
  type Capabilities,
  type DeliveryMode,
  type Message,
  type MessageContext,
  type Receipt,
  type ReceiptStatus,
  type SendOptions,
  type SendResponse,
  type TurnControl,
  type TurnState,
} from "./binding.js";
export { Bus, RelayError, connect, credsIdentity, type ConnectOptions } from "./bus.js";
export { EventSink, type NewEvent } from "./events.js";
