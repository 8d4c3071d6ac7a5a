//! The registry together with the event log: purge deletes the session's events from both.

use relay_testkit::{Database, Nats, ServiceProcess, call_json};
use serde_json::{Value, json};

const REGISTRY: &str = env!("CARGO_BIN_EXE_session-registry");

#[tokio::test]
async fn purge_deletes_the_sessions_events_from_the_event_log_and_waits_for_it() {
    let nats = Nats::start().await;
    let db = Database::create().await;
    let client = nats.client().await;
    let _registry = ServiceProcess::spawn(
        REGISTRY,
        &nats,
        &db,
        &[("RELAY_REGISTRY__HAND_OVER_DELIVERIES", "false")],
    );
    let mut ingest = ServiceProcess::spawn(&relay_testkit::bin_path("event-ingest"), &nats, &db, &[]);
    relay_testkit::wait_for_instances(&client, "session-registry", 1).await;
    relay_testkit::wait_for_instances(&client, "event-ingest", 1).await;
    let ok = |subject: &'static str, body: Value| {
        let client = client.clone();
        async move {
            call_json(&client, subject, body)
                .await
                .unwrap_or_else(|e| panic!("{subject}: {e}"))
        }
    };

    for id in ["gone", "kept"] {
        ok("session.create", json!({"sessionId": id})).await;
        let events: Vec<Value> = (0..5)
            .map(|i| json!({"type": "log", "sessionId": id, "payload": {"level": "info", "message": format!("{i}")}}))
            .collect();
        ok("event.append", json!({"events": events})).await;
        ok("session.close", json!({"sessionId": id})).await;
        ok("session.archive", json!({"sessionId": id})).await;
    }

    // The registry's own events reach the log as session.<type>, in order.
    ok("session.create", json!({"sessionId": "base"})).await;
    ok(
        "session.fork",
        json!({"sourceSessionId": "base", "existingSessionId": "child"}),
    )
    .await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let forwarded = loop {
        let page = ok("event.query", json!({"sessionIds": ["gone", "kept", "base", "child"], "types": ["session.created", "session.closed", "session.archived", "session.forked"]})).await;
        let types: Vec<String> = page["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| format!("{} {}", e["sessionId"].as_str().unwrap(), e["type"].as_str().unwrap()))
            .collect();
        if types.len() == 9 || std::time::Instant::now() > deadline {
            break types;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(
        forwarded,
        [
            "gone session.created",
            "gone session.closed",
            "gone session.archived",
            "kept session.created",
            "kept session.closed",
            "kept session.archived",
            "base session.created",
            "child session.created",
            "base session.forked"
        ]
    );

    let purged = ok("session.purge", json!({"sessionId": "gone"})).await;
    // 5 appended directly + created, closed, archived forwarded by the registry, each counted once.
    assert_eq!(purged, json!({"success": true, "eventsDeleted": 8}));
    // Left in the log: kept's 8 events, and of gone only the record that it was purged.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let left = loop {
        let page = ok("event.query", json!({"sessionIds": ["gone", "kept"]})).await;
        let left: Vec<String> = page["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| format!("{} {}", e["sessionId"].as_str().unwrap(), e["type"].as_str().unwrap()))
            .collect();
        if left.len() == 9 || std::time::Instant::now() > deadline {
            break left;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(left.iter().filter(|e| e.starts_with("kept ")).count(), 8, "{left:?}");
    assert_eq!(left.last().unwrap(), "gone session.purged", "{left:?}");

    // With the event log down, purge refuses (retryably) and the session stays archived.
    ingest.kill9().await;
    relay_testkit::wait_until_unserved(&client, "event.purgeSession").await;
    let e = call_json(&client, "session.purge", json!({"sessionId": "kept"}))
        .await
        .unwrap_err();
    assert_eq!(e.code().as_str(), "unavailable", "{e}");
    assert!(e.error.retryable);
    assert_eq!(
        ok("session.get", json!({"sessionId": "kept"})).await["session"]["status"],
        "archived"
    );
}

/// A backlog bigger than one NATS message (600 messages of 3 KB queued while the log was
/// down) is forwarded in several requests once it is back, none lost.
#[tokio::test]
async fn a_large_backlog_reaches_the_event_log_once_it_is_back() {
    let nats = Nats::start().await;
    let db = Database::create().await;
    let client = nats.client().await;
    let _registry = ServiceProcess::spawn(REGISTRY, &nats, &db, &[]);
    relay_testkit::wait_for_instances(&client, "session-registry", 1).await;
    let text = "z".repeat(3000);
    let agent = json!({"kind": "adapter", "adapterName": "claude"});
    for i in 0..600 {
        let body = json!({"sessionId": format!("b{}", i % 10), "agent": agent, "message": format!("{i} {text}")});
        call_json(&client, "session.sendMessage", body).await.unwrap();
    }
    let _ingest = ServiceProcess::spawn(&relay_testkit::bin_path("event-ingest"), &nats, &db, &[]);
    relay_testkit::wait_for_instances(&client, "event-ingest", 1).await;
    // Wait until the outbox is drained, then count what the log holds.
    let pool = db.pool().await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let pending: i64 = sqlx::query_scalar("SELECT count(*) FROM registry_events WHERE NOT forwarded")
            .fetch_one(&pool)
            .await
            .unwrap();
        if pending == 0 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{pending} events still not forwarded"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    // Count across pages (each page fits one NATS message).
    let (mut total, mut cursor) = (0, None::<i64>);
    loop {
        let page = call_json(
            &client,
            "event.query",
            json!({"types": ["session.user_message.sent"], "cursor": cursor}),
        )
        .await
        .unwrap();
        total += page["events"].as_array().unwrap().len();
        match page.get("nextCursor").and_then(Value::as_i64) {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    assert_eq!(total, 600);
    let refused: i64 = sqlx::query_scalar("SELECT count(*) FROM registry_events WHERE forward_error IS NOT NULL")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(refused, 0);
}
