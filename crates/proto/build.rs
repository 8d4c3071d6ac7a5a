//! Compiles proto/ with protox (pure Rust: no system protoc) and generates prost messages plus
//! tonic client and server code. The encoded descriptor set is kept for gRPC reflection and for
//! the drift test.

use prost::Message;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../proto");
    // A directory: cargo rescans every file under it, so a new .proto file reruns this script.
    println!("cargo:rerun-if-changed={}", root.display());
    println!("cargo:rerun-if-changed=build.rs");

    // Every file of package relay.v1 (session, delivery, permission, cost, events), in a fixed
    // order so that the descriptor set and the generated code do not depend on the directory.
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("relay/v1"))?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    files.retain(|path| path.extension().is_some_and(|ext| ext == "proto"));
    files.sort();

    let fds = protox::compile(&files, [&root])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("relay_descriptor.bin"), fds.encode_to_vec())?;

    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        // No `connect()` helper on the client: that would need tonic's `transport` feature.
        .build_transport(false)
        // Our own rerun-if-changed above covers the proto dir.
        .emit_rerun_if_changed(false)
        .compile_fds(fds)?;
    Ok(())
}
