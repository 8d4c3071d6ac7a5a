//! The gateway's AG-UI endpoint (`POST /api/v1/agents/{name}/agui`) driven by the official
//! `@ag-ui/client` 1.0 `HttpAgent` from npm (`js/agui.test.mjs`): a turn of a fake agent under
//! a PTY with a tool call, then a permission request as an interrupt, resumed with an approval.

mod common;
use serde_json::json;
use std::path::PathBuf;

#[tokio::test]
async fn the_ag_ui_client_runs_a_tool_call_turn_and_resumes_an_approval_interrupt() {
    let js = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("js");
    assert!(
        js.join("node_modules/@ag-ui/client").exists(),
        "run `make interop-deps` (scripts/install-interop-deps.sh)"
    );
    let m = common::mesh().await;
    let log = std::env::temp_dir().join(format!("agui-surfaced-{}.log", common::free_port()));
    let _spawner = common::spawner(&m, &log).await;
    let admin = "agui-admin-secret";
    let g = common::gateway(&m, &[("RELAY_API_TOKEN", admin)]).await;
    let (status, made) = g
        .post("/api/v1/keys", json!({"name": "ag-ui operator", "role": "operator"}))
        .await;
    assert!(status.is_success(), "{made}");
    let token = made["token"].as_str().unwrap().to_string();
    let (status, created) = g
        .post("/api/v1/sessions", json!({"cli": "claude", "agent": "agui-worker"}))
        .await;
    assert!(status.is_success(), "{created}");

    // Garbage is refused before anything is sent to the agent.
    let (status, refused) = common::Bearer::new(&g, &token)
        .post("/api/v1/agents/agui-worker/agui", json!({"threadId": 1}))
        .await;
    assert_eq!(status, 400, "{refused}");

    let out = common::run_script(
        tokio::process::Command::new("node")
            .arg(js.join("agui.test.mjs"))
            .env("BASE", &g.base)
            .env("TOKEN", &token)
            .env("AGENT", "agui-worker"),
    )
    .await;
    assert!(out.contains("ag-ui client: all steps passed"), "{out}");
    // The approval went through the permission manager, as the console's would.
    let (_, permissions) = g.get("/api/v1/permissions?status=approved").await;
    assert_eq!(permissions["permissions"].as_array().unwrap().len(), 1, "{permissions}");
}
