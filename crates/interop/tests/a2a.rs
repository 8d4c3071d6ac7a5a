//! The gateway's A2A endpoints (protocol 1.0, JSON-RPC) driven by the official Python
//! `a2a-sdk` from PyPI (`py/a2a_client.py`): cards, a streamed task dropped mid-way and resumed
//! by seq without loss or repeats, a permission as input-required, cancel, push notifications
//! posted to a receiver.

mod common;
use serde_json::json;
use std::path::PathBuf;

#[tokio::test]
async fn the_a2a_client_streams_a_task_resubscribes_by_seq_without_loss_answers_input_required_and_gets_pushes() {
    let python = relay_testkit::python_venv("a2a-sdk-1.3.0", &["a2a-sdk==1.3.0"]);
    // Push notifications are posted by automation, here to a receiver on loopback.
    let allow = [("RELAY_WEBHOOKS__ALLOW_PRIVATE", "true")];
    let m = common::mesh_with(&allow).await;
    let _automation =
        relay_testkit::ServiceProcess::spawn(&relay_testkit::bin_path("automation"), &m.nats, &m.db, &allow);
    relay_testkit::wait_for_instances(&m.client, "automation", 1).await;
    let log = std::env::temp_dir().join(format!("a2a-surfaced-{}.log", common::free_port()));
    let _spawner = common::spawner(&m, &log).await;
    let admin = "a2a-admin-secret";
    let g = common::gateway(&m, &[("RELAY_API_TOKEN", admin)]).await;
    let (status, made) = g
        .post("/api/v1/keys", json!({"name": "a2a operator", "role": "operator"}))
        .await;
    assert!(status.is_success(), "{made}");
    let token = made["token"].as_str().unwrap().to_string();
    let (status, created) = g
        .post("/api/v1/sessions", json!({"cli": "claude", "agent": "a2a-worker"}))
        .await;
    assert!(status.is_success(), "{created}");

    // The cards are behind the key like the rest of /api/v1.
    let anonymous = g
        .http
        .get(g.url("/api/v1/a2a/agents/a2a-worker/.well-known/agent-card.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);

    let out = common::run_script(
        tokio::process::Command::new(python)
            .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("py/a2a_client.py"))
            .env("BASE", &g.base)
            .env("TOKEN", &token)
            .env("ADMIN", admin)
            .env("AGENT", "a2a-worker"),
    )
    .await;
    assert!(out.contains("a2a client: all steps passed"), "{out}");
}
