//! The gRPC twin of the JSON contracts in `relay-contracts`, generated from
//! `proto/relay/v1/session.proto` at build time (protox, so no system `protoc`).
//!
//! The JSON contracts are the source of truth. `tests/contract_drift.rs` fails when a proto
//! message and its Rust contract type disagree on keys, JSON types or presence.

/// Package `relay.v1`: the messages, `session_service_client` and `session_service_server`.
pub mod v1 {
    tonic::include_proto!("relay.v1");
}

/// The encoded `google.protobuf.FileDescriptorSet` of `proto/` (with its imports and source
/// comments), for gRPC reflection and the drift test.
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/relay_descriptor.bin"));
