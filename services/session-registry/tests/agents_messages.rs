//! Agents, capabilities, messages and turns over the wire.

mod common;
use serde_json::{Value, json};

fn claude() -> Value {
    json!({"kind": "adapter", "adapterName": "claude", "model": "claude-sonnet-4"})
}

fn caps(modes: &[&str], release: bool, attachments: &[&str]) -> Value {
    json!({
        "messaging": {"receive": true, "attachments": attachments},
        "delivery": {"modes": modes, "queue": true},
        "events": {"emits": ["status.changed", "tool.called"]},
        "lifecycle": {"release": release, "pause": true}
    })
}

#[tokio::test]
async fn attach_assigns_lead_then_member_and_a_new_lead_demotes_the_old() {
    let m = common::start(1).await;
    let id = common::create(&m).await;
    let first = m
        .ok("session.agent.attach", json!({"sessionId": id, "agent": claude()}))
        .await;
    assert_eq!(first["role"], "lead");
    assert!(first["adapterSessionId"].as_str().is_some_and(|s| !s.is_empty()));
    let second = m
        .ok("session.agent.attach", json!({"sessionId": id, "agent": claude()}))
        .await;
    assert_eq!(second["role"], "member");

    let s = m.ok("session.get", json!({"sessionId": id})).await["session"].clone();
    assert_eq!(s["leadAgentId"], first["agentId"]);
    assert_eq!(s["adapterName"], "claude");
    assert_eq!(s["agents"].as_array().unwrap().len(), 2);
    let a0 = &s["agents"][0];
    assert_eq!(a0["agentId"], first["agentId"]);
    assert_eq!(a0["model"], "claude-sonnet-4");
    assert_eq!(a0["status"], "active");
    // No declaration means the seed's minimum capability.
    assert_eq!(
        a0["capabilities"],
        json!({"messaging": {"receive": true}, "delivery": {"modes": ["immediate"]},
               "events": {"emits": ["status.changed"]}, "lifecycle": {"release": false}})
    );

    let third = m
        .ok("session.agent.attach", json!({"sessionId": id, "agent": {"kind": "persona", "personaId": "p-1"}, "role": "lead", "initialMessage": "Take over as lead"}))
        .await;
    assert_eq!(third["role"], "lead");
    assert!(third["messageId"].is_string() && third["turnId"].is_string());
    let s = m.ok("session.get", json!({"sessionId": id})).await["session"].clone();
    assert_eq!(s["leadAgentId"], third["agentId"]);
    let roles: Vec<_> = s["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["role"].clone())
        .collect();
    assert_eq!(roles, vec![json!("member"), json!("member"), json!("lead")]);
    let msgs = m.ok("session.messages", json!({"sessionId": id})).await["messages"].clone();
    assert_eq!(msgs[0]["contentText"], "Take over as lead");
    assert_eq!(msgs[0]["targetAgentIds"], json!([third["agentId"]]));
}

#[tokio::test]
async fn attach_rejects_bad_selections_and_invalid_capabilities() {
    let m = common::start(1).await;
    let id = common::create(&m).await;
    m.err(
        "session.agent.attach",
        json!({"sessionId": id, "agent": {"kind": "adapter"}}),
        "invalid_request",
    )
    .await;
    m.err(
        "session.agent.attach",
        json!({"sessionId": id, "agent": {"kind": "persona"}}),
        "invalid_request",
    )
    .await;
    m.err("session.agent.attach", json!({"sessionId": id}), "invalid_request")
        .await;
    m.err(
        "session.agent.attach",
        json!({"sessionId": "ghost", "agent": claude()}),
        "not_found",
    )
    .await;

    // Structure: lifecycle.release is required, modes and event types come from closed sets.
    let mut no_release = caps(&["immediate"], false, &[]);
    no_release["lifecycle"] = json!({});
    let e = m
        .err(
            "session.agent.attach",
            json!({"sessionId": id, "agent": claude(), "capabilities": no_release}),
            "invalid_request",
        )
        .await;
    assert!(e.error.message.contains("release"), "{e}");
    m.err(
        "session.agent.attach",
        json!({"sessionId": id, "agent": claude(), "capabilities": caps(&["interrupt"], false, &[])}),
        "invalid_request",
    )
    .await;
    // Rules: receive must be true, modes must not be empty; every reason is reported.
    let mut bad = caps(&[], false, &[]);
    bad["messaging"]["receive"] = json!(false);
    let e = m
        .err(
            "session.agent.attach",
            json!({"sessionId": id, "agent": claude(), "capabilities": bad}),
            "invalid_request",
        )
        .await;
    assert_eq!(
        e.error.details.as_ref().unwrap()["problems"].as_array().unwrap().len(),
        2,
        "{e:?}"
    );
    // Nothing was attached by the failed calls.
    assert_eq!(
        m.ok("session.get", json!({"sessionId": id})).await["session"]["agents"],
        json!([])
    );

    m.ok("session.close", json!({"sessionId": id})).await;
    let e = m
        .err(
            "session.agent.attach",
            json!({"sessionId": id, "agent": claude()}),
            "conflict",
        )
        .await;
    assert!(e.error.message.contains("resume it first"), "{e}");
}

#[tokio::test]
async fn declared_capabilities_are_discoverable_and_can_be_redeclared() {
    let m = common::start(1).await;
    let id = common::create(&m).await;
    let agui = json!({"identity": {"name": "Coder", "type": "claude-code"}, "tools": {"supported": true, "parallelCalls": true}});
    let declared = caps(&["immediate", "on-idle"], true, &["text", "image"]);
    let a = m
        .ok(
            "session.agent.attach",
            json!({"sessionId": id, "agent": claude(), "capabilities": declared, "agentCapabilities": agui}),
        )
        .await;
    let agent_id = a["agentId"].clone();
    let got = m.ok("session.agent.capabilities", json!({"agentId": agent_id})).await;
    assert_eq!(got["sessionId"], json!(id));
    assert_eq!(got["capabilities"], declared);
    assert_eq!(got["agentCapabilities"], agui);

    let narrower = caps(&["manual"], false, &[]);
    m.ok(
        "session.agent.declareCapabilities",
        json!({"agentId": agent_id, "capabilities": narrower}),
    )
    .await;
    let got = m.ok("session.agent.capabilities", json!({"agentId": agent_id})).await;
    assert_eq!(got["capabilities"], narrower);
    assert_eq!(
        got["agentCapabilities"], agui,
        "AG-UI document kept when not re-declared"
    );

    m.err("session.agent.capabilities", json!({"agentId": "ghost"}), "not_found")
        .await;
    m.err(
        "session.agent.declareCapabilities",
        json!({"agentId": agent_id}),
        "invalid_request",
    )
    .await;
    m.err(
        "session.agent.declareCapabilities",
        json!({"agentId": agent_id, "agentCapabilities": {"tools": true}}),
        "invalid_request",
    )
    .await;
}

#[tokio::test]
async fn release_needs_the_release_capability() {
    let m = common::start(1).await;
    let id = common::create(&m).await;
    let cannot = m
        .ok("session.agent.attach", json!({"sessionId": id, "agent": claude()}))
        .await["agentId"]
        .clone();
    let can = m
        .ok(
            "session.agent.attach",
            json!({"sessionId": id, "agent": claude(), "capabilities": caps(&["immediate"], true, &[])}),
        )
        .await["agentId"]
        .clone();

    let e = m
        .err(
            "session.agent.release",
            json!({"sessionId": id, "agentId": cannot}),
            "capability_unsupported",
        )
        .await;
    assert_eq!(e.error.details.as_ref().unwrap()["capability"], "lifecycle.release");
    assert_eq!(e.error.details.as_ref().unwrap()["agentId"], cannot);

    m.ok("session.agent.release", json!({"sessionId": id, "agentId": can}))
        .await;
    let agents = m.ok("session.get", json!({"sessionId": id})).await["session"]["agents"].clone();
    let released = agents.as_array().unwrap().iter().find(|a| a["agentId"] == can).unwrap();
    assert_eq!(released["status"], "disposed");
    // Released twice is still released.
    m.ok("session.agent.release", json!({"sessionId": id, "agentId": can}))
        .await;
    m.err(
        "session.agent.release",
        json!({"sessionId": id, "agentId": "ghost"}),
        "not_found",
    )
    .await;
}

#[tokio::test]
async fn send_message_creates_session_attaches_agent_and_opens_one_turn_at_a_time() {
    let m = common::start(1).await;
    let sent = m
        .ok(
            "session.sendMessage",
            json!({"sessionId": "new-1", "agent": claude(), "message": "Hello!"}),
        )
        .await;
    assert_eq!(sent["sessionId"], "new-1");
    let s = m.ok("session.get", json!({"sessionId": "new-1"})).await["session"].clone();
    assert_eq!(s["status"], "active");
    assert_eq!(s["agents"].as_array().unwrap().len(), 1);
    assert_eq!(s["agents"][0]["role"], "lead");

    let turns = m.ok("session.turns", json!({"sessionId": "new-1"})).await["turns"].clone();
    assert_eq!(turns.as_array().unwrap().len(), 1);
    assert_eq!(turns[0]["turnId"], sent["turnId"]);
    assert_eq!(turns[0]["turnNumber"], 1);
    assert_eq!(turns[0]["status"], "active");

    // A follow-up joins the active turn and goes to the lead.
    let follow = m
        .ok(
            "session.sendMessage",
            json!({"sessionId": "new-1", "message": "Follow-up"}),
        )
        .await;
    assert_eq!(follow["turnId"], sent["turnId"]);
    let msgs = m.ok("session.messages", json!({"sessionId": "new-1"})).await["messages"].clone();
    assert_eq!(msgs.as_array().unwrap().len(), 2);
    assert_eq!(msgs[1]["contentText"], "Follow-up");
    assert_eq!(msgs[1]["role"], "user");
    assert_eq!(msgs[1]["blocks"], json!([{"type": "text", "text": "Follow-up"}]));

    // A turn id of its own while that turn is active: a conflict that names the active turn,
    // not a database constraint.
    let e = m
        .err(
            "session.sendMessage",
            json!({"sessionId": "new-1", "message": "Another", "turnId": "my-turn"}),
            "conflict",
        )
        .await;
    let active = sent["turnId"].as_str().unwrap();
    assert!(
        e.error.message.contains(active) && !e.error.message.contains("registry_turns"),
        "{e}"
    );
}

#[tokio::test]
async fn send_message_without_agents_or_to_unknown_agents_is_rejected() {
    let m = common::start(1).await;
    // A session the send would make with no agent to take the message is not found, as another
    // workspace's session is: the two never answer differently.
    let e = m
        .err(
            "session.sendMessage",
            json!({"sessionId": "bare", "message": "hi"}),
            "not_found",
        )
        .await;
    assert_eq!(e.error.message, "session bare not found", "{e}");
    // The failed call created nothing.
    assert_eq!(
        m.ok("session.get", json!({"sessionId": "bare"})).await["session"],
        Value::Null
    );

    m.ok(
        "session.sendMessage",
        json!({"sessionId": "s", "agent": claude(), "message": "hi"}),
    )
    .await;
    m.err(
        "session.sendMessage",
        json!({"sessionId": "s", "message": "hi", "agentIds": ["ghost"]}),
        "not_found",
    )
    .await;
    m.err(
        "session.sendMessage",
        json!({"sessionId": "s", "message": "hi", "agentIds": []}),
        "invalid_request",
    )
    .await;
    m.err(
        "session.sendMessage",
        json!({"sessionId": "s", "message": "   "}),
        "invalid_request",
    )
    .await;
    m.err(
        "session.sendMessage",
        json!({"sessionId": "s", "message": {"blocks": []}}),
        "invalid_request",
    )
    .await;
    m.err(
        "session.sendMessage",
        json!({"sessionId": "s", "message": {"blocks": [{"text": "no type"}]}}),
        "invalid_request",
    )
    .await;
    m.err(
        "session.sendMessage",
        json!({"sessionId": "s", "message": "hi", "deliveryMode": "now"}),
        "invalid_request",
    )
    .await;
    m.ok("session.close", json!({"sessionId": "s"})).await;
    let e = m
        .err(
            "session.sendMessage",
            json!({"sessionId": "s", "message": "hi"}),
            "conflict",
        )
        .await;
    assert!(e.error.message.contains("resume it first"), "{e}");
}

#[tokio::test]
async fn messages_needing_undeclared_capabilities_fail_and_store_nothing() {
    let m = common::start(1).await;
    let id = common::create(&m).await;
    let text_only = m
        .ok("session.agent.attach", json!({"sessionId": id, "agent": claude()}))
        .await["agentId"]
        .clone();
    let image = json!({"blocks": [{"type": "text", "text": "look"}, {"type": "image", "data": "iVBORw0", "mimeType": "image/png"}]});

    let e = m
        .err(
            "session.sendMessage",
            json!({"sessionId": id, "message": image}),
            "capability_unsupported",
        )
        .await;
    assert_eq!(e.error.details.as_ref().unwrap()["agentId"], text_only);
    let e = m
        .err(
            "session.sendMessage",
            json!({"sessionId": id, "message": "later", "delivery": {"mode": "on-idle"}}),
            "capability_unsupported",
        )
        .await;
    assert!(e.error.message.contains("on-idle"), "{e}");
    assert_eq!(
        m.ok("session.messages", json!({"sessionId": id})).await["messages"],
        json!([])
    );

    let seeing = m
        .ok("session.agent.attach", json!({"sessionId": id, "agent": claude(), "capabilities": caps(&["immediate", "on-idle"], false, &["text", "image"])}))
        .await["agentId"]
        .clone();
    m.ok(
        "session.sendMessage",
        json!({"sessionId": id, "message": image, "agentIds": [seeing]}),
    )
    .await;
    let sent = m
        .ok(
            "session.sendMessage",
            json!({"sessionId": id, "message": "later", "agentIds": [seeing], "delivery": {"mode": "on-idle"}}),
        )
        .await;
    let msgs = m.ok("session.messages", json!({"sessionId": id})).await["messages"].clone();
    assert_eq!(msgs.as_array().unwrap().len(), 2);
    assert_eq!(msgs[1]["messageId"], sent["messageId"]);
    assert_eq!(msgs[1]["deliveryMode"], "on-idle");
}

#[tokio::test]
async fn a_retried_send_with_the_same_message_id_is_stored_once() {
    let m = common::start(1).await;
    let req = json!({"sessionId": "idem", "agent": claude(), "message": "once", "messageId": "msg-1"});
    let first = m.ok("session.sendMessage", req.clone()).await;
    let again = m.ok("session.sendMessage", req).await;
    assert_eq!(first, again);
    assert_eq!(first["messageId"], "msg-1");
    assert_eq!(
        m.ok("session.messages", json!({"sessionId": "idem"})).await["messages"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    m.ok("session.create", json!({"sessionId": "other"})).await;
    m.err(
        "session.sendMessage",
        json!({"sessionId": "other", "agent": claude(), "message": "x", "messageId": "msg-1"}),
        "conflict",
    )
    .await;
}

#[tokio::test]
async fn broadcast_turn_completes_when_every_target_reports_and_fails_if_one_errors() {
    let m = common::start(1).await;
    let id = common::create(&m).await;
    let a = m
        .ok("session.agent.attach", json!({"sessionId": id, "agent": claude()}))
        .await["agentId"]
        .clone();
    let b = m
        .ok("session.agent.attach", json!({"sessionId": id, "agent": claude()}))
        .await["agentId"]
        .clone();

    let sent = m
        .ok(
            "session.sendMessage",
            json!({"sessionId": id, "message": "What do you all think?", "agentIds": "all"}),
        )
        .await;
    let mid = sent["messageId"].clone();
    m.ok(
        "session.user_message.acknowledge",
        json!({"sessionId": id, "messageId": mid, "agentId": a}),
    )
    .await;
    let done_a = m
        .ok(
            "session.user_message.complete",
            json!({"sessionId": id, "messageId": mid, "agentId": a, "outcome": "completed"}),
        )
        .await;
    assert_eq!(done_a["turnCompleted"], false, "b is still working");
    // Same outcome again is a harmless retry; a different one is a conflict.
    m.ok(
        "session.user_message.complete",
        json!({"sessionId": id, "messageId": mid, "agentId": a, "outcome": "completed"}),
    )
    .await;
    m.err(
        "session.user_message.complete",
        json!({"sessionId": id, "messageId": mid, "agentId": a, "outcome": "error"}),
        "conflict",
    )
    .await;

    let done_b = m
        .ok(
            "session.user_message.complete",
            json!({"sessionId": id, "messageId": mid, "agentId": b, "outcome": "completed"}),
        )
        .await;
    assert_eq!(done_b["turnCompleted"], true);
    let turns = m.ok("session.turns", json!({"sessionId": id})).await["turns"].clone();
    assert_eq!(turns[0]["status"], "completed");
    assert!(turns[0]["completedAt"].is_i64());

    // The next message opens turn 2; an error outcome fails it.
    let next = m
        .ok("session.sendMessage", json!({"sessionId": id, "message": "again"}))
        .await;
    assert_ne!(next["turnId"], sent["turnId"]);
    m.ok("session.user_message.complete", json!({"sessionId": id, "messageId": next["messageId"], "agentId": a, "outcome": "error", "error": "model overloaded"}))
        .await;
    let turns = m.ok("session.turns", json!({"sessionId": id})).await["turns"].clone();
    assert_eq!(turns[1]["turnNumber"], 2);
    assert_eq!(turns[1]["status"], "error");
    assert_eq!(turns[1]["error"], "model overloaded");

    // Reports about messages or agents the registry does not know are not_found.
    m.err(
        "session.user_message.complete",
        json!({"sessionId": id, "messageId": "ghost", "agentId": a, "outcome": "completed"}),
        "not_found",
    )
    .await;
    m.err(
        "session.user_message.acknowledge",
        json!({"sessionId": id, "messageId": mid, "agentId": "ghost"}),
        "not_found",
    )
    .await;
    m.err(
        "session.user_message.complete",
        json!({"sessionId": id, "messageId": mid, "agentId": a, "outcome": "exploded"}),
        "invalid_request",
    )
    .await;
}

#[tokio::test]
async fn search_finds_sessions_by_message_content_with_stemming() {
    let m = common::start(1).await;
    m.ok(
        "session.sendMessage",
        json!({"sessionId": "auth", "agent": claude(), "message": "The authentication bug breaks login"}),
    )
    .await;
    m.ok(
        "session.sendMessage",
        json!({"sessionId": "css", "agent": claude(), "message": "Fix the button colours"}),
    )
    .await;
    m.ok(
        "session.sendMessage",
        json!({"sessionId": "both", "agent": claude(), "message": "bugs everywhere, also the buttons"}),
    )
    .await;

    let hits = m
        .ok("session.search", json!({"query": "authentication bug", "limit": 20}))
        .await;
    assert_eq!(hits["total"], 1);
    assert_eq!(hits["sessions"][0]["sessionId"], "auth");
    assert_eq!(
        hits["sessions"][0]["preview"]["messageCount"], 1,
        "search always includes the preview"
    );

    let bugs = m.ok("session.search", json!({"query": "bug"})).await;
    let mut ids: Vec<_> = bugs["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    assert_eq!(ids, vec!["auth", "both"], "`bug` matches `bugs`");

    m.ok("session.close", json!({"sessionId": "both"})).await;
    assert_eq!(
        m.ok("session.search", json!({"query": "bug", "status": "active"}))
            .await["total"],
        1
    );
    assert_eq!(
        m.ok("session.search", json!({"query": "nothing matches this"})).await["total"],
        0
    );
    // Garbage query syntax is not an error: web-search syntax never fails to parse.
    m.ok("session.search", json!({"query": "&&(( !!"})).await;
    m.err("session.search", json!({"query": "  "}), "invalid_request").await;
    m.err("session.search", json!({}), "invalid_request").await;
}

#[tokio::test]
async fn get_by_adapter_session_id_finds_the_session_of_an_attached_agent() {
    let m = common::start(1).await;
    let id = common::create(&m).await;
    m.ok(
        "session.agent.attach",
        json!({"sessionId": id, "agent": claude(), "adapterSessionId": "claude-code-abc"}),
    )
    .await;
    let got = m
        .ok(
            "session.getByAdapterSessionId",
            json!({"adapterSessionId": "claude-code-abc"}),
        )
        .await;
    assert_eq!(got["session"]["sessionId"], json!(id));
    assert_eq!(got["session"]["adapterSessionId"], "claude-code-abc");
    assert_eq!(
        m.ok("session.getByAdapterSessionId", json!({"adapterSessionId": "nope"}))
            .await,
        json!({"session": null})
    );
}

#[tokio::test]
async fn resolve_agent_config_maps_selections_to_adapters() {
    let m = common::start(1).await;
    let r = m
        .ok("session.resolveAgentConfig", json!({"selection": {"kind": "adapter", "adapterName": "openai-node", "model": "gpt-4o", "providerConfigId": "p"}}))
        .await;
    assert_eq!(
        r,
        json!({"adapterName": "openai-node", "model": "gpt-4o", "providerConfigId": "p"})
    );
    let r = m
        .ok(
            "session.resolveAgentConfig",
            json!({"selection": {"kind": "canonical-model", "model": "gemini-2.5-pro"}}),
        )
        .await;
    assert_eq!(r["adapterName"], "gemini");
    let r = m
        .ok(
            "session.resolveAgentConfig",
            json!({"selection": {"kind": "canonical-model", "model": "gpt-5"}}),
        )
        .await;
    assert_eq!(r["adapterName"], "codex");
    m.err(
        "session.resolveAgentConfig",
        json!({"selection": {"kind": "canonical-model", "model": "llama-3"}}),
        "invalid_request",
    )
    .await;
    m.err(
        "session.resolveAgentConfig",
        json!({"selection": {"kind": "canonical-model"}}),
        "invalid_request",
    )
    .await;
    m.err(
        "session.resolveAgentConfig",
        json!({"selection": {"kind": "adapter", "reasoningEffort": "max"}}),
        "invalid_request",
    )
    .await;
}

#[tokio::test]
async fn usage_is_acknowledged_for_known_sessions_only() {
    let m = common::start(1).await;
    let id = common::create(&m).await;
    let usage = json!({"sessionId": id, "adapterCount": 1, "totalCalls": 3, "totalInputTokens": 100, "totalOutputTokens": 50, "totalTokens": 150});
    assert_eq!(
        m.ok("session.usage", usage.clone()).await,
        json!({"acknowledged": true})
    );
    let mut ghost = usage.clone();
    ghost["sessionId"] = json!("ghost");
    m.err("session.usage", ghost, "not_found").await;
    let mut negative = usage;
    negative["totalTokens"] = json!(-1);
    m.err("session.usage", negative, "invalid_request").await;
}

#[tokio::test]
async fn concurrent_first_messages_to_a_new_session_create_it_once() {
    let m = common::start(2).await;
    let mut sends = Vec::new();
    for i in 0..16 {
        let client = m.client.clone();
        let body = json!({"sessionId": "racy", "agent": claude(), "message": format!("hello {i}")});
        sends.push(tokio::spawn(async move {
            relay_testkit::call_json(&client, "session.sendMessage", body).await
        }));
    }
    let mut turns = std::collections::HashSet::new();
    for s in sends {
        let sent = s.await.unwrap().expect("every first message succeeds");
        turns.insert(sent["turnId"].as_str().unwrap().to_string());
    }
    assert_eq!(turns.len(), 1, "one turn for all of them");
    let s = m.ok("session.get", json!({"sessionId": "racy"})).await["session"].clone();
    assert_eq!(s["agents"].as_array().unwrap().len(), 1, "auto-attached once");
    assert_eq!(
        m.ok("session.messages", json!({"sessionId": "racy"})).await["messages"]
            .as_array()
            .unwrap()
            .len(),
        16
    );
    let pool = m.db.pool().await;
    let created: i64 = sqlx::query_scalar("SELECT count(*) FROM registry_events WHERE type = 'created'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(created, 1);
}

#[tokio::test]
async fn naming_an_agent_twice_in_agent_ids_is_invalid() {
    let m = common::start(1).await;
    let sent = m
        .ok(
            "session.sendMessage",
            json!({"sessionId": "d", "agent": claude(), "message": "hi"}),
        )
        .await;
    let lead = m.ok("session.get", json!({"sessionId": "d"})).await["session"]["leadAgentId"].clone();
    let e = m
        .err(
            "session.sendMessage",
            json!({"sessionId": "d", "message": "x", "agentIds": [lead, lead]}),
            "invalid_request",
        )
        .await;
    assert!(e.error.message.contains("twice"), "{e}");
    assert_eq!(sent["sessionId"], "d");
}

#[tokio::test]
async fn messages_and_lists_page_and_never_exceed_one_nats_message() {
    let m = common::start(1).await;
    for i in 0..7 {
        m.ok(
            "session.sendMessage",
            json!({"sessionId": "p", "agent": claude(), "message": format!("m{i}")}),
        )
        .await;
    }
    let mut texts = Vec::new();
    let mut cursor = None::<i64>;
    let mut pages = 0;
    loop {
        let page = m
            .ok(
                "session.messages",
                json!({"sessionId": "p", "limit": 3, "cursor": cursor}),
            )
            .await;
        texts.extend(
            page["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x["contentText"].as_str().unwrap().to_string()),
        );
        pages += 1;
        match page.get("nextCursor").and_then(Value::as_i64) {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(texts, (0..7).map(|i| format!("m{i}")).collect::<Vec<_>>());
    m.err(
        "session.messages",
        json!({"sessionId": "p", "limit": 0}),
        "invalid_request",
    )
    .await;
    m.err(
        "session.messages",
        json!({"sessionId": "p", "cursor": -1}),
        "invalid_request",
    )
    .await;

    // Three 400 kB messages and three sessions with 400 kB titles: 1.2 MB would not fit.
    let big = "w".repeat(400_000);
    for i in 0..3 {
        m.ok(
            "session.sendMessage",
            json!({"sessionId": "big", "agent": claude(), "message": format!("{i}{big}")}),
        )
        .await;
        m.ok("session.create", json!({"sessionId": format!("t{i}"), "title": big}))
            .await;
    }
    let page = m.ok("session.messages", json!({"sessionId": "big"})).await;
    let n = page["messages"].as_array().unwrap().len() as i64;
    assert!(
        n < 3 && page["nextCursor"] == json!(n),
        "{n} messages, nextCursor {}",
        page["nextCursor"]
    );
    let list = m.ok("session.list", json!({"limit": 10})).await;
    assert_eq!(list["total"], 5);
    assert!(
        list["sessions"].as_array().unwrap().len() < 5,
        "cut to fit; the caller pages on with offset"
    );
}
