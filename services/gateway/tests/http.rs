//! The gateway over real HTTP, in front of the real mesh (registry, event log, delivery runner,
//! permission manager, cost aggregator) on a private NATS and a fresh database.

use futures::StreamExt;
use relay_testkit::wait_for;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::time::Duration;

mod common;
use common::{Frame, SseReader, append, free_port, gateway, mesh};

/// The error envelope every failure carries.
fn code(body: &Value) -> &str {
    body["error"]["code"]
        .as_str()
        .unwrap_or_else(|| panic!("no error envelope in {body}"))
}

#[tokio::test]
async fn session_routes_answer_with_the_seed_status_codes() {
    let m = mesh().await;
    let g = gateway(&m, &[]).await;

    let (st, created) = g
        .post("/api/v1/sessions", json!({"agent": "Worker1", "title": "demo"}))
        .await;
    assert_eq!(st, StatusCode::CREATED, "{created}");
    let id = created["sessionId"].as_str().unwrap().to_string();
    assert_eq!(created["agentName"], "Worker1");
    assert_eq!(created["status"], "active");

    let (st, one) = g.get(&format!("/api/v1/sessions/{id}")).await;
    assert_eq!((st, one["title"].as_str()), (StatusCode::OK, Some("demo")));
    let (st, list) = g.get("/api/v1/sessions?status=active&limit=10").await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(list["total"], 1);

    let (st, body) = g
        .post(&format!("/api/v1/sessions/{id}/messages"), json!({"message": "hello"}))
        .await;
    // A well-formed message the session's state refuses (no agent attached): a conflict.
    assert_eq!(
        (st, code(&body)),
        (StatusCode::CONFLICT, "conflict"),
        "no agent to send to yet"
    );
    relay_testkit::expect_ok(
        &m.client,
        "session.agent.attach",
        json!({"sessionId": id, "agent": {"kind": "fake", "adapterId": "fake", "adapterName": "fake"}}),
    )
    .await;
    let (st, sent) = g
        .post(&format!("/api/v1/sessions/{id}/messages"), json!({"message": "hello"}))
        .await;
    assert_eq!(st, StatusCode::OK, "{sent}");
    assert_eq!(sent["success"], true);
    assert!(sent["messageId"].is_string());

    let (st, fork) = g
        .post(&format!("/api/v1/sessions/{id}/fork"), json!({"name": "branch"}))
        .await;
    assert_eq!(st, StatusCode::CREATED, "{fork}");
    let fork_id = fork["sessionId"].as_str().unwrap().to_string();

    let (st, _) = g
        .post(&format!("/api/v1/sessions/{fork_id}/close"), json!({"reason": "done"}))
        .await;
    assert_eq!(st, StatusCode::OK);
    let (st, body) = g.post_empty(&format!("/api/v1/sessions/{fork_id}/close")).await;
    assert_eq!(
        (st, &body["success"]),
        (StatusCode::OK, &json!(true)),
        "closing twice is idempotent"
    );
    let (st, _) = g.post_empty(&format!("/api/v1/sessions/{fork_id}/resume")).await;
    assert_eq!(st, StatusCode::OK);
    let (st, body) = g.post_empty(&format!("/api/v1/sessions/{fork_id}/archive")).await;
    assert_eq!(
        (st, code(&body)),
        (StatusCode::CONFLICT, "conflict"),
        "an active session is closed before it is archived"
    );
    g.post_empty(&format!("/api/v1/sessions/{fork_id}/close")).await;
    let (st, _) = g.post_empty(&format!("/api/v1/sessions/{fork_id}/archive")).await;
    assert_eq!(st, StatusCode::OK);
    let (st, purged) = g.post_empty(&format!("/api/v1/sessions/{fork_id}/purge")).await;
    assert_eq!(st, StatusCode::OK, "{purged}");

    let (st, ended) = g
        .send(reqwest::Method::DELETE, &format!("/api/v1/sessions/{id}"), None)
        .await;
    assert_eq!(st, StatusCode::OK, "{ended}");
    assert_eq!(ended["success"], true);
    assert_eq!(ended["summary"]["itemCount"], 1, "one message was sent");
    assert!(ended["summary"]["duration"].as_i64().unwrap() >= 0);
    let (_, after) = g.get(&format!("/api/v1/sessions/{id}")).await;
    assert_eq!(after["status"], "closed");

    // Errors: one JSON shape, the right status.
    let (st, body) = g.get("/api/v1/sessions/nope").await;
    assert_eq!((st, code(&body)), (StatusCode::NOT_FOUND, "not_found"));
    let (st, body) = g.send(reqwest::Method::DELETE, "/api/v1/sessions/nope", None).await;
    assert_eq!((st, code(&body)), (StatusCode::NOT_FOUND, "not_found"));
    let (st, body) = g.post("/api/v1/sessions", json!({"cli": "Emacs Lisp"})).await;
    assert_eq!((st, code(&body)), (StatusCode::BAD_REQUEST, "invalid_request"));
    let (st, body) = g.post("/api/v1/sessions", json!({"task": "no cli"})).await;
    assert_eq!((st, code(&body)), (StatusCode::BAD_REQUEST, "invalid_request"));
    let (st, body) = g.post("/api/v1/sessions", json!({"agnet": "typo"})).await;
    assert_eq!(
        (st, code(&body)),
        (StatusCode::BAD_REQUEST, "invalid_request"),
        "unknown fields are refused"
    );
    let (st, body) = g.post(&format!("/api/v1/sessions/{id}/messages"), json!({})).await;
    assert_eq!(
        (st, code(&body)),
        (StatusCode::BAD_REQUEST, "invalid_request"),
        "message is required"
    );
    let garbage = g
        .req(reqwest::Method::POST, &format!("/api/v1/sessions/{id}/messages"))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(garbage.status(), StatusCode::BAD_REQUEST);
    let (st, body) = g.get("/api/v1/sessions?limit=many").await;
    assert_eq!((st, code(&body)), (StatusCode::BAD_REQUEST, "invalid_request"));
    let (st, body) = g.post("/api/v1/sessions", json!({"title": "a\u{0}b"})).await;
    assert_eq!(
        (st, code(&body)),
        (StatusCode::BAD_REQUEST, "invalid_request"),
        "NUL in a string: {body}"
    );
    let (st, body) = g.get("/api/v1/deliveries?agentId=a%00b").await;
    assert_eq!(
        (st, code(&body)),
        (StatusCode::BAD_REQUEST, "invalid_request"),
        "NUL in the query: {body}"
    );
    let (st, _) = g
        .post(
            "/api/v1/sessions",
            json!({"title": "a\\u0000b", "sessionId": "backslash"}),
        )
        .await;
    assert_eq!(
        st,
        StatusCode::CREATED,
        "an escaped backslash before u0000 is not a NUL"
    );
    let (st, body) = g.get("/api/v1/nothing/here").await;
    assert_eq!((st, code(&body)), (StatusCode::NOT_FOUND, "not_found"));
    let huge = json!({"message": "x".repeat(2 * 1024 * 1024)});
    let (st, body) = g.post(&format!("/api/v1/sessions/{id}/messages"), huge).await;
    assert_eq!((st, code(&body)), (StatusCode::PAYLOAD_TOO_LARGE, "invalid_request"));
}

#[tokio::test]
async fn creating_a_session_with_a_cli_and_no_spawner_is_503_and_leaves_no_open_session() {
    let m = mesh().await;
    let g = gateway(&m, &[]).await;
    let resp = g
        .req(reqwest::Method::POST, "/api/v1/sessions")
        .json(&json!({"agent": "w", "cli": "claude", "task": "fix the bug", "sessionId": "spawn-1"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(resp.headers()["retry-after"], "1");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(code(&body), "unavailable");
    assert_eq!(body["error"]["retryable"], true);
    let (_, s) = g.get("/api/v1/sessions/spawn-1").await;
    assert_eq!(s["status"], "closed", "the session made for the agent is closed again");
}

#[tokio::test]
async fn creating_a_session_with_a_cli_spawns_the_agent_with_its_task_and_deleting_the_session_stops_it() {
    let m = mesh().await;
    let surfaced = std::env::temp_dir().join(format!("gw-agent-{}.log", free_port()));
    let _spawner = common::spawner(&m, &surfaced).await;
    let g = gateway(&m, &[]).await;

    let (status, created) = g
        .post(
            "/api/v1/sessions",
            json!({"agent": "fixer", "cli": "claude", "task": "fix the flaky test"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["status"], "starting");
    assert_eq!(created["agentName"], "fixer");
    let session = created["sessionId"].as_str().unwrap();
    let agent = created["agentId"].as_str().expect("the spawned agent's id");

    let (_, s) = g.get(&format!("/api/v1/sessions/{session}")).await;
    assert_eq!(s["agents"][0]["agentId"], agent, "{s}");
    wait_for(|| async {
        let text = std::fs::read_to_string(&surfaced).unwrap_or_default();
        text.contains("fix the flaky test").then_some(())
    })
    .await;

    let (status, ended) = g
        .send(reqwest::Method::DELETE, &format!("/api/v1/sessions/{session}"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{ended}");
    wait_for(|| async {
        let (_, s) = g.get(&format!("/api/v1/sessions/{session}")).await;
        (s["status"] == "closed" && s["agents"][0]["status"] == "disposed").then_some(())
    })
    .await;
}

#[tokio::test]
async fn permissions_and_questions_are_listed_and_decided_per_agent() {
    let m = mesh().await;
    let g = gateway(&m, &[]).await;
    g.post("/api/v1/sessions", json!({"sessionId": "s1"})).await;
    let ask = |tool: &str, cmd: &str| json!({"agentId": "agent-a", "sessionId": "s1", "tool": tool, "command": cmd, "description": "wants to run"});
    let r1 = relay_testkit::expect_ok(&m.client, "permission.request", ask("Bash", "cargo build")).await;
    let r2 = relay_testkit::expect_ok(&m.client, "permission.request", ask("Bash", "rm -rf target")).await;
    let (id1, id2) = (r1["requestId"].as_str().unwrap(), r2["requestId"].as_str().unwrap());

    let (st, list) = g.get("/api/v1/agents/agent-a/permissions").await;
    assert_eq!(st, StatusCode::OK);
    let pending: Vec<&str> = list["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["requestId"].as_str().unwrap())
        .collect();
    assert_eq!(pending.len(), 2);
    assert!(list["permissions"][0]["riskLevel"].is_string());
    let (_, other) = g.get("/api/v1/agents/agent-b/permissions").await;
    assert_eq!(other["permissions"], json!([]), "another agent has none");

    let (st, approved) = g
        .post_empty(&format!("/api/v1/agents/agent-a/permissions/{id1}/approve"))
        .await;
    assert_eq!(st, StatusCode::OK, "{approved}");
    assert_eq!(approved["success"], true);
    assert_eq!(approved["permission"]["status"], "approved");
    let (st, body) = g
        .post_empty(&format!("/api/v1/agents/agent-a/permissions/{id1}/approve"))
        .await;
    assert_eq!((st, code(&body)), (StatusCode::CONFLICT, "conflict"), "approving twice");
    let (st, body) = g
        .post_empty(&format!("/api/v1/agents/agent-b/permissions/{id2}/deny"))
        .await;
    assert_eq!(
        (st, code(&body)),
        (StatusCode::NOT_FOUND, "not_found"),
        "another agent's request"
    );
    let (st, denied) = g
        .post(
            &format!("/api/v1/agents/agent-a/permissions/{id2}/deny"),
            json!({"reason": "too risky"}),
        )
        .await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(denied["permission"]["reason"], "too risky");
    let (st, body) = g.post_empty("/api/v1/agents/agent-a/permissions/missing/approve").await;
    assert_eq!((st, code(&body)), (StatusCode::NOT_FOUND, "not_found"));
    let (_, all) = g.get("/api/v1/agents/agent-a/permissions?status=all").await;
    assert_eq!(all["permissions"].as_array().unwrap().len(), 2);
    let (st, body) = g.get("/api/v1/agents/agent-a/permissions?status=maybe").await;
    assert_eq!((st, code(&body)), (StatusCode::BAD_REQUEST, "invalid_request"));

    let q = relay_testkit::expect_ok(
        &m.client,
        "question.ask",
        json!({"agentId": "agent-a", "sessionId": "s1", "question": "Which db?", "options": ["pg", "mysql"]}),
    )
    .await;
    let qid = q["questionId"].as_str().unwrap();
    let (_, qs) = g.get("/api/v1/agents/agent-a/questions").await;
    assert_eq!(qs["questions"][0]["questionId"], qid);
    let (st, body) = g
        .post(&format!("/api/v1/agents/agent-a/questions/{qid}/answer"), json!({}))
        .await;
    assert_eq!(
        (st, code(&body)),
        (StatusCode::BAD_REQUEST, "invalid_request"),
        "answer is required"
    );
    let (st, answered) = g
        .post(
            &format!("/api/v1/agents/agent-a/questions/{qid}/answer"),
            json!({"answer": "pg"}),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{answered}");
    assert_eq!(answered["question"]["answer"], "pg");
    let (st, body) = g
        .post(
            &format!("/api/v1/agents/agent-a/questions/{qid}/answer"),
            json!({"answer": "pg"}),
        )
        .await;
    assert_eq!((st, code(&body)), (StatusCode::CONFLICT, "conflict"));

    // Resolutions reach the event log through the manager's outbox, so they
    // arrive shortly after the answers: wait for them, then check there are no more.
    let events = wait_for(|| async {
        let (st, events) = g
            .get("/api/v1/events?types=permission.resolved,question.resolved&sessionId=s1")
            .await;
        assert_eq!(st, StatusCode::OK);
        let events = events["events"].as_array().unwrap().clone();
        (events.len() >= 3).then_some(events)
    })
    .await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        ["permission.resolved", "permission.resolved", "question.resolved"],
        "{events:?}"
    );
}

#[tokio::test]
async fn agent_control_and_deliveries_over_http() {
    let m = mesh().await;
    let g = gateway(&m, &[]).await;
    g.post("/api/v1/sessions", json!({"sessionId": "s1"})).await;
    let attached = relay_testkit::expect_ok(
        &m.client,
        "session.agent.attach",
        json!({"sessionId": "s1", "agent": {"kind": "fake", "adapterId": "fake", "adapterName": "fake"}}),
    )
    .await;
    let agent = attached["agentId"].as_str().unwrap().to_string();

    let (st, hold) = g.post_empty(&format!("/api/v1/agents/{agent}/pause")).await;
    assert_eq!((st, &hold["paused"]), (StatusCode::OK, &json!(true)), "{hold}");
    let (_, sent) = g
        .post(
            "/api/v1/sessions/s1/messages",
            json!({"message": "held", "mode": "immediate"}),
        )
        .await;
    let delivery = sent["deliveryIds"][0].as_str().unwrap().to_string();
    let (st, d) = g.get(&format!("/api/v1/deliveries/{delivery}")).await;
    assert_eq!((st, d["agentId"].as_str()), (StatusCode::OK, Some(agent.as_str())));
    let (st, list) = g.get(&format!("/api/v1/deliveries?agentId={agent}")).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(list["deliveries"].as_array().unwrap().len(), 1);

    let (st, cancelled) = g
        .post(
            &format!("/api/v1/deliveries/{delivery}/cancel"),
            json!({"reason": "changed my mind"}),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{cancelled}");
    assert_eq!(cancelled["status"], "cancelled");
    let (st, body) = g.post_empty(&format!("/api/v1/deliveries/{delivery}/cancel")).await;
    assert_eq!(
        (st, &body["reason"]),
        (StatusCode::OK, &json!("changed my mind")),
        "cancelling twice changes nothing"
    );
    let (st, body) = g.post_empty(&format!("/api/v1/deliveries/{delivery}/retry")).await;
    assert_eq!(
        (st, code(&body)),
        (StatusCode::CONFLICT, "conflict"),
        "a cancelled delivery is not retried: {body}"
    );
    let (st, body) = g.get("/api/v1/deliveries/nope").await;
    assert_eq!((st, code(&body)), (StatusCode::NOT_FOUND, "not_found"));
    let (st, body) = g.get("/api/v1/deliveries?status=lost").await;
    assert_eq!((st, code(&body)), (StatusCode::BAD_REQUEST, "invalid_request"));

    let (st, flushed) = g
        .post(&format!("/api/v1/agents/{agent}/flush"), json!({"mode": "manual"}))
        .await;
    assert_eq!((st, &flushed["flushed"]), (StatusCode::OK, &json!(0)), "{flushed}");
    let (st, hold) = g.post_empty(&format!("/api/v1/agents/{agent}/resume")).await;
    assert_eq!((st, &hold["paused"]), (StatusCode::OK, &json!(false)));
    let (st, body) = g.post(&format!("/api/v1/agents/{agent}/input"), json!({})).await;
    assert_eq!(
        (st, code(&body)),
        (StatusCode::BAD_REQUEST, "invalid_request"),
        "data is required"
    );
    let (st, stopped) = g
        .post(&format!("/api/v1/agents/{agent}/stop"), json!({"reason": "done"}))
        .await;
    assert_eq!(st, StatusCode::OK, "{stopped}");
    let (st, body) = g.post_empty("/api/v1/agents/ghost/pause").await;
    assert_eq!((st, code(&body)), (StatusCode::NOT_FOUND, "not_found"), "{body}");
}

#[tokio::test]
async fn costs_are_reported_with_since_until_and_agent_filters() {
    let m = mesh().await;
    let g = gateway(&m, &[]).await;
    let tokens = |agent: &str, ts: i64, input: i64| {
        json!({"type": "tokens.used", "sessionId": "s1", "agentName": agent, "ts": ts,
               "payload": {"inputTokens": input, "outputTokens": 0, "model": "claude-sonnet-4-5"}})
    };
    relay_testkit::expect_ok(
        &m.client,
        "event.append",
        json!({"events": [tokens("w1", 1_000, 1_000_000), tokens("w2", 2_000, 2_000_000), tokens("w1", 3_000, 500_000)]}),
    )
    .await;
    let report = wait_for(|| async {
        let (_, r) = g.get("/api/v1/costs").await;
        (r["total"]["events"] == 3).then_some(r)
    })
    .await;
    assert_eq!(report["total"]["inputTokens"], 3_500_000);
    assert!(report["byModel"]["claude-sonnet-4-5"].is_object());
    let (st, w1) = g.get("/api/v1/costs?agent=w1").await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(w1["total"]["inputTokens"], 1_500_000);
    let (_, window) = g.get("/api/v1/costs?since=1500&until=3000").await;
    assert_eq!(
        window["total"]["inputTokens"], 2_000_000,
        "since inclusive, until exclusive"
    );
    let (st, body) = g.get("/api/v1/costs?since=yesterday").await;
    assert_eq!((st, code(&body)), (StatusCode::BAD_REQUEST, "invalid_request"));
}

#[tokio::test]
async fn with_a_token_every_api_route_needs_the_bearer_and_health_stays_open() {
    let m = mesh().await;
    let g = gateway(&m, &[("RELAY_API_TOKEN", "s3cret-token")]).await;
    for path in [
        "/api/v1/sessions",
        "/api/v1/events/sse",
        "/api/v1/costs",
        "/api/v1/agents/a/permissions",
    ] {
        let resp = g.http.get(g.url(path)).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::UNAUTHORIZED, "{path} without a token");
        assert_eq!(resp.headers()["www-authenticate"], "Bearer realm=\"relay-mesh\"");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(code(&body), "unauthorized");
        let wrong = g
            .http
            .get(g.url(path))
            .bearer_auth("s3cret-tokem")
            .send()
            .await
            .unwrap();
        assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED, "{path} with a wrong token");
    }
    let (st, _) = g.get("/api/v1/sessions").await;
    assert_eq!(st, StatusCode::OK, "the right token is let in");
    let resp = g.sse("/api/v1/events/sse", None).await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    drop(resp);
    let spec = g
        .req(reqwest::Method::GET, "/api/v1/openapi.json")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(
        spec,
        include_str!("../../../docs/api/openapi.json"),
        "the served document is the checked-in one"
    );
    for open in ["/healthz", "/readyz", "/metrics"] {
        let resp = g.http.get(g.url(open)).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "{open} needs no token");
    }

    // Without a token configured, the same routes are open.
    let open = gateway(&m, &[]).await;
    let resp = open.http.get(open.url("/api/v1/sessions")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
}

#[tokio::test]
async fn sse_replays_from_offset_then_streams_live_and_resumes_by_last_event_id_without_gap_or_duplicate() {
    let m = mesh().await;
    let g = gateway(&m, &[]).await;
    let mut expected: Vec<i64> = append(&m, "test.tick", "s1", "w1", 50).await;
    let start = expected[0] - 1;

    // Events keep flowing while the client reads, disconnects and comes back.
    let writer = {
        let client = m.client.clone();
        tokio::spawn(async move {
            let mut seqs = Vec::new();
            for round in 0..40 {
                let events: Vec<Value> = (0..5)
                    .map(|i| json!({"type": "test.tick", "sessionId": "s1", "agentName": "w1", "payload": {"round": round, "i": i}}))
                    .collect();
                let r = relay_testkit::expect_ok(&client, "event.append", json!({ "events": events })).await;
                seqs.extend(
                    r["appended"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|a| a["seq"].as_i64().unwrap()),
                );
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            seqs
        })
    };
    let mut first = SseReader::new(
        g.sse(&format!("/api/v1/events/sse?types=test.tick&offset={start}"), None)
            .await,
    );
    let got_first = first.take(120).await;
    drop(first);
    let last = got_first.last().unwrap().id;
    let mut second = SseReader::new(g.sse("/api/v1/events/sse?types=test.tick", Some(last)).await);
    expected.extend(writer.await.unwrap());
    let got_second = second.take(expected.len() - got_first.len()).await;

    let seen: Vec<i64> = got_first.iter().chain(&got_second).map(|f| f.id).collect();
    assert_eq!(
        seen, expected,
        "every event once, in seq order, across the reconnection"
    );
    let f = &got_first[0];
    assert_eq!(f.event, "test.tick");
    assert_eq!(f.data["seq"], f.id, "the SSE id is the event seq");
    assert_eq!(f.data["payload"]["n"], 0);
}

#[tokio::test]
async fn sse_routes_filter_by_agent_session_types_and_time() {
    let m = mesh().await;
    let g = gateway(&m, &[]).await;
    let a = append(&m, "test.a", "s1", "w1", 3).await;
    let b = append(&m, "test.b", "s2", "w2", 3).await;
    let c = append(&m, "test.a", "s2", "w1", 3).await;

    let ids = |frames: &[Frame]| frames.iter().map(|f| f.id).collect::<Vec<_>>();
    let mut agent = SseReader::new(g.sse("/api/v1/agents/w1/events/sse?offset=0", None).await);
    assert_eq!(ids(&agent.take(6).await), [a.clone(), c.clone()].concat());
    let mut session = SseReader::new(g.sse("/api/v1/sessions/s2/events/sse?offset=0", None).await);
    assert_eq!(ids(&session.take(6).await), [b.clone(), c.clone()].concat());
    let mut typed = SseReader::new(g.sse("/api/v1/events/sse?offset=0&types=test.b", None).await);
    assert_eq!(ids(&typed.take(3).await), b);

    // Live events reach only the streams they match.
    let live = append(&m, "test.b", "s1", "w1", 1).await;
    assert_eq!(agent.next().await.id, live[0]);
    assert_eq!(typed.next().await.id, live[0]);
    let later = append(&m, "test.a", "s2", "w3", 1).await;
    assert_eq!(session.next().await.id, later[0], "s2's stream skipped the s1 event");

    // `since` starts at the first event at or after a time.
    let t = json!({"type": "test.t", "sessionId": "s3", "ts": 5_000, "payload": {}});
    let t2 = json!({"type": "test.t", "sessionId": "s3", "ts": 9_000, "payload": {}});
    let r = relay_testkit::expect_ok(&m.client, "event.append", json!({"events": [t, t2]})).await;
    let mut timed = SseReader::new(g.sse("/api/v1/sessions/s3/events/sse?since=6000", None).await);
    assert_eq!(timed.next().await.id, r["appended"][1]["seq"].as_i64().unwrap());

    let (st, body) = g.get("/api/v1/events/sse?offset=-4").await;
    assert_eq!((st, code(&body)), (StatusCode::BAD_REQUEST, "invalid_request"));
    let resp = g.sse("/api/v1/events/sse", None).await;
    drop(resp);
    let bad = g
        .req(reqwest::Method::GET, "/api/v1/events/sse")
        .header("Last-Event-ID", "abc")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn sse_heartbeats_a_disconnect_frees_the_stream_and_the_cap_answers_503() {
    let m = mesh().await;
    let g = gateway(
        &m,
        &[
            ("RELAY_GATEWAY__SSE_MAX_CONNECTIONS", "2"),
            ("RELAY_GATEWAY__SSE_HEARTBEAT_MS", "100"),
        ],
    )
    .await;
    let one = g.sse("/api/v1/events/sse", None).await;
    let two = g.sse("/api/v1/sessions/x/events/sse", None).await;
    assert_eq!((one.status(), two.status()), (StatusCode::OK, StatusCode::OK));
    assert_eq!(g.metric("relay_gateway_sse_connections").await, 2.0);
    let three = g.sse("/api/v1/agents/y/events/sse", None).await;
    assert_eq!(three.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(three.headers()["retry-after"], "1");
    assert_eq!(g.metric("relay_gateway_sse_rejected_total").await, 1.0);

    // Heartbeats arrive on an idle stream.
    let mut reader = SseReader::new(one);
    let heartbeats = tokio::time::timeout(Duration::from_secs(10), async {
        while reader.comments < 3 {
            let chunk = reader.stream.next().await.unwrap().unwrap();
            reader.buf.push_str(&String::from_utf8_lossy(&chunk));
            reader.comments += reader.buf.matches(":heartbeat").count() + reader.buf.matches(": heartbeat").count();
            reader.buf.clear();
        }
    })
    .await;
    assert!(heartbeats.is_ok(), "three heartbeats within 10 s at 100 ms");

    drop(reader);
    wait_for(|| async { (g.metric("relay_gateway_sse_connections").await == 1.0).then_some(()) }).await;
    let again = g.sse("/api/v1/events/sse", None).await;
    assert_eq!(again.status(), StatusCode::OK, "the freed slot is usable");
    drop(two);
    drop(again);
    wait_for(|| async { (g.metric("relay_gateway_sse_connections").await == 0.0).then_some(()) }).await;
}

#[tokio::test]
async fn a_slow_sse_client_does_not_hold_back_a_fast_one_and_still_gets_everything() {
    let m = mesh().await;
    let g = gateway(
        &m,
        &[
            ("RELAY_GATEWAY__SSE_CLIENT_BUFFER", "4"),
            ("RELAY_GATEWAY__SSE_HUB_CAPACITY", "16"),
        ],
    )
    .await;
    let head = append(&m, "test.warm", "s0", "w0", 1).await[0];
    let slow = g
        .sse(&format!("/api/v1/events/sse?types=test.flood&offset={head}"), None)
        .await;
    let mut fast = SseReader::new(
        g.sse(&format!("/api/v1/events/sse?types=test.flood&offset={head}"), None)
            .await,
    );
    let mut expected = Vec::new();
    for _ in 0..10 {
        expected.extend(append(&m, "test.flood", "s1", "w1", 100).await);
    }
    // The fast reader gets all 1,000 while the slow one has not read a byte.
    let fast_ids: Vec<i64> = fast.take(1000).await.iter().map(|f| f.id).collect();
    assert_eq!(fast_ids, expected);
    let mut slow = SseReader::new(slow);
    let slow_ids: Vec<i64> = slow.take(1000).await.iter().map(|f| f.id).collect();
    assert_eq!(
        slow_ids, expected,
        "the slow client caught up from the log: nothing lost, nothing twice"
    );
    assert!(g.metric("relay_gateway_sse_catch_ups_total").await >= 1.0);
}

/// A session's stream follows its session's own channel from the hub: it gets its session's
/// events and no other's, and one that falls behind that channel (32 events) catches up from
/// the log, with nothing lost or twice, while the others' streams carry on.
#[tokio::test]
async fn a_session_stream_gets_only_its_session_and_a_slow_one_catches_up_from_the_log() {
    let m = mesh().await;
    let g = gateway(&m, &[("RELAY_GATEWAY__SSE_CLIENT_BUFFER", "4")]).await;
    // Once the hub has emitted an event, new streams follow their session's channel.
    let mut warm = SseReader::new(g.sse("/api/v1/sessions/s0/events/sse", None).await);
    let head = append(&m, "test.warm", "s0", "w0", 1).await[0];
    assert_eq!(warm.next().await.id, head);
    let slow = g.sse("/api/v1/sessions/s1/events/sse", Some(head)).await;
    let mut other = SseReader::new(g.sse("/api/v1/sessions/s2/events/sse", Some(head)).await);
    let (mut s1, mut s2) = (Vec::new(), Vec::new());
    for _ in 0..10 {
        s1.extend(append(&m, "test.flood", "s1", "w1", 50).await);
        s2.extend(append(&m, "test.flood", "s2", "w2", 5).await);
    }
    let other_ids: Vec<i64> = other.take(s2.len()).await.iter().map(|f| f.id).collect();
    assert_eq!(other_ids, s2, "s2's stream: its events only, in order");
    let mut slow = SseReader::new(slow);
    let slow_ids: Vec<i64> = slow.take(s1.len()).await.iter().map(|f| f.id).collect();
    assert_eq!(
        slow_ids, s1,
        "the slow s1 stream caught up from the log: nothing lost, nothing twice"
    );
    assert!(g.metric("relay_gateway_sse_catch_ups_total").await >= 1.0);
    // Nothing more is queued for s2: the next frame is the next s2 event.
    let later = append(&m, "test.flood", "s2", "w2", 1).await;
    assert_eq!(other.next().await.id, later[0]);
}

#[tokio::test]
async fn readyz_tells_when_postgres_is_unreachable_while_healthz_stays_up() {
    let m = mesh().await;
    let g = gateway(&m, &[]).await;
    let (st, ready) = g.get("/readyz").await;
    assert_eq!(
        (st, ready["status"].as_str()),
        (StatusCode::OK, Some("ready")),
        "{ready}"
    );

    let port = free_port();
    let broken = gateway(
        &m,
        &[(
            "RELAY_DATABASE__URL",
            &format!("postgres://postgres@127.0.0.1:{port}/none"),
        )],
    )
    .await;
    let (st, ready) = broken.get("/readyz").await;
    assert_eq!(st, StatusCode::SERVICE_UNAVAILABLE, "{ready}");
    assert_eq!(ready["postgres"], "unreachable");
    assert_eq!(ready["nats"], "ok");
    let (st, _) = broken.get("/healthz").await;
    assert_eq!(st, StatusCode::OK);
}

#[tokio::test]
async fn metrics_count_requests_by_route_template() {
    let m = mesh().await;
    let g = gateway(&m, &[]).await;
    for id in ["a", "b", "c"] {
        g.get(&format!("/api/v1/sessions/{id}")).await;
    }
    let text = g.metrics().await;
    let line = text
        .lines()
        .find(|l| {
            l.starts_with("relay_gateway_http_requests_total")
                && l.contains("route=\"/api/v1/sessions/{id}\"")
                && l.contains("status=\"404\"")
        })
        .unwrap_or_else(|| panic!("no per-route counter in\n{text}"));
    assert!(line.ends_with(" 3"), "{line}");
}

/// Errors axum makes before a handler runs (a body over the limit, a wrong method) were
/// `text/plain` on 8 of the 11 POST routes that take a body; every one is now the JSON envelope
/// with its status.
#[tokio::test]
async fn a_body_over_the_limit_and_a_wrong_method_answer_the_json_envelope_on_every_route() {
    let m = mesh().await;
    let g = gateway(&m, &[("RELAY_GATEWAY__BODY_LIMIT_BYTES", "1024")]).await;
    let big = json!({"reason": "x".repeat(4096), "message": "y", "data": "z"});
    for path in [
        "/api/v1/sessions",
        "/api/v1/sessions/s1/messages",
        "/api/v1/sessions/s1/close",
        "/api/v1/sessions/s1/fork",
        "/api/v1/agents/a1/permissions/r1/approve",
        "/api/v1/agents/a1/permissions/r1/deny",
        "/api/v1/agents/a1/questions/q1/answer",
        "/api/v1/agents/a1/stop",
        "/api/v1/agents/a1/input",
        "/api/v1/agents/a1/flush",
        "/api/v1/deliveries/d1/cancel",
    ] {
        let (st, body) = g.post(path, big.clone()).await;
        assert_eq!(
            (st, code(&body)),
            (StatusCode::PAYLOAD_TOO_LARGE, "invalid_request"),
            "{path}: {body}"
        );
    }
    let (st, body) = g.send(reqwest::Method::PUT, "/api/v1/sessions", Some(json!({}))).await;
    assert_eq!(
        (st, code(&body)),
        (StatusCode::METHOD_NOT_ALLOWED, "invalid_request"),
        "{body}"
    );
    let (st, body) = g.send(reqwest::Method::DELETE, "/api/v1/deliveries/d1", None).await;
    assert_eq!(
        (st, code(&body)),
        (StatusCode::METHOD_NOT_ALLOWED, "invalid_request"),
        "{body}"
    );
}

/// `GET /sessions/search` is full-text over titles and messages: a word only in a session's
/// title finds it, whatever its status, beside a session that has the word only in a message.
#[tokio::test]
async fn a_word_only_in_a_session_title_finds_the_session() {
    let m = mesh().await;
    let g = gateway(&m, &[]).await;
    let (st, created) = g
        .post("/api/v1/sessions", json!({"title": "Terraform state migration"}))
        .await;
    assert_eq!(st, StatusCode::CREATED, "{created}");
    let titled = created["sessionId"].as_str().unwrap().to_string();
    let (_, created) = g.post("/api/v1/sessions", json!({"title": "cleanup"})).await;
    let messaged = created["sessionId"].as_str().unwrap().to_string();
    let body = json!({"sessionId": messaged, "agent": {"kind": "adapter", "adapterName": "claude"},
                      "message": "run terraform plan first"});
    relay_testkit::expect_ok(&m.client, "session.sendMessage", body).await;
    g.post("/api/v1/sessions", json!({"title": "unrelated"})).await;

    let ids = |v: &Value| -> Vec<String> {
        let mut ids: Vec<String> = v["sessions"]
            .as_array()
            .unwrap_or_else(|| panic!("{v}"))
            .iter()
            .map(|s| s["sessionId"].as_str().unwrap().to_string())
            .collect();
        ids.sort();
        ids
    };
    let mut both = vec![titled.clone(), messaged.clone()];
    both.sort();
    let (st, found) = g.get("/api/v1/sessions/search?q=terraform&status=all").await;
    assert_eq!(st, StatusCode::OK, "{found}");
    assert_eq!(found["total"], 2, "{found}");
    assert_eq!(ids(&found), both, "{found}");
    // Stemmed like messages, and found again once the session is closed.
    let (st, closed) = g.post(&format!("/api/v1/sessions/{titled}/close"), json!({})).await;
    assert!(st.is_success(), "{closed}");
    let (_, found) = g.get("/api/v1/sessions/search?q=migrations&status=all").await;
    assert_eq!(ids(&found), vec![titled.clone()], "{found}");
    let (_, found) = g.get("/api/v1/sessions/search?q=migrations&status=active").await;
    assert_eq!(found["total"], 0, "{found}");
}
