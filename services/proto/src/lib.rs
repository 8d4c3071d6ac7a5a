//! The gRPC twin of the JSON contracts in `relay-contracts`, generated at build time (protox, so
//! no system `protoc`) from every file in `proto/relay/v1/`:
//!
//! | file | services | NATS subjects mirrored |
//! | --- | --- | --- |
//! | `session.proto` | `SessionService` | `session.*` (the session registry) |
//! | `delivery.proto` | `DeliveryService`, `AgentService` | `delivery.*`, `agent.*` (the delivery runner) |
//! | `permission.proto` | `PermissionService` | `permission.*`, `question.*` (the permission manager) |
//! | `cost.proto` | `CostService` | `cost.*`, `session.getContextWindowState` (the cost aggregator) |
//! | `events.proto` | `EventService` | `event.*` (event-ingest), plus the server-streaming `Subscribe` |
//!
//! The JSON contracts are the source of truth. `tests/contract_drift.rs` fails when a proto
//! message and its Rust contract type disagree on keys, JSON types or presence, or when a
//! service's rpcs differ from the subjects they mirror.

/// Package `relay.v1`: the messages, and a `*_client` and `*_server` module per service
/// (`session_service_server`, `event_service_client`, ...).
pub mod v1 {
    tonic::include_proto!("relay.v1");
}

/// The encoded `google.protobuf.FileDescriptorSet` of `proto/` (with its imports and source
/// comments), for gRPC reflection and the drift test.
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/relay_descriptor.bin"));
