//! The gRPC twin of the JSON contracts in `relay-contracts`. `tests/contract_drift.rs` keeps the
//! two in step: every JSON key of a contract type is a field of its proto message and back.

pub mod v1 {
    tonic::include_proto!("relay.v1");
}

/// The encoded `FileDescriptorSet` of proto/, for gRPC reflection and drift checks.
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/relay_descriptor.bin"));
