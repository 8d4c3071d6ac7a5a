//! The rest of seed 002's session contract over the real mesh, as a client sees it: the events
//! around forks, merges and children that close; compression (by request, when the context
//! window turns critical, and `session.compress` reaching the agent's CLI); system prompts from
//! a workspace's personas and profiles; the optional `session.enrichContext`.

mod common;
use common::{free_port, gateway, mesh};
use futures::StreamExt;
use relay_testkit::{expect_ok, wait_for};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// The events of `types` on session `session`'s stream, in log order.
async fn events(g: &common::Gateway, session: &str, types: &str) -> Vec<Value> {
    let (_, e) = g
        .get(&format!("/api/v1/events?sessionId={session}&types={types}&limit=1000"))
        .await;
    e["events"].as_array().cloned().unwrap_or_default()
}

/// How many `session.compressionRequested` the system (the cost aggregator) emitted.
async fn system_requests(g: &common::Gateway, session: &str) -> usize {
    events(g, session, "session.compressionRequested")
        .await
        .into_iter()
        .filter(|e| e["payload"]["source"] == "system")
        .count()
}

/// Waits until `session`'s stream holds events of every one of `types`; returns them in order.
async fn until_events(g: &common::Gateway, session: &str, types: &[&str]) -> Vec<Value> {
    wait_for(|| async {
        let e = events(g, session, &types.join(",")).await;
        types.iter().all(|t| e.iter().any(|x| x["type"] == *t)).then_some(e)
    })
    .await
}

#[tokio::test]
async fn forks_and_merges_announce_themselves_and_a_closed_child_reports_to_its_parent() {
    let m = mesh().await;
    let g = gateway(&m, &[]).await;
    let (_, parent) = g.post("/api/v1/sessions", json!({"title": "parent"})).await;
    let parent = parent["sessionId"].as_str().unwrap().to_string();

    let (status, child) = g.post(&format!("/api/v1/sessions/{parent}/fork"), json!({})).await;
    assert_eq!(status, StatusCode::CREATED, "{child}");
    let child = child["sessionId"].as_str().unwrap().to_string();
    let e = until_events(
        &g,
        &parent,
        &["session.forking", "session.forked", "session.branch.created"],
    )
    .await;
    let kinds: Vec<&str> = e.iter().map(|x| x["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["session.forking", "session.forked", "session.branch.created"],
        "before, then after"
    );
    assert_eq!(e[0]["payload"]["childSessionId"], child.as_str());
    assert_eq!(e[2]["payload"]["kind"], "fork");
    assert_eq!(e[2]["payload"]["parentSessionId"], parent.as_str());

    // Merged: merging before, branch.merged after with the handoff as its result.
    expect_ok(
        &m.client,
        "session.merge",
        json!({"childSessionId": child, "parentSessionId": parent, "summary": "found the bug"}),
    )
    .await;
    let e = until_events(
        &g,
        &parent,
        &["session.merging", "session.merged", "session.branch.merged"],
    )
    .await;
    let merged = e.iter().find(|x| x["type"] == "session.branch.merged").unwrap();
    let result: Value = serde_json::from_str(merged["payload"]["resultJson"].as_str().unwrap()).unwrap();
    assert_eq!(result["handoff"], "found the bug");
    assert!(
        e.iter().position(|x| x["type"] == "session.merging") < e.iter().position(|x| x["type"] == "session.merged")
    );

    // A child that closes by itself reports to its parent.
    let (_, other) = g.post(&format!("/api/v1/sessions/{parent}/fork"), json!({})).await;
    let other = other["sessionId"].as_str().unwrap().to_string();
    let (status, body) = g
        .post(&format!("/api/v1/sessions/{other}/close"), json!({"reason": "done"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let e = until_events(&g, &parent, &["session.childCompleted"]).await;
    let done = e.iter().find(|x| x["type"] == "session.childCompleted").unwrap();
    assert_eq!(done["payload"]["childSessionId"], other.as_str());
    assert_eq!(done["payload"]["result"]["reason"], "done");
    // Closing a session without a parent reports to nobody.
    g.post(&format!("/api/v1/sessions/{parent}/close"), json!({})).await;
    let all = until_events(&g, &parent, &["session.closed"]).await;
    assert_eq!(all.iter().filter(|x| x["type"] == "session.childCompleted").count(), 0);
}

#[tokio::test]
async fn a_critical_context_window_asks_for_compression_once_until_the_session_is_compressed() {
    let m = mesh().await;
    let g = gateway(&m, &[]).await;
    let (_, s) = g.post("/api/v1/sessions", json!({})).await;
    let session = s["sessionId"].as_str().unwrap().to_string();
    let usage = |input: i64| {
        json!({"type": "tokens.used", "sessionId": session, "agentId": "a1",
               "payload": {"inputTokens": input, "outputTokens": 10, "model": "claude-sonnet-4"}})
    };
    // Half full, then past the critical level (90 % of 200,000) twice: asked once.
    for input in [100_000, 185_000, 190_000] {
        expect_ok(&m.client, "event.append", json!({"events": [usage(input)]})).await;
    }
    wait_for(|| async { (system_requests(&g, &session).await == 1).then_some(()) }).await;
    let e = events(&g, &session, "session.compressionRequested").await;
    assert!(e[0]["payload"]["reason"].as_str().unwrap().contains("% full"), "{e:?}");
    let (_, w) = g.get(&format!("/api/v1/sessions/{session}/context-window")).await;
    assert_eq!(w["state"]["level"], "critical", "{w}");

    // A person asks too.
    let (status, body) = g
        .post(
            &format!("/api/v1/sessions/{session}/request-compression"),
            json!({"reason": "before the long task"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let asked = wait_for(|| async {
        let e = events(&g, &session, "session.compressionRequested").await;
        e.into_iter().find(|x| x["payload"]["source"] == "user")
    })
    .await;
    assert_eq!(asked["payload"]["reason"], "before the long task");

    // Compressed, the window is reset; critical again, it asks again.
    let (status, c) = g
        .post(
            &format!("/api/v1/sessions/{session}/compress"),
            json!({"pipeline": [{"actionId": "summarize"}]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{c}");
    assert!(c["tokensBefore"].as_i64().unwrap() >= 190_000, "{c}");
    wait_for(|| async {
        let (_, w) = g.get(&format!("/api/v1/sessions/{session}/context-window")).await;
        w["state"].is_null().then_some(())
    })
    .await;
    expect_ok(&m.client, "event.append", json!({"events": [usage(195_000)]})).await;
    wait_for(|| async { (system_requests(&g, &session).await == 2).then_some(()) }).await;
}

#[tokio::test]
async fn compress_asks_the_agent_to_compact_its_own_way_and_logs_compressed_and_squash() {
    let m = mesh().await;
    let surfaced = std::env::temp_dir().join(format!("gw-compress-{}.log", free_port()));
    let _spawner = common::spawner(&m, &surfaced).await;
    let g = gateway(&m, &[]).await;
    let (status, created) = g
        .post(
            "/api/v1/sessions",
            json!({"agent": "worker", "cli": "claude", "task": "hello"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let session = created["sessionId"].as_str().unwrap().to_string();
    let agent = created["agentId"].as_str().unwrap().to_string();
    let typed = |text: &'static str| {
        let surfaced = surfaced.clone();
        async move {
            let t = std::fs::read_to_string(&surfaced).unwrap_or_default();
            t.contains(text).then_some(())
        }
    };
    wait_for(|| typed("hello")).await;

    let (status, c) = g
        .post(
            &format!("/api/v1/sessions/{session}/compress"),
            json!({"pipeline": [{"actionId": "summarize", "options": {"keep": 2}}]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{c}");
    let asked = &c["contextJson"]["agents"][0];
    assert_eq!(asked["agentId"], agent.as_str(), "{c}");
    assert_eq!(asked["command"], "/compact", "Claude Code's own compaction: {c}");
    wait_for(|| typed("/compact")).await;

    let e = until_events(&g, &session, &["session.compressed", "session.squash"]).await;
    let compressed = e.iter().find(|x| x["type"] == "session.compressed").unwrap();
    assert_eq!(compressed["eventId"], c["eventId"], "the reply names the event");
    let squash = e.iter().find(|x| x["type"] == "session.squash").unwrap();
    let ids = squash["payload"]["compressedMessageIds"].as_array().unwrap();
    assert!(!ids.is_empty(), "the task message was compressed: {squash}");
    let summary: Value = serde_json::from_str(squash["payload"]["summaryJson"].as_str().unwrap()).unwrap();
    assert_eq!(summary["pipeline"][0]["actionId"], "summarize");

    for (body, code) in [
        (json!({"pipeline": []}), StatusCode::BAD_REQUEST),
        (json!({"pipeline": [{"actionId": " "}]}), StatusCode::BAD_REQUEST),
    ] {
        let (status, e) = g.post(&format!("/api/v1/sessions/{session}/compress"), body).await;
        assert_eq!(status, code, "{e}");
    }
    let (status, _) = g
        .post(
            "/api/v1/sessions/nope/compress",
            json!({"pipeline": [{"actionId": "x"}]}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_system_prompt_is_the_profile_then_the_persona_of_the_lead_agent() {
    let m = mesh().await;
    let g = gateway(&m, &[]).await;
    for (path, name, prompt) in [
        (
            "/api/v1/profiles/house-rules",
            "House rules",
            "Answer in English. Keep diffs small.",
        ),
        ("/api/v1/personas/reviewer", "Reviewer", "You review code for bugs."),
        ("/api/v1/personas/planner", "Planner", "You plan work."),
    ] {
        let (status, p) = g
            .send(
                reqwest::Method::PUT,
                path,
                Some(json!({"name": name, "systemPrompt": prompt})),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{p}");
    }
    let (_, list) = g.get("/api/v1/personas").await;
    assert_eq!(list["prompts"].as_array().unwrap().len(), 2, "{list}");

    let (_, s) = g.post("/api/v1/sessions", json!({})).await;
    let session = s["sessionId"].as_str().unwrap().to_string();
    expect_ok(
        &m.client,
        "session.agent.attach",
        json!({"sessionId": session, "role": "lead",
               "agent": {"kind": "persona", "personaId": "reviewer", "profileId": "house-rules"}}),
    )
    .await;
    let (status, p) = g.get(&format!("/api/v1/sessions/{session}/system-prompt")).await;
    assert_eq!(status, StatusCode::OK, "{p}");
    assert_eq!(
        p,
        json!({"systemPrompt": "Answer in English. Keep diffs small.\n\nYou review code for bugs.",
               "personaName": "Reviewer", "profileName": "House rules"})
    );
    // Asked for another persona by id; an unknown one is not found.
    let (_, p) = g
        .get(&format!("/api/v1/sessions/{session}/system-prompt?personaId=planner"))
        .await;
    assert_eq!(p["personaName"], "Planner", "{p}");
    let (status, _) = g
        .get(&format!("/api/v1/sessions/{session}/system-prompt?personaId=ghost"))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // A deleted persona drops out of the agent's prompt.
    let (status, _) = g.send(reqwest::Method::DELETE, "/api/v1/personas/reviewer", None).await;
    assert_eq!(status, StatusCode::OK);
    let (_, p) = g.get(&format!("/api/v1/sessions/{session}/system-prompt")).await;
    assert_eq!(p["systemPrompt"], "Answer in English. Keep diffs small.", "{p}");
    assert!(p["personaName"].is_null(), "{p}");
}

#[tokio::test]
async fn enrich_context_is_handled_false_until_a_host_serves_it() {
    let m = mesh().await;
    let client = relay_client::Client::new(m.client.clone());
    let none = client.enrich_context("s1").await.unwrap();
    assert!(!none.handled && none.context.is_empty(), "{none:?}");

    // A host service serves it.
    let mut sub = m.client.subscribe("session.enrichContext").await.unwrap();
    let host = m.client.clone();
    tokio::spawn(async move {
        while let Some(msg) = sub.next().await {
            let req: Value = serde_json::from_slice(&msg.payload).unwrap();
            let reply = json!({"project": "relay-mesh", "for": req["sessionId"]});
            if let Some(to) = msg.reply {
                host.publish(to, serde_json::to_vec(&reply).unwrap().into())
                    .await
                    .unwrap();
            }
        }
    });
    m.client.flush().await.unwrap();
    let got = client.enrich_context("s1").await.unwrap();
    assert!(got.handled, "{got:?}");
    assert_eq!(got.context["project"], "relay-mesh");
    assert_eq!(got.context["for"], "s1");
}

#[tokio::test]
async fn a_new_client_account_and_a_swapped_model_are_announced() {
    let m = mesh().await;
    let g = gateway(&m, &[]).await;
    let (_, s) = g.post("/api/v1/sessions", json!({})).await;
    let session = s["sessionId"].as_str().unwrap().to_string();
    let observe = |account: &str| {
        json!({"clientId": "editor-1", "clientAccountId": account, "kind": "oauth", "source": "gateway",
               "payload": {"email": "a@example.com"}})
    };
    for (account, changed) in [("acct-1", true), ("acct-1", false), ("acct-2", true)] {
        let (status, r) = g
            .post(&format!("/api/v1/sessions/{session}/client"), observe(account))
            .await;
        assert_eq!(status, StatusCode::OK, "{r}");
        assert_eq!(r["changed"], changed, "{account}: {r}");
    }
    let e = wait_for(|| async {
        let e = events(&g, &session, "session.clientAccount.changed").await;
        (e.len() == 2).then_some(e)
    })
    .await;
    assert!(e[0]["payload"]["previousClientAccountId"].is_null(), "{e:?}");
    assert_eq!(e[1]["payload"]["previousClientAccountId"], "acct-1");
    assert_eq!(e[1]["payload"]["lastClientIdentityObservation"]["kind"], "oauth");
    let (_, got) = g.get(&format!("/api/v1/sessions/{session}")).await;
    assert_eq!(got["clientAccountId"], "acct-2", "{got}");

    let attached = expect_ok(
        &m.client,
        "session.agent.attach",
        json!({"sessionId": session, "agent": {"kind": "adapter", "adapterName": "claude", "model": "claude-sonnet-4", "cwd": "/work/a"}}),
    )
    .await;
    let agent = attached["agentId"].as_str().unwrap().to_string();
    let swap = format!("/api/v1/sessions/{session}/agents/{agent}/swap");
    let (status, r) = g.post(&swap, json!({"model": "claude-opus-4", "cwd": "/work/b"})).await;
    assert_eq!(status, StatusCode::OK, "{r}");
    // The same again changes nothing and is not announced again.
    let (status, _) = g.post(&swap, json!({"model": "claude-opus-4"})).await;
    assert_eq!(status, StatusCode::OK);
    let e = until_events(&g, &session, &["session.connectorSwap.editRequested"]).await;
    let swapped: Vec<&Value> = e
        .iter()
        .filter(|x| x["type"] == "session.connectorSwap.editRequested")
        .collect();
    assert_eq!(swapped.len(), 1, "{e:?}");
    let p = &swapped[0]["payload"];
    assert_eq!(
        (
            p["previousModel"].as_str(),
            p["newModel"].as_str(),
            p["previousCwd"].as_str(),
            p["newCwd"].as_str()
        ),
        (
            Some("claude-sonnet-4"),
            Some("claude-opus-4"),
            Some("/work/a"),
            Some("/work/b")
        ),
        "{p}"
    );
    let (status, _) = g
        .post(
            &format!("/api/v1/sessions/{session}/agents/nobody/swap"),
            json!({"model": "x"}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}
