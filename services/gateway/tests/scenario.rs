//! End to end, as a web app uses the mesh: a session created over REST with an agent the spawner
//! starts under its harness, messages in several delivery modes, a permission approved over
//! REST, everything watched over SSE.

mod common;

use common::{SseReader, gateway, mesh, spawner};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::collections::HashMap;

#[tokio::test]
async fn a_session_with_a_spawned_agent_is_driven_and_watched_through_the_gateway() {
    let m = mesh().await;
    let surfaced = std::env::temp_dir().join(format!("scenario-agent-{}.log", common::free_port()));
    let _spawner = spawner(&m, &surfaced).await;
    let g = gateway(&m, &[]).await;
    // Watching from the start of the log: every frame of the run, in order.
    let mut sse = SseReader::new(g.sse("/api/v1/events/sse?offset=0", None).await);

    let (status, created) = g
        .post(
            "/api/v1/sessions",
            json!({"cli": "claude", "task": "hello", "title": "scenario"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let session = created["sessionId"].as_str().unwrap().to_string();
    let agent = created["agentId"].as_str().unwrap().to_string();

    let send = |message: &str, mode: &str| {
        let (g, session, body) = (&g, &session, json!({ "message": message, "mode": mode }));
        async move {
            let (status, sent) = g.post(&format!("/api/v1/sessions/{session}/messages"), body).await;
            assert_eq!(status, StatusCode::OK, "{sent}");
            sent["deliveryIds"][0].as_str().unwrap().to_string()
        }
    };
    let deliveries = [
        send("first", "immediate").await,
        // Typed when the agent next calls a tool, which the following message makes it do.
        send("after the tool", "next-tool-call").await,
        send("tool Read src/lib.rs", "on-idle").await,
        send("ask-permission Bash rm -rf build", "on-idle").await,
    ];

    // The permission request waits for a human; approve it over REST.
    let request_id = relay_testkit::wait_for(|| async {
        let (_, list) = g.get(&format!("/api/v1/agents/{agent}/permissions")).await;
        list["permissions"][0]["requestId"].as_str().map(str::to_string)
    })
    .await;
    let (status, decided) = g
        .post(
            &format!("/api/v1/agents/{agent}/permissions/{request_id}/approve"),
            json!({"reason": "scenario"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{decided}");
    assert_eq!(decided["harnessNotified"], true, "{decided}");

    // Over SSE: every delivery delivered, the agent's output for each message, the permission
    // asked and resolved, and the agent granted it. (Usage: a TUI shows none; the structured
    // paths report it, tests/real_clis.rs in agent-harness.)
    let mut delivered = Vec::new();
    let mut output = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut last = 0;
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    let all_delivered = |d: &Vec<String>| deliveries.iter().all(|id| d.contains(id));
    // permission.resolved comes from the permission manager and the agent's "Permission granted"
    // from its harness: two producers, so either may be committed first.
    // A delivery is reported once typed; what the agent printed for it may follow.
    while !(all_delivered(&delivered)
        && output.iter().any(|l: &String| l.contains("Permission granted"))
        && output.iter().any(|l: &String| l == "Received: after the tool")
        && seen.contains_key("permission.resolved"))
    {
        let f = tokio::time::timeout_at(deadline, sse.next())
            .await
            .unwrap_or_else(|_| panic!("the run did not complete within 60 s: {seen:?} {output:?}"));
        assert!(f.id > last, "frames in seq order, no repeats");
        last = f.id;
        *seen.entry(f.event.clone()).or_default() += 1;
        let data: &Value = &f.data;
        match f.event.as_str() {
            "delivery.delivered" => delivered.push(data["payload"]["deliveryId"].as_str().unwrap().to_string()),
            "terminal.output" => output.push(data["payload"]["text"].as_str().unwrap().to_string()),
            _ => {}
        }
    }
    // The task ("hello") went out as a delivery of its own, before ours.
    assert_eq!(
        delivered.len(),
        deliveries.len() + 1,
        "each delivery delivered once: {delivered:?}"
    );
    for line in ["Received: hello", "Received: first", "Received: after the tool"] {
        assert!(output.iter().any(|l| l == line), "{line:?} not in {output:?}");
    }
    let tool_at = output.iter().position(|l| l.contains("Read(src/lib.rs)")).unwrap();
    let after_at = output.iter().position(|l| l == "Received: after the tool").unwrap();
    assert!(
        tool_at < after_at,
        "the next-tool-call message waited for the tool call: {output:?}"
    );
    for event in ["permission.requested", "permission.resolved", "session.created"] {
        assert_eq!(seen.get(event), Some(&1), "{event}: {seen:?}");
    }

    // Ending the session stops the agent.
    let (status, _) = g
        .send(reqwest::Method::DELETE, &format!("/api/v1/sessions/{session}"), None)
        .await;
    assert_eq!(status, StatusCode::OK);
    relay_testkit::wait_for(|| async {
        let (_, s) = g.get(&format!("/api/v1/sessions/{session}")).await;
        (s["agents"][0]["status"] == "disposed").then_some(())
    })
    .await;
}
