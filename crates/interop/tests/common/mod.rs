//! The gateway tests' mesh (every bus service on a private NATS and a fresh database, the
//! gateway binary on a free port), shared rather than copied.
#![allow(dead_code, unused_imports)]

#[path = "../../../../services/gateway/tests/common/mod.rs"]
mod gateway_common;
pub use gateway_common::*;

/// The repository's root (the SDKs and their scripts are under `sdks/`).
pub fn repo() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs a test client script (another ecosystem's official client against the mesh) to its end,
/// within 5 minutes; its standard output, after asserting it succeeded. What it printed is
/// shown also when it has to be killed, so a script that hangs says where.
pub async fn run_script(cmd: &mut tokio::process::Command) -> String {
    use tokio::io::AsyncReadExt;
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let stdout = tokio::spawn(async move {
        let mut b = Vec::new();
        let _ = out.read_to_end(&mut b).await;
        String::from_utf8_lossy(&b).into_owned()
    });
    let stderr = tokio::spawn(async move {
        let mut b = Vec::new();
        let _ = err.read_to_end(&mut b).await;
        String::from_utf8_lossy(&b).into_owned()
    });
    let status = tokio::time::timeout(std::time::Duration::from_secs(300), child.wait()).await;
    if status.is_err() {
        let _ = child.kill().await;
    }
    let (stdout, stderr) = (stdout.await.unwrap(), stderr.await.unwrap());
    println!("{stdout}");
    eprintln!("{stderr}");
    let status = status.unwrap_or_else(|_| panic!("{cmd:?} did not end within 5 minutes:\n{stdout}\n{stderr}"));
    assert!(status.unwrap().success(), "{cmd:?} failed:\n{stdout}\n{stderr}");
    stdout
}
