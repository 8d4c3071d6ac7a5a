//! The proto files must compile with protoc, not only with protox (what build.rs uses): a client
//! author generates code with protoc, which is stricter (an rpc named like the message it
//! returns hid that message from protoc, while protox accepted it). protoc here is PyPI's
//! grpcio-tools, pinned; `make interop-deps` (scripts/install-interop-deps.sh) installs it into
//! the same venv when missing.

use prost::Message as _;
use prost_types::FileDescriptorSet;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Keep in step with scripts/install-interop-deps.sh.
const GRPCIO_TOOLS: &str = "grpcio-tools==1.85.1";

fn proto_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../proto")
}

/// Every .proto file under `dir`, at any depth, relative to the proto root.
fn proto_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            proto_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "proto") {
            out.push(path.strip_prefix(proto_root()).unwrap().to_path_buf());
        }
    }
}

/// Every message (nested ones included) and rpc of a descriptor set, by full name.
fn names(fds: &FileDescriptorSet) -> BTreeSet<String> {
    fn messages(prefix: &str, msgs: &[prost_types::DescriptorProto], out: &mut BTreeSet<String>) {
        for m in msgs {
            let name = format!("{prefix}.{}", m.name());
            messages(&name, &m.nested_type, out);
            out.insert(name);
        }
    }
    let mut out = BTreeSet::new();
    for file in fds.file.iter().filter(|f| f.package().starts_with("relay.")) {
        messages(file.package(), &file.message_type, &mut out);
        for s in &file.service {
            for m in &s.method {
                out.insert(format!(
                    "rpc {}.{}.{}({}) returns ({})",
                    file.package(),
                    s.name(),
                    m.name(),
                    m.input_type(),
                    m.output_type()
                ));
            }
        }
    }
    out
}

#[test]
fn every_proto_file_compiles_with_protoc_and_its_python_stubs_import() {
    let python = relay_testkit::python_venv("grpcio-tools-1.85.1", &[GRPCIO_TOOLS]);
    let root = proto_root();
    let mut files = Vec::new();
    proto_files(&root, &mut files);
    files.sort();
    assert!(files.len() >= 5, "no proto files found under {}", root.display());

    let out = std::env::temp_dir().join(format!("relay-protoc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let descriptors = out.join("relay.pb");
    let run = Command::new(&python)
        .args(["-m", "grpc_tools.protoc", "--include_imports"])
        .arg(format!("-I{}", root.display()))
        .arg(format!("--python_out={}", out.display()))
        .arg(format!("--grpc_python_out={}", out.display()))
        .arg(format!("--descriptor_set_out={}", descriptors.display()))
        .args(&files)
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "protoc ({GRPCIO_TOOLS}) refuses proto/: {}",
        String::from_utf8_lossy(&run.stderr)
    );

    // The generated Python modules load (each service stub with them).
    let modules: Vec<String> = files
        .iter()
        .map(|f| f.with_extension("").to_string_lossy().replace('/', ".") + "_pb2_grpc")
        .collect();
    let import = Command::new(&python)
        .arg("-c")
        .arg("import importlib, sys\nfor m in sys.argv[1:]: importlib.import_module(m)")
        .args(&modules)
        .env("PYTHONPATH", &out)
        .output()
        .unwrap();
    assert!(
        import.status.success(),
        "the stubs protoc generated do not import: {}",
        String::from_utf8_lossy(&import.stderr)
    );

    // protoc and protox (what the gateway serves) read the same messages and rpcs.
    let protoc = FileDescriptorSet::decode(std::fs::read(&descriptors).unwrap().as_slice()).unwrap();
    let protox = FileDescriptorSet::decode(relay_proto::FILE_DESCRIPTOR_SET).unwrap();
    assert_eq!(names(&protoc), names(&protox));
    let _ = std::fs::remove_dir_all(&out);
}
