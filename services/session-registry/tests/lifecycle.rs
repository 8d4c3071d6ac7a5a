//! Session lifecycle over the wire: create, get, list, update, close, resume, archive, purge,
//! and the conflicts for illegal transitions.

mod common;
use serde_json::{Value, json};

#[tokio::test]
async fn create_then_get_returns_the_stored_session() {
    let m = common::start(1).await;
    let created = m
        .ok(
            "session.create",
            json!({"sessionId": "s-1", "title": "First", "targetWorkingDirectory": "/tmp/w"}),
        )
        .await;
    assert_eq!(created, json!({"sessionId": "s-1"}));
    let got = m.ok("session.get", json!({"sessionId": "s-1"})).await;
    let s = &got["session"];
    assert_eq!(s["sessionId"], "s-1");
    assert_eq!(s["status"], "active");
    assert_eq!(s["title"], "First");
    assert_eq!(s["targetWorkingDirectory"], "/tmp/w");
    assert_eq!(s["agents"], json!([]));
    assert!(
        s["createdAt"].as_i64().unwrap() > 1_700_000_000_000,
        "createdAt is Unix ms"
    );

    // A generated id when none is given.
    let generated = common::create(&m).await;
    assert!(!generated.is_empty() && generated != "s-1");
}

#[tokio::test]
async fn get_of_unknown_session_is_null_not_an_error() {
    let m = common::start(1).await;
    assert_eq!(
        m.ok("session.get", json!({"sessionId": "nope"})).await,
        json!({"session": null})
    );
}

#[tokio::test]
async fn create_with_taken_id_is_a_conflict() {
    let m = common::start(1).await;
    m.ok("session.create", json!({"sessionId": "dup"})).await;
    let e = m.err("session.create", json!({"sessionId": "dup"}), "conflict").await;
    assert!(e.error.message.contains("already exists"), "{e}");
}

#[tokio::test]
async fn create_with_unknown_parent_is_not_found() {
    let m = common::start(1).await;
    m.err("session.create", json!({"parentSessionId": "ghost"}), "not_found")
        .await;
    m.err("session.create", json!({"forkPointMessageId": "m"}), "invalid_request")
        .await;
}

#[tokio::test]
async fn close_resume_archive_purge_follow_the_state_rules() {
    let m = common::start(1).await;
    let id = common::create(&m).await;
    let sid = json!({"sessionId": id});

    // Archive and purge need a closed, then archived, session.
    let e = m.err("session.archive", sid.clone(), "conflict").await;
    assert!(e.error.message.contains("close it before archiving"), "{e}");
    let e = m.err("session.purge", sid.clone(), "conflict").await;
    assert!(e.error.message.contains("purge requires an archived session"), "{e}");

    assert_eq!(
        m.ok("session.close", json!({"sessionId": id, "reason": "done"})).await,
        json!({"success": true})
    );
    assert_eq!(m.ok("session.get", sid.clone()).await["session"]["status"], "closed");
    // Repeating a transition that already happened is harmless.
    m.ok("session.close", sid.clone()).await;

    m.ok("session.resume", sid.clone()).await;
    assert_eq!(m.ok("session.get", sid.clone()).await["session"]["status"], "active");
    m.ok("session.resume", sid.clone()).await;

    m.ok("session.close", sid.clone()).await;
    m.ok("session.archive", sid.clone()).await;
    assert_eq!(m.ok("session.get", sid.clone()).await["session"]["status"], "archived");

    // Archived sessions are read-only.
    let e = m.err("session.resume", sid.clone(), "conflict").await;
    assert!(e.error.message.contains("archived sessions cannot be resumed"), "{e}");
    m.err("session.close", sid.clone(), "conflict").await;
    m.err("session.update", json!({"sessionId": id, "title": "x"}), "conflict")
        .await;
    let e = m
        .err(
            "session.agent.attach",
            json!({"sessionId": id, "agent": {"kind": "adapter", "adapterName": "claude"}}),
            "conflict",
        )
        .await;
    assert!(e.error.message.contains("archived"), "{e}");

    let purged = m.ok("session.purge", sid.clone()).await;
    assert_eq!(purged["success"], true);
    // created, closed, resumed, closed, archived: five events existed before the purge.
    assert_eq!(purged["eventsDeleted"], 5);
    assert_eq!(m.ok("session.get", sid.clone()).await, json!({"session": null}));

    // The id stays taken and every mutation says why it fails.
    let e = m.err("session.resume", sid.clone(), "conflict").await;
    assert!(e.error.message.contains("purged"), "{e}");
    m.err("session.create", sid.clone(), "conflict").await;
    m.err(
        "session.sendMessage",
        json!({"sessionId": id, "message": "hi"}),
        "conflict",
    )
    .await;
    // A repeated purge reports nothing more deleted.
    assert_eq!(m.ok("session.purge", sid.clone()).await["eventsDeleted"], 0);
}

#[tokio::test]
async fn lifecycle_calls_on_unknown_sessions_are_not_found() {
    let m = common::start(1).await;
    for subject in [
        "session.close",
        "session.resume",
        "session.archive",
        "session.purge",
        "session.update",
        "session.getChildren",
        "session.turns",
        "session.messages",
    ] {
        m.err(subject, json!({"sessionId": "ghost"}), "not_found").await;
    }
}

#[tokio::test]
async fn update_changes_only_given_fields_and_null_clears() {
    let m = common::start(1).await;
    let id = common::create(&m).await;
    m.ok(
        "session.update",
        json!({"sessionId": id, "approvalPolicyOverride": "full-access", "executionTargetId": "box-1"}),
    )
    .await;
    let s = m.ok("session.get", json!({"sessionId": id})).await["session"].clone();
    assert_eq!(s["approvalPolicyOverride"], "full-access");
    assert_eq!(s["executionTargetId"], "box-1");

    m.ok(
        "session.update",
        json!({"sessionId": id, "approvalPolicyOverride": null}),
    )
    .await;
    let s = m.ok("session.get", json!({"sessionId": id})).await["session"].clone();
    assert!(s.get("approvalPolicyOverride").is_none(), "{s}");
    assert_eq!(s["executionTargetId"], "box-1", "absent key leaves the field alone");

    m.err(
        "session.update",
        json!({"sessionId": id, "approvalPolicyOverride": "yolo"}),
        "invalid_request",
    )
    .await;
}

#[tokio::test]
async fn list_filters_by_status_pages_and_counts() {
    let m = common::start(1).await;
    let mut ids = Vec::new();
    for i in 0..5 {
        let id = format!("l-{i}");
        m.ok(
            "session.create",
            json!({"sessionId": id, "executionTargetId": if i < 2 { "a" } else { "b" }}),
        )
        .await;
        ids.push(id);
    }
    m.ok("session.close", json!({"sessionId": "l-0"})).await;
    m.ok("session.close", json!({"sessionId": "l-1"})).await;
    m.ok("session.archive", json!({"sessionId": "l-1"})).await;

    let all = m.ok("session.list", json!({})).await;
    assert_eq!(all["total"], 5);
    assert_eq!(all["sessions"].as_array().unwrap().len(), 5);
    // Most recently active first.
    assert_eq!(all["sessions"][0]["sessionId"], "l-1");

    let active = m.ok("session.list", json!({"status": "active"})).await;
    assert_eq!(active["total"], 3);
    assert!(
        active["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["status"] == "active")
    );
    assert_eq!(m.ok("session.list", json!({"status": "archived"})).await["total"], 1);
    assert_eq!(
        m.ok("session.list", json!({"executionTargetId": "a"})).await["total"],
        2
    );

    let page1 = m.ok("session.list", json!({"limit": 2, "offset": 0})).await;
    let page2 = m.ok("session.list", json!({"limit": 2, "offset": 2})).await;
    let page3 = m.ok("session.list", json!({"limit": 2, "offset": 4})).await;
    let paged: Vec<_> = [&page1, &page2, &page3]
        .iter()
        .flat_map(|p| p["sessions"].as_array().unwrap().iter().map(|s| s["sessionId"].clone()))
        .collect();
    let unpaged: Vec<_> = all["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sessionId"].clone())
        .collect();
    assert_eq!(paged, unpaged);
    let beyond = m.ok("session.list", json!({"offset": 100})).await;
    assert_eq!(beyond, json!({"sessions": [], "total": 5}));

    m.err("session.list", json!({"limit": 0}), "invalid_request").await;
    m.err("session.list", json!({"limit": 100000}), "invalid_request").await;
    m.err("session.list", json!({"offset": -1}), "invalid_request").await;
    m.err("session.list", json!({"status": "sleeping"}), "invalid_request")
        .await;

    let counts = m.ok("session.getStatusCounts", json!({})).await;
    assert_eq!(
        counts,
        json!({"all": 5, "active": 3, "closed": 1, "archived": 1, "discovered": 0})
    );
}

#[tokio::test]
async fn list_with_preview_reports_message_count_and_first_user_message() {
    let m = common::start(1).await;
    let agent = json!({"kind": "adapter", "adapterName": "claude"});
    m.ok(
        "session.sendMessage",
        json!({"sessionId": "p", "agent": agent, "message": "first question"}),
    )
    .await;
    m.ok("session.sendMessage", json!({"sessionId": "p", "message": "second"}))
        .await;
    m.ok("session.create", json!({"sessionId": "empty"})).await;

    let list = m.ok("session.list", json!({"includePreview": true})).await;
    let find = |id: &str| {
        list["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["sessionId"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(
        find("p")["preview"],
        json!({"messageCount": 2, "firstUserMessage": "first question"})
    );
    assert_eq!(
        find("empty")["preview"],
        json!({"messageCount": 0, "firstUserMessage": null})
    );

    let plain = m.ok("session.list", json!({})).await;
    assert!(plain["sessions"][0].get("preview").is_none());
}

/// Bounded growth: a closed session quiet for `retention.archive_closed_after_ms` is archived,
/// then purged once archived and quiet for `purge_archived_after_ms` (its messages go with it);
/// an active session keeps its history, and a parent waits for its live child. Relay messages
/// are deleted after `retention.keep_ms`.
#[tokio::test]
async fn quiet_closed_sessions_are_archived_then_purged_and_live_history_stays() {
    let env = [
        ("RELAY_REGISTRY__PURGE_EVENT_LOG", "false"),
        ("RELAY_REGISTRY__FORWARD_EVENTS", "false"),
        ("RELAY_REGISTRY__HAND_OVER_DELIVERIES", "false"),
        ("RELAY_REGISTRY__RETENTION__ARCHIVE_CLOSED_AFTER_MS", "1000"),
        ("RELAY_REGISTRY__RETENTION__PURGE_ARCHIVED_AFTER_MS", "1000"),
        // Relay messages: a sweep every 5 s.
        ("RELAY_REGISTRY__RETENTION__KEEP_MS", "20000"),
    ];
    let m = relay_testkit::Cluster::start(common::BIN, "session-registry", 1, &env).await;
    let send =
        |id: &str| json!({"sessionId": id, "message": "hello", "agent": {"kind": "adapter", "adapterName": "claude"}});
    let (done, live, parent) = (
        common::create(&m).await,
        common::create(&m).await,
        common::create(&m).await,
    );
    for id in [&done, &live, &parent] {
        m.ok("session.sendMessage", send(id)).await;
    }
    let child = m.ok("session.fork", json!({"sourceSessionId": parent})).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let closing = relay_bus::now_ms();
    for id in [&done, &parent] {
        m.ok("session.close", json!({"sessionId": id})).await;
    }
    let caps = json!({"messaging": {"receive": true}, "delivery": {"modes": ["immediate"]},
                      "events": {"emits": []}, "lifecycle": {"release": true}});
    let agent = common::attach(&m, &live, "reader", caps).await;
    let dm = m.ok("message.send", json!({"to": "@reader", "text": "a note"})).await;
    let lone = m
        .ok("message.send", json!({"to": "@reader", "text": "another note"}))
        .await;
    m.ok("message.send", json!({"threadId": dm["messageId"], "text": "a reply"}))
        .await;

    let pool = m.db.pool().await;
    // Both notes an hour old; the first has a reply of now.
    sqlx::query("UPDATE registry_relay_messages SET created_at = created_at - 3600000 WHERE message_id = ANY($1)")
        .bind(vec![
            dm["messageId"].as_str().unwrap(),
            lone["messageId"].as_str().unwrap(),
        ])
        .execute(&pool)
        .await
        .unwrap();
    // The lone note is gone after its window (its copy in the recipient's session history stays
    // with the session); the thread stays whole while its reply is within it, then goes too.
    let m = &m;
    let gone = |id: Value| async move {
        let got = m.call("message.get", json!({"messageId": id})).await;
        got.err().filter(|e| e.code().as_str() == "not_found")
    };
    relay_testkit::wait_for(|| gone(lone["messageId"].clone())).await;
    let thread = m.ok("message.thread", json!({"messageId": dm["messageId"]})).await;
    assert_eq!(thread["replies"].as_array().map(Vec::len), Some(1), "{thread}");
    // Its reply past the window too: the thread goes.
    sqlx::query("UPDATE registry_relay_messages SET created_at = created_at - 3600000 WHERE thread_id = $1")
        .bind(dm["messageId"].as_str().unwrap())
        .execute(&pool)
        .await
        .unwrap();
    relay_testkit::wait_for(|| gone(dm["messageId"].clone())).await;
    let messages_of = |id: String| {
        let pool = pool.clone();
        async move {
            sqlx::query_scalar::<_, i64>("SELECT count(*) FROM registry_messages WHERE session_id = $1")
                .bind(id)
                .fetch_one(&pool)
                .await
                .unwrap()
        }
    };
    // The three relay messages are in the recipient's session too, and stay with it.
    let (parent_messages, live_messages) = (messages_of(parent.clone()).await, messages_of(live.clone()).await);
    assert!(
        parent_messages > 0 && live_messages == 4,
        "{parent_messages} {live_messages}"
    );
    // Closed, then archived, then purged: its messages go; nothing of the active one does.
    relay_testkit::wait_for(|| async {
        let got = m.ok("session.get", json!({"sessionId": done})).await;
        got["session"].is_null().then_some(())
    })
    .await;
    let e = m.err("session.resume", json!({"sessionId": done}), "conflict").await;
    assert!(e.error.message.contains("purged"), "{e}");
    assert_eq!(messages_of(done.clone()).await, 0);
    // The parent is archived but stays while its child lives.
    relay_testkit::wait_for(|| async {
        let got = m.ok("session.get", json!({"sessionId": parent})).await;
        (got["session"]["status"] == "archived").then_some(())
    })
    .await;
    assert_eq!(
        m.ok("session.get", json!({"sessionId": live})).await["session"]["status"],
        "active"
    );
    let since: i64 = sqlx::query_scalar("SELECT status_since FROM registry_sessions WHERE session_id = $1")
        .bind(&parent)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert!(
        since >= closing,
        "status_since moves with the status: {since} < {closing}"
    );
    assert_eq!(messages_of(live.clone()).await, live_messages);
    assert_eq!(
        m.ok("session.get", json!({"sessionId": child})).await["session"]["status"],
        "active"
    );
    assert_eq!(
        m.ok("agent.get", json!({"agent": agent})).await["agentId"],
        agent.as_str()
    );
    assert_eq!(
        messages_of(parent.clone()).await,
        parent_messages,
        "not purged: its child lives"
    );
}
