//! The operator console in a real browser: this test starts the mesh, a spawner of fake agents
//! and the gateway (auth on), makes an operator and a viewer key, and runs the browser steps in
//! `console/e2e/console.test.mjs` — Debian's chromium driven by playwright-core, which
//! `make console-deps` (part of `make test`) installs when missing.

mod common;
use common::gateway;
use relay_testkit::ServiceProcess;
use serde_json::json;
use std::path::PathBuf;
use std::process::Stdio;

#[tokio::test]
async fn the_console_signs_in_follows_a_session_live_and_decides_in_the_inbox_in_a_real_browser() {
    let (chromium, modules) = relay_testkit::console_browser();
    // One configuration for the mesh: the fake agent in Claude Code's style, whose harnesses
    // (which read the spawner's configuration) also read its token lines as usage, priced as
    // Sonnet, under a one-cent budget per session.
    let config = std::env::temp_dir().join(format!("console-mesh-{}.toml", common::free_port()));
    let fake = relay_testkit::bin_path("fake-agent");
    let toml = format!(
        "[spawner.commands]\nclaude = [{fake:?}, \"--style\", \"claude\"]\n\n[harness.patterns.claude]\ntokens = '(\\d[\\d,]*)\\s*sent.*?(\\d[\\d,]*)\\s*received'\n\n\
         [costs]\ndefault_model = \"claude-sonnet-4-5\"\n\n[[costs.budgets]]\nname = \"a-cent-a-session\"\nscope = \"session\"\nlimit_usd = 0.01\n"
    );
    std::fs::write(&config, toml).unwrap();
    let env = [("RELAY_CONFIG", config.to_str().unwrap())];
    let m = common::mesh_with(&env).await;
    let _spawner = ServiceProcess::spawn(&relay_testkit::bin_path("agent-spawner"), &m.nats, &m.db, &env);
    relay_testkit::wait_for_instances(&m.client, "agent-spawner", 1).await;
    let admin = "console-admin-secret";
    let g = gateway(&m, &[("RELAY_API_TOKEN", admin)]).await;
    let mut keys = Vec::new();
    for role in ["operator", "viewer"] {
        let (status, made) = g
            .post("/api/v1/keys", json!({"name": format!("console {role}"), "role": role}))
            .await;
        assert!(status.is_success(), "{made}");
        keys.push(made["token"].as_str().unwrap().to_string());
    }

    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("console/e2e/console.test.mjs");
    let mut node = tokio::process::Command::new("node");
    node.arg(&script)
        .env("BASE", &g.base)
        .env("ADMIN", admin)
        .env("OPERATOR_KEY", &keys[0])
        .env("VIEWER_KEY", &keys[1])
        .env("PLAYWRIGHT", &modules)
        .env("CHROMIUM", &chromium)
        // `RELAY_CONSOLE_SCREENSHOTS=docs/console` refreshes the docs' pictures.
        .env(
            "SCREENSHOTS",
            std::env::var("RELAY_CONSOLE_SCREENSHOTS").unwrap_or_default(),
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let run = node.spawn().expect("node runs");
    let out = tokio::time::timeout(std::time::Duration::from_secs(300), run.wait_with_output())
        .await
        .expect("the browser steps end within 5 minutes")
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    println!("{stdout}");
    eprintln!("{stderr}");
    assert!(out.status.success(), "the browser steps failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("console e2e: all steps passed"), "{stdout}");
}
