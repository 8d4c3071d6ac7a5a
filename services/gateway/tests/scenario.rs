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

/// Every event type a realistic run logs is in the event catalogue, so its payload is checked
/// when it is appended: two spawned agents (the fake claude) driven over REST with a tool call,
/// a permission approved, a relay message from one to the other, a delivery cancelled, a
/// consensus voted on, a key made and the sessions closed. The seed 000
/// names are where the seed puts them: a relay message logs `message.sent` once, on the
/// sender's session, and the recipient's harness logs `message.received`.
#[tokio::test]
async fn every_event_type_a_realistic_run_logs_is_in_the_catalogue() {
    let m = mesh().await;
    let surfaced = std::env::temp_dir().join(format!("catalogue-agent-{}.log", common::free_port()));
    let _spawner = spawner(&m, &surfaced).await;
    let g = gateway(&m, &[]).await;
    let spawn = |handle: &'static str| {
        let g = &g;
        async move {
            let body = json!({"cli": "claude", "agent": handle, "task": "hello", "title": handle});
            let (status, created) = g.post("/api/v1/sessions", body).await;
            assert_eq!(status, StatusCode::CREATED, "{created}");
            let id = |k: &str| created[k].as_str().unwrap().to_string();
            (id("sessionId"), id("agentId"))
        }
    };
    let (alice_session, alice) = spawn("alice").await;
    let (bob_session, bob) = spawn("bob").await;

    // Work, and a permission a person approves.
    for message in ["tool Read src/lib.rs", "ask-permission Bash rm -rf build"] {
        let body = json!({"message": message, "mode": "on-idle"});
        let (status, sent) = g
            .post(&format!("/api/v1/sessions/{alice_session}/messages"), body)
            .await;
        assert_eq!(status, StatusCode::OK, "{sent}");
    }
    let request_id = relay_testkit::wait_for(|| async {
        let (_, list) = g.get(&format!("/api/v1/agents/{alice}/permissions")).await;
        list["permissions"][0]["requestId"].as_str().map(str::to_string)
    })
    .await;
    let (status, decided) = g
        .post(
            &format!("/api/v1/agents/@alice/permissions/{request_id}/approve"),
            json!({"reason": "fine"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{decided}");

    // Alice sends bob a relay message, as her harness does.
    let alice_harness = relay_testkit::AsAgent::connect(&m.nats, &alice).await;
    let sent = alice_harness
        .ok("message.send", json!({"to": "@bob", "text": "the build is green"}))
        .await;
    let relay_message = sent["messageId"].as_str().unwrap().to_string();
    let bob_delivery = sent["recipients"][0]["deliveryId"].as_str().unwrap().to_string();

    // A message held while bob is paused, then cancelled.
    let (status, _) = g.post("/api/v1/agents/@bob/pause", json!({})).await;
    assert_eq!(status, StatusCode::OK);
    let (_, held) = g
        .post(
            &format!("/api/v1/sessions/{bob_session}/messages"),
            json!({"message": "never mind", "mode": "on-idle"}),
        )
        .await;
    let held = held["deliveryIds"][0].as_str().unwrap().to_string();
    let (status, cancelled) = g
        .post(&format!("/api/v1/deliveries/{held}/cancel"), json!({"reason": "stale"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{cancelled}");
    g.post("/api/v1/agents/@bob/resume", json!({})).await;

    // A vote, a key.
    let (status, proposal) = g
        .post(
            "/api/v1/consensus",
            json!({"question": "Ship?", "options": ["ship", "wait"], "to": ["@alice", "@bob"], "quorum": 1}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{proposal}");
    let vote = json!({"proposalId": proposal["proposalId"], "choice": "ship"});
    alice_harness.ok("consensus.vote", vote).await;
    let (status, key) = g.post("/api/v1/keys", json!({"name": "ci", "role": "viewer"})).await;
    assert_eq!(status, StatusCode::CREATED, "{key}");
    for session in [&alice_session, &bob_session] {
        let (status, _) = g
            .send(reqwest::Method::DELETE, &format!("/api/v1/sessions/{session}"), None)
            .await;
        assert_eq!(status, StatusCode::OK);
    }

    // The whole log, once what each producer writes last is in it.
    let wanted = [
        "message.sent",
        "message.received",
        "session.message.received",
        "delivery.created",
        "delivery.cancelled",
        "consensus.voted",
        "audit.recorded",
        "permission.resolved",
        "session.agent.removed",
    ];
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    let log = loop {
        let mut events: Vec<Value> = Vec::new();
        let mut cursor = 0;
        loop {
            let (_, page) = g.get(&format!("/api/v1/events?limit=10000&cursor={cursor}")).await;
            events.extend(page["events"].as_array().cloned().unwrap_or_default());
            match page["nextCursor"].as_i64() {
                Some(next) if next > cursor => cursor = next,
                _ => break,
            }
        }
        let received = events
            .iter()
            .any(|e| e["type"] == "message.received" && e["payload"]["deliveryId"] == bob_delivery.as_str());
        let missing: Vec<&str> = wanted
            .iter()
            .copied()
            .filter(|t| !events.iter().any(|e| e["type"] == *t))
            .collect();
        if received && missing.is_empty() {
            break events;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not logged within 60 s: {missing:?} (bob's harness received the message: {received})"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    let mut types: Vec<&str> = log.iter().map(|e| e["type"].as_str().unwrap()).collect();
    types.sort();
    types.dedup();
    let uncatalogued: Vec<&&str> = types
        .iter()
        .filter(|t| relay_contracts::events::lookup(t).is_none())
        .collect();
    assert!(
        uncatalogued.is_empty(),
        "logged but not in the catalogue (payloads never checked): {uncatalogued:?} of {types:?}"
    );

    // Seed 000's names, where the seed says: the relay message was sent once, by alice's
    // session, and received by bob's harness.
    let of_message = |t: &str| -> Vec<&Value> {
        log.iter()
            .filter(|e| e["type"] == t && e["payload"]["messageId"] == relay_message.as_str())
            .collect()
    };
    let sent = of_message("message.sent");
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0]["sessionId"], alice_session.as_str(), "{sent:?}");
    assert_eq!(sent[0]["agentId"], alice.as_str(), "{sent:?}");
    // (The harness names the message as its delivery brought it: by the delivery's id.)
    let received: Vec<&Value> = log
        .iter()
        .filter(|e| e["type"] == "message.received" && e["payload"]["deliveryId"] == bob_delivery.as_str())
        .collect();
    assert_eq!(received.len(), 1, "{received:?}");
    assert_eq!(received[0]["agentId"], bob.as_str(), "{received:?}");
    assert_eq!(received[0]["sessionId"], bob_session.as_str(), "{received:?}");
    assert!(
        !types.contains(&"session.message.sent"),
        "one name for one fact: {types:?}"
    );
}
