//! Agents' handles and the agent directory (`agent.list`, `agent.get`) over the wire.

mod common;
use relay_contracts::{Caller, ErrorCode, RequestContext, WireError};
use serde_json::{Value, json};

fn adapter(name: &str) -> Value {
    json!({"kind": "adapter", "adapterName": name})
}

fn releasable() -> Value {
    json!({"messaging": {"receive": true}, "delivery": {"modes": ["immediate"]},
           "events": {"emits": ["status.changed"]}, "lifecycle": {"release": true}})
}

/// A call as a person's key of `workspace` through the gateway (whose headers services trust).
async fn as_key(m: &common::Mesh, workspace: &str, subject: &str, body: Value) -> Result<Value, WireError> {
    let ctx = RequestContext::new(Caller::Operator("k-test".into()), workspace);
    relay_bus::context::act_as(ctx, relay_testkit::call_json(&m.client, subject, body)).await
}

#[tokio::test]
async fn handles_are_unique_among_a_workspaces_live_agents_and_free_again_once_released() {
    let m = common::start(1).await;
    let id = common::create(&m).await;
    let attach = |body: Value| {
        let mut body = body;
        body["sessionId"] = json!(id);
        body
    };
    // Defaults come from the adapter's name, numbered when taken.
    let first = m
        .ok("session.agent.attach", attach(json!({"agent": adapter("claude")})))
        .await;
    assert_eq!(first["handle"], "claude");
    let second = m
        .ok("session.agent.attach", attach(json!({"agent": adapter("claude")})))
        .await;
    assert_eq!(second["handle"], "claude-2");
    let bob = m
        .ok(
            "session.agent.attach",
            attach(json!({"agent": adapter("codex"), "handle": "@bob", "capabilities": releasable()})),
        )
        .await;
    assert_eq!(bob["handle"], "bob");

    // Taken, or not a handle: refused, nothing attached.
    let taken = m
        .err(
            "session.agent.attach",
            attach(json!({"agent": adapter("gemini"), "handle": "bob"})),
            "conflict",
        )
        .await;
    assert!(taken.error.message.contains("@bob"), "{taken:?}");
    // Handles are case-insensitive.
    m.err(
        "session.agent.attach",
        attach(json!({"agent": adapter("gemini"), "handle": "BOB"})),
        "conflict",
    )
    .await;
    for bad in ["", "-bob", "bob smith", "a-name-longer-than-24-chars"] {
        m.err(
            "session.agent.attach",
            attach(json!({"agent": adapter("gemini"), "handle": bad})),
            "invalid_request",
        )
        .await;
    }
    let listed = m.ok("agent.list", json!({})).await;
    assert_eq!(listed["total"], 3, "{listed}");

    // By handle (with or without @) or by id; an unknown handle is named.
    let by_handle = m.ok("agent.get", json!({"agent": "@bob"})).await;
    assert_eq!(by_handle["agentId"], bob["agentId"]);
    assert_eq!(
        m.ok("agent.get", json!({"agent": "bob"})).await["agentId"],
        bob["agentId"]
    );
    let by_id = m.ok("agent.get", json!({"agent": first["agentId"]})).await;
    assert_eq!(by_id["handle"], "claude");
    let ghost = m.err("agent.get", json!({"agent": "@ghost"}), "not_found").await;
    assert!(ghost.error.message.contains("@ghost"), "{ghost:?}");

    // Released, bob's handle is free for another agent; the directory keeps both.
    m.ok(
        "session.agent.release",
        json!({"sessionId": id, "agentId": bob["agentId"]}),
    )
    .await;
    let new_bob = m
        .ok(
            "session.agent.attach",
            attach(json!({"agent": adapter("gemini"), "handle": "bob"})),
        )
        .await;
    assert_ne!(new_bob["agentId"], bob["agentId"]);
    assert_eq!(
        m.ok("agent.get", json!({"agent": "@bob"})).await["agentId"],
        new_bob["agentId"]
    );
    let live = m.ok("agent.list", json!({})).await;
    assert_eq!(live["total"], 3, "{live}");
    let all = m.ok("agent.list", json!({"status": "all"})).await;
    assert_eq!(all["total"], 4, "{all}");
    let handles: Vec<&str> = live["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["handle"].as_str().unwrap())
        .collect();
    assert_eq!(handles.len(), 3);
    for h in ["claude", "claude-2", "bob"] {
        assert!(handles.contains(&h), "{handles:?}");
    }
    m.err("agent.list", json!({"status": "dead"}), "invalid_request").await;
}

#[tokio::test]
async fn each_workspace_has_its_own_handles_and_sees_only_its_own_agents() {
    let m = common::start(1).await;
    m.ok("workspace.create", json!({"name": "acme"})).await;
    let here = common::create(&m).await;
    let there = as_key(&m, "acme", "session.create", json!({})).await.unwrap()["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let bob_here = m
        .ok(
            "session.agent.attach",
            json!({"sessionId": here, "agent": adapter("claude"), "handle": "bob"}),
        )
        .await;
    // The same handle in another workspace is another agent.
    let bob_there = m
        .ok(
            "session.agent.attach",
            json!({"sessionId": there, "agent": adapter("claude"), "handle": "bob"}),
        )
        .await;
    assert_ne!(bob_here["agentId"], bob_there["agentId"]);

    let mine = as_key(&m, "acme", "agent.list", json!({})).await.unwrap();
    assert_eq!(mine["total"], 1, "{mine}");
    assert_eq!(mine["agents"][0]["agentId"], bob_there["agentId"]);
    let got = as_key(&m, "acme", "agent.get", json!({"agent": "@bob"})).await.unwrap();
    assert_eq!(got["agentId"], bob_there["agentId"]);
    let got = as_key(&m, "default", "agent.get", json!({"agent": "@bob"}))
        .await
        .unwrap();
    assert_eq!(got["agentId"], bob_here["agentId"]);
    // Another workspace's agent by id is not found, as an unknown one.
    let hidden = as_key(&m, "acme", "agent.get", json!({"agent": bob_here["agentId"]}))
        .await
        .unwrap_err();
    assert_eq!(hidden.code(), ErrorCode::NotFound);
    // The mesh's own services see every workspace.
    assert_eq!(m.ok("agent.list", json!({})).await["total"], 2);
}
