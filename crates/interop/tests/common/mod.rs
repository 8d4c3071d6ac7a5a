//! The gateway tests' mesh (every bus service on a private NATS and a fresh database, the
//! gateway binary on a free port), shared rather than copied.
#![allow(dead_code, unused_imports)]

#[path = "../../../../services/gateway/tests/common/mod.rs"]
mod gateway_common;
pub use gateway_common::*;

/// Runs a test client script (another ecosystem's official client against the mesh) to its end,
/// within 5 minutes; its standard output, after asserting it succeeded.
pub async fn run_script(cmd: &mut tokio::process::Command) -> String {
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let run = cmd.spawn().expect("the script starts");
    let out = tokio::time::timeout(std::time::Duration::from_secs(300), run.wait_with_output())
        .await
        .expect("the script ends within 5 minutes")
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    println!("{stdout}");
    eprintln!("{stderr}");
    assert!(out.status.success(), "the script failed:\n{stdout}\n{stderr}");
    stdout
}
