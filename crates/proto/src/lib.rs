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

/// The NATS subject behind every unary rpc, as (service, rpc, subject), read from the `grpc`
/// of each declaration in `relay_contracts::rpc`. The gateway's gRPC bridge routes by it;
/// `tests/contract_drift.rs` checks it against the proto files and the declared request and
/// response types. `EventService.Subscribe` streams, so it is not here.
pub fn unary_rpcs() -> impl Iterator<Item = (&'static str, &'static str, &'static str)> {
    relay_contracts::rpc::ALL
        .iter()
        .filter_map(|r| r.grpc.map(|(service, method)| (service, method, r.subject)))
}
