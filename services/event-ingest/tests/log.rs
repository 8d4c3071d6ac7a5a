//! The event log over the wire: append, query, since, filters, idempotency, validation,
//! redaction, live publishing, retention.

mod common;
use common::tool;
use futures::StreamExt;
use serde_json::{Value, json};
use std::time::Duration;

#[tokio::test]
async fn append_then_query_then_since_return_the_events_with_their_envelope() {
    let log = common::start(1, &[]).await;
    let one = log.ok("event.append", json!({"eventId": "e-1", "type": "status.changed", "sessionId": "s1", "agentName": "coder", "payload": {"status": "active"}})).await;
    assert_eq!(
        one,
        json!({"appended": [{"eventId": "e-1", "seq": 1, "duplicate": false}]})
    );
    let batch = log
        .ok(
            "event.append",
            json!({"events": [tool(0, "s1"), tool(1, "s2"), tool(2, "s1")]}),
        )
        .await;
    let seqs: Vec<i64> = batch["appended"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["seq"].as_i64().unwrap())
        .collect();
    assert_eq!(seqs, [2, 3, 4]);

    let all = log.ok("event.query", json!({})).await;
    let events = all["events"].as_array().unwrap();
    assert_eq!(events.len(), 4);
    assert!(all.get("nextCursor").is_none(), "one page holds everything");
    let first = &events[0];
    assert_eq!(first["eventId"], "e-1");
    assert_eq!(first["type"], "status.changed");
    assert_eq!(first["sessionSeq"], 1);
    assert_eq!(first["agentName"], "coder");
    assert_eq!(first["payload"], json!({"status": "active"}));
    assert!(first["ts"].as_i64().unwrap() > 1_700_000_000_000);
    // Per-session order: s1 has seq 1, 2, 4 → sessionSeq 1, 2, 3; s2 starts at 1.
    let session_seqs: Vec<(Value, Value)> = events
        .iter()
        .map(|e| (e["sessionId"].clone(), e["sessionSeq"].clone()))
        .collect();
    assert_eq!(
        session_seqs,
        [
            (json!("s1"), json!(1)),
            (json!("s1"), json!(2)),
            (json!("s2"), json!(1)),
            (json!("s1"), json!(3))
        ]
    );

    let since = log.ok("event.since", json!({"seq": 2})).await;
    assert_eq!(
        since["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["seq"].as_i64().unwrap())
            .collect::<Vec<_>>(),
        [3, 4]
    );
    assert_eq!(since["nextSeq"], 4);
    assert_eq!(since["headSeq"], 4);
    let empty = log.ok("event.since", json!({"seq": 4})).await;
    assert_eq!(empty, json!({"events": [], "nextSeq": 4, "headSeq": 4}));
}

#[tokio::test]
async fn filters_select_by_type_agent_session_and_time_and_pages_walk_everything() {
    let log = common::start(1, &[]).await;
    let mut events = Vec::new();
    for i in 0..30 {
        let (t, payload) = if i % 3 == 0 {
            ("log", json!({"level": "info", "message": format!("m{i}")}))
        } else {
            ("tool.called", json!({"tool": "grep"}))
        };
        events.push(json!({"type": t, "ts": 1_000 + i, "sessionId": format!("s{}", i % 2), "agentId": format!("a{}", i % 5), "payload": payload}));
    }
    log.ok("event.append", json!({"events": events})).await;

    let count = |v: &Value| v["events"].as_array().unwrap().len();
    assert_eq!(count(&log.ok("event.query", json!({"types": ["log"]})).await), 10);
    assert_eq!(count(&log.ok("event.query", json!({"sessionIds": ["s1"]})).await), 15);
    assert_eq!(count(&log.ok("event.query", json!({"agents": ["a0", "a1"]})).await), 12);
    assert_eq!(
        count(&log.ok("event.query", json!({"since": 1010, "until": 1020})).await),
        10
    );
    assert_eq!(
        count(
            &log.ok("event.query", json!({"types": ["log"], "sessionIds": ["s0"]}))
                .await
        ),
        5
    );
    assert_eq!(
        count(&log.ok("event.since", json!({"seq": 0, "types": ["tool.called"]})).await),
        20
    );

    // Pages of 7 via the cursor visit every event once, in order.
    let (mut seen, mut cursor) = (Vec::new(), None::<i64>);
    loop {
        let page = log.ok("event.query", json!({"limit": 7, "cursor": cursor})).await;
        seen.extend(
            page["events"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["seq"].as_i64().unwrap()),
        );
        match page.get("nextCursor").and_then(Value::as_i64) {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    assert_eq!(seen, (1..=30).collect::<Vec<i64>>());

    log.err("event.query", json!({"limit": 0}), "invalid_request").await;
    log.err("event.since", json!({"seq": -1}), "invalid_request").await;
    log.err("event.since", json!({}), "invalid_request").await;
}

#[tokio::test]
async fn a_retried_append_is_stored_once() {
    let log = common::start(1, &[]).await;
    let req = json!({"events": [{"eventId": "x", "type": "log", "payload": {"level": "info", "message": "hi"}}, {"eventId": "y", "type": "tool.called", "payload": {"tool": "ls"}}]});
    let first = log.ok("event.append", req.clone()).await;
    let again = log.ok("event.append", req).await;
    assert_eq!(
        first["appended"][0],
        json!({"eventId": "x", "seq": 1, "duplicate": false})
    );
    assert_eq!(
        again["appended"][0],
        json!({"eventId": "x", "seq": 1, "duplicate": true})
    );
    assert_eq!(
        again["appended"][1],
        json!({"eventId": "y", "seq": 2, "duplicate": true})
    );
    // The same id twice in one batch, next to a new one.
    let mixed = log
        .ok(
            "event.append",
            json!({"events": [
                {"eventId": "z", "type": "log", "payload": {"level": "info", "message": "1"}},
                {"eventId": "z", "type": "log", "payload": {"level": "info", "message": "2"}},
            ]}),
        )
        .await;
    assert_eq!(
        mixed["appended"],
        json!([{"eventId": "z", "seq": 3, "duplicate": false}, {"eventId": "z", "seq": 3, "duplicate": true}])
    );
    assert_eq!(common::replay_all(&log).await.len(), 3);
    assert_eq!(
        log.ok("event.since", json!({"seq": 0})).await["headSeq"],
        3,
        "no seq burned by duplicates"
    );
}

#[tokio::test]
async fn invalid_events_reject_the_request_and_unknown_types_are_kept() {
    let log = common::start(1, &[]).await;
    let e = log
        .err("event.append", json!({"events": [tool(0, "s"), {"type": "tool.called", "payload": {}}, {"type": "status.changed", "payload": {"status": 1}}]}), "invalid_request")
        .await;
    let problems = e.error.details.as_ref().unwrap()["problems"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(problems.len(), 2);
    assert_eq!(problems[0]["index"], 1);
    assert!(problems[0]["reason"].as_str().unwrap().contains("payload.tool"));
    assert_eq!(problems[1]["index"], 2);
    assert_eq!(
        common::replay_all(&log).await.len(),
        0,
        "nothing stored from a rejected request"
    );

    log.ok(
        "event.append",
        json!({"type": "vendor.thing.happened", "payload": {"anything": [1, 2]}}),
    )
    .await;
    let kept = common::replay_all(&log).await;
    assert_eq!(kept[0]["type"], "vendor.thing.happened");
    assert_eq!(kept[0]["payload"], json!({"anything": [1, 2]}));

    log.err("event.append", json!({"events": []}), "invalid_request").await;
    log.err(
        "event.append",
        json!({"type": "log", "payload": [1]}),
        "invalid_request",
    )
    .await;
    log.err("event.append", json!({"type": "bad..type"}), "invalid_request")
        .await;
    log.err("event.append", json!({"payload": {}}), "invalid_request").await;
    let reply = log.client.request("event.append", "{oops".into()).await.unwrap();
    assert_eq!(
        reply.headers.unwrap().get("Nats-Service-Error-Code").unwrap().as_str(),
        "400"
    );
}

#[tokio::test]
async fn secrets_in_terminal_and_tool_events_are_redacted_before_storage() {
    let log = common::start(1, &[]).await;
    log.ok("event.append", json!({"events": [
        {"type": "terminal.output", "payload": {"text": "$ export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx\nok"}},
        {"type": "tool.called", "payload": {"tool": "bash", "input": {"command": "psql postgres://app:hunter2@db/app"}}},
        {"type": "status.changed", "payload": {"status": "active", "reason": "sk-proj-abcdefghijklmnopqrstuvwx stays: not a redacted type"}},
    ]})).await;
    let stored = common::replay_all(&log).await;
    let text = stored[0]["payload"]["text"].as_str().unwrap();
    assert!(!text.contains("sk-proj") && text.contains("[REDACTED]"), "{text}");
    assert_eq!(
        stored[1]["payload"]["input"]["command"],
        "psql postgres://app:[REDACTED]@db/app"
    );
    assert!(stored[2]["payload"]["reason"].as_str().unwrap().contains("sk-proj"));
    // And in Postgres itself, not only in replies.
    let pool = log.db.pool().await;
    let leaked: i64 = sqlx::query_scalar("SELECT count(*) FROM events WHERE payload::text LIKE '%hunter2%'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(leaked, 0);
}

#[tokio::test]
async fn committed_events_are_published_live_with_their_seq() {
    let log = common::start(1, &[]).await;
    let mut live = log.client.subscribe("event.committed.>").await.unwrap();
    log.client.flush().await.unwrap();
    log.ok("event.append", json!({"events": [tool(0, "s"), tool(1, "s")]}))
        .await;
    log.err(
        "event.append",
        json!({"type": "tool.called", "payload": {}}),
        "invalid_request",
    )
    .await;
    log.ok(
        "event.append",
        json!({"type": "log", "payload": {"level": "warn", "message": "careful"}}),
    )
    .await;

    // Publishing runs beside the reply: wait for each of the three, then make sure no more come.
    let mut got = Vec::new();
    for _ in 0..3 {
        let msg = tokio::time::timeout(Duration::from_secs(10), live.next())
            .await
            .expect("a committed event is published")
            .unwrap();
        let e: Value = serde_json::from_slice(&msg.payload).unwrap();
        got.push((msg.subject.to_string(), e["seq"].as_i64().unwrap()));
    }
    let extra = tokio::time::timeout(Duration::from_millis(300), live.next()).await;
    assert!(extra.is_err(), "more published than committed: {extra:?}");
    assert_eq!(
        got,
        [
            ("event.committed.tool.called".to_string(), 1),
            ("event.committed.tool.called".to_string(), 2),
            ("event.committed.log".to_string(), 3)
        ]
    );
}

#[tokio::test]
async fn an_agents_session_events_also_reach_the_session_event_catch_all() {
    let log = common::start(1, &[]).await;
    let mut catch_all = log.client.subscribe("session.event").await.unwrap();
    log.client.flush().await.unwrap();
    log.ok(
        "event.append",
        json!({"events": [
            tool(0, "s1"),
            {"type": "log", "payload": {"level": "info", "message": "no session"}},
            {"type": "session.created", "sessionId": "s1", "payload": {"sessionId": "s1", "createdAt": 1}},
        ]}),
    )
    .await;
    let msg = tokio::time::timeout(Duration::from_secs(5), catch_all.next())
        .await
        .unwrap()
        .unwrap();
    let envelope: Value = serde_json::from_slice(&msg.payload).unwrap();
    assert_eq!(envelope["type"], "tool.called");
    assert_eq!(envelope["sessionId"], "s1");
    assert_eq!(envelope["seq"], 1);
    assert_eq!(envelope["payload"]["tool"], "bash");
    assert!(envelope["eventId"].is_string() && envelope["timestamp"].is_i64());
    // Neither the sessionless log line nor the registry's own session.created comes here.
    assert!(
        tokio::time::timeout(Duration::from_millis(500), catch_all.next())
            .await
            .is_err()
    );
}

#[tokio::test]
async fn retention_deletes_expired_events_and_purge_deletes_a_sessions_events() {
    let env = [
        ("RELAY_INGEST__RETENTION_MS", "60000"),
        ("RELAY_INGEST__RETENTION_INTERVAL_MS", "100"),
        ("RELAY_INGEST__RETENTION_BATCH", "7"),
    ];
    let log = common::start(1, &env).await;
    let now = relay_bus::now_ms();
    let mut events = Vec::new();
    for i in 0..50 {
        events.push(json!({"type": "log", "ts": now - 3_600_000 + i, "payload": {"level": "info", "message": "old"}}));
    }
    for i in 0..5 {
        events.push(
            json!({"type": "log", "ts": now + i, "sessionId": "keep", "payload": {"level": "info", "message": "new"}}),
        );
    }
    log.ok("event.append", json!({"events": events})).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let left = common::replay_all(&log).await.len();
        if left == 5 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{left} events left, expected the 5 recent ones"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Appends carry on, seqs keep climbing.
    let next = log
        .ok(
            "event.append",
            json!({"type": "log", "payload": {"level": "info", "message": "after"}}),
        )
        .await;
    assert_eq!(next["appended"][0]["seq"], 56);

    assert_eq!(
        log.ok("event.purgeSession", json!({"sessionId": "keep"})).await,
        json!({"eventsDeleted": 5})
    );
    assert_eq!(common::replay_all(&log).await.len(), 1);
}

#[tokio::test]
async fn pages_larger_than_a_nats_message_are_cut_and_continue_where_they_stopped() {
    let log = common::start(1, &[]).await;
    let text = "x".repeat(1000);
    for chunk in 0..3 {
        let events: Vec<Value> = (0..600)
            .map(|i| json!({"type": "terminal.output", "payload": {"text": format!("{chunk}-{i} {text}")}}))
            .collect();
        log.ok("event.append", json!({"events": events})).await;
    }
    let first = log.ok("event.since", json!({"seq": 0, "limit": 10000})).await;
    let n = first["events"].as_array().unwrap().len();
    assert!(n > 0 && n < 1800, "a 1.8 MB page was cut ({n} events)");
    assert_eq!(first["nextSeq"], n as i64);
    assert_eq!(common::replay_all(&log).await.len(), 1800);

    let page = log.ok("event.query", json!({"limit": 10000})).await;
    assert_eq!(page["nextCursor"], page["events"].as_array().unwrap().len() as i64);
}

#[test]
fn the_reference_event_catalogue_is_the_one_in_the_contracts() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/reference/subjects.md")).unwrap();
    let table = relay_contracts::events::catalogue_markdown();
    assert!(
        readme.contains(&table),
        "docs/reference/subjects.md's event catalogue is stale; replace it with:\n{table}"
    );
}

#[tokio::test]
async fn events_postgres_or_replay_could_not_carry_are_refused_up_front() {
    let log = common::start(1, &[]).await;
    // NUL cannot be stored in Postgres text or JSONB.
    let e = log
        .err(
            "event.append",
            json!({"events": [tool(0, "s"), {"type": "log", "payload": {"level": "info", "message": "a\u{0}b"}}]}),
            "invalid_request",
        )
        .await;
    assert!(e.error.message.contains("1 invalid"), "{e}");
    // An event too big to come back in one replay page would stop every reader at its seq.
    let big = "y".repeat(950_000);
    let e = log
        .err(
            "event.append",
            json!({"type": "log", "payload": {"level": "info", "message": big}}),
            "invalid_request",
        )
        .await;
    assert!(
        e.error.details.as_ref().unwrap()["problems"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("replay page"),
        "{e:?}"
    );
    assert_eq!(common::replay_all(&log).await.len(), 0);
}

#[tokio::test]
async fn a_huge_list_of_problems_still_comes_back_as_invalid_request() {
    let log = common::start(1, &[]).await;
    let events: Vec<Value> = (0..10_000)
        .map(|_| json!({"type": "tool.called", "payload": {}}))
        .collect();
    let e = log
        .err("event.append", json!({"events": events}), "invalid_request")
        .await;
    assert!(e.error.message.contains("10000 invalid"), "{e}");
    assert_eq!(
        e.error.details,
        Some(json!({"truncated": true})),
        "details cut to fit one NATS message"
    );
}
