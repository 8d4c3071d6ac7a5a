//! The Python and TypeScript client SDKs (`sdks/python`, `sdks/typescript`) against the real
//! mesh: each runs the README's quick start as a script (`sdks/python/tests/quick_start.py`,
//! `sdks/typescript/test/quick-start.mjs`): create a session with a spawned (fake) agent, send
//! it messages, follow its events while a proxy cuts the connection under the stream, approve a
//! permission, read the costs. A third test fails when the generated code is stale.

mod common;

use common::{Gateway, Mesh, gateway};
use relay_testkit::ServiceProcess;
use serde_json::json;

/// The mesh for the quick start: a spawner whose `claude` is the fake agent, whose harnesses
/// read its token lines as usage (priced as Sonnet); the gateway with auth on; and an
/// operator key for the SDK.
async fn quick_start_mesh() -> (Mesh, ServiceProcess, Gateway, String) {
    let config = std::env::temp_dir().join(format!("sdk-mesh-{}.toml", common::free_port()));
    let fake = relay_testkit::bin_path("fake-agent");
    let toml = format!(
        "[spawner.commands]\nclaude = [{fake:?}, \"--style\", \"claude\"]\n\n[harness.patterns.claude]\ntokens = '(\\d[\\d,]*)\\s*sent.*?(\\d[\\d,]*)\\s*received'\n\n\
         [costs]\ndefault_model = \"claude-sonnet-4-5\"\n"
    );
    std::fs::write(&config, toml).unwrap();
    let env = [("RELAY_CONFIG", config.to_str().unwrap())];
    let m = common::mesh_with(&env).await;
    let spawner = ServiceProcess::spawn(&relay_testkit::bin_path("agent-spawner"), &m.nats, &m.db, &env);
    relay_testkit::wait_for_instances(&m.client, "agent-spawner", 1).await;
    let g = gateway(&m, &[("RELAY_API_TOKEN", "sdk-admin-secret")]).await;
    let (status, made) = g
        .post("/api/v1/keys", json!({"name": "sdk quick start", "role": "operator"}))
        .await;
    assert!(status.is_success(), "{made}");
    let key = made["token"].as_str().unwrap().to_string();
    (m, spawner, g, key)
}

/// Runs a script from the repository's root and asserts it said `expect`.
async fn run(mut cmd: tokio::process::Command, expect: &str) {
    let stdout = common::run_script(cmd.current_dir(common::repo())).await;
    assert!(stdout.contains(expect), "{stdout}");
}

#[tokio::test]
async fn the_python_sdk_runs_the_quick_start_and_resumes_its_stream_without_gaps() {
    // What sdks/python/pyproject.toml depends on, pinned; the SDK itself from the work tree.
    let python = relay_testkit::python_venv(
        "relay-mesh-sdk-httpx-0.28.1-attrs-26.1.0",
        &[
            "httpx==0.28.1",
            "attrs==26.1.0",
            "anyio==4.16.0",
            "certifi==2026.10.19.post1",
            "h11==0.16.0",
            "httpcore==1.0.9",
            "idna==3.20",
            "typing_extensions==4.16.0",
        ],
    );
    let (_m, _spawner, g, key) = quick_start_mesh().await;
    let mut cmd = tokio::process::Command::new(python);
    cmd.arg("sdks/python/tests/quick_start.py")
        .env("PYTHONPATH", common::repo().join("sdks/python"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("BASE", &g.base)
        .env("TOKEN", &key);
    run(cmd, "python sdk quick start: all steps passed").await;
}

#[tokio::test]
async fn the_typescript_sdk_runs_the_quick_start_and_resumes_its_stream_without_gaps() {
    let sdk = common::repo().join("sdks/typescript");
    assert!(
        sdk.join("node_modules/.bin/tsc").exists(),
        "sdks/typescript/node_modules is missing: run `make interop-deps`"
    );
    // The package as it is published: compiled by its pinned tsc into dist/.
    let mut tsc = tokio::process::Command::new(sdk.join("node_modules/.bin/tsc"));
    tsc.args(["-p", "sdks/typescript/tsconfig.json"]);
    run(tsc, "").await;

    let (_m, _spawner, g, key) = quick_start_mesh().await;
    let mut cmd = tokio::process::Command::new("node");
    cmd.arg("sdks/typescript/test/quick-start.mjs")
        .env("BASE", &g.base)
        .env("TOKEN", &key);
    run(cmd, "typescript sdk quick start: all steps passed").await;
}

#[test]
fn the_checked_in_sdk_code_is_what_the_generators_make_of_the_openapi_document() {
    // Regenerates both SDKs into a scratch directory with the pinned generators and diffs.
    let out = std::process::Command::new("sdks/generate.sh")
        .arg("--check")
        .current_dir(common::repo())
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success(),
        "the SDKs are stale: run `make sdks`\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("the generated code matches"), "{stdout}");
}
