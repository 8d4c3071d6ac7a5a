//! The gateway's MCP server (`/api/v1/mcp`, Streamable HTTP, stateless) driven by the official
//! MCP Python SDK (`mcp` from PyPI): `py/mcp_client.py`.

mod common;
use serde_json::json;
use std::path::PathBuf;

#[tokio::test]
async fn an_mcp_client_lists_tools_spawns_an_agent_and_approves_its_permission_as_its_key_allows() {
    let python = relay_testkit::python_venv("mcp-2.3.0", &["mcp==2.3.0"]);
    let m = common::mesh().await;
    let log = std::env::temp_dir().join(format!("mcp-surfaced-{}.log", common::free_port()));
    let _spawner = common::spawner(&m, &log).await;
    let admin = "mcp-admin-secret";
    let g = common::gateway(&m, &[("RELAY_API_TOKEN", admin)]).await;
    let mut keys = Vec::new();
    for role in ["operator", "viewer"] {
        let (status, made) = g
            .post("/api/v1/keys", json!({"name": format!("mcp {role}"), "role": role}))
            .await;
        assert!(status.is_success(), "{made}");
        keys.push(made["token"].as_str().unwrap().to_string());
    }

    // Without a key the endpoint is closed, like the rest of /api/v1.
    let anonymous = g
        .http
        .post(g.url("/api/v1/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);

    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("py/mcp_client.py");
    let out = common::run_script(
        tokio::process::Command::new(python)
            .arg(script)
            .env("BASE", &g.base)
            .env("OPERATOR", &keys[0])
            .env("VIEWER", &keys[1]),
    )
    .await;
    assert!(out.contains("mcp client: all steps passed"), "{out}");
}
