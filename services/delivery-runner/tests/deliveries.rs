//! Deliveries handed over with their message by the registry, read and cancelled through the runner.

use relay_testkit::{Cluster, ServiceProcess};
use serde_json::{Value, json};

const RUNNER: &str = env!("CARGO_BIN_EXE_delivery-runner");

async fn mesh() -> (Cluster, ServiceProcess) {
    mesh_with(1, &[]).await
}

/// `replicas` runners with `runner_env`, and a registry that hands them its messages.
async fn mesh_with(replicas: usize, runner_env: &[(&str, &str)]) -> (Cluster, ServiceProcess) {
    let c = Cluster::start(RUNNER, "delivery-runner", replicas, runner_env).await;
    let env = [
        ("RELAY_REGISTRY__PURGE_EVENT_LOG", "false"),
        ("RELAY_REGISTRY__FORWARD_EVENTS", "false"),
    ];
    let registry = ServiceProcess::spawn(&relay_testkit::bin_path("session-registry"), &c.nats, &c.db, &env);
    relay_testkit::wait_for_instances(&c.client, "session-registry", 1).await;
    (c, registry)
}

/// Sends `m0`, `m1`, … `m{n-1}` to `session`, one at a time; their delivery ids, in order.
async fn send_numbered(m: &Cluster, session: &str, n: usize) -> Vec<String> {
    let mut sent = Vec::new();
    for i in 0..n {
        let reply = m
            .ok(
                "session.sendMessage",
                json!({"sessionId": session, "message": format!("m{i}")}),
            )
            .await;
        sent.push(ids(&reply["deliveryIds"]).remove(0));
    }
    sent
}

fn ids(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn send_message_commits_one_delivery_per_target_with_the_message() {
    let (m, _registry) = mesh().await;
    let caps = json!({"messaging": {"receive": true}, "delivery": {"modes": ["immediate", "manual"]}, "events": {"emits": []}, "lifecycle": {"release": false}});
    let agent = json!({"kind": "adapter", "adapterName": "claude"});
    m.ok("session.create", json!({"sessionId": "s"})).await;
    let a = m
        .ok(
            "session.agent.attach",
            json!({"sessionId": "s", "agent": agent, "capabilities": caps}),
        )
        .await["agentId"]
        .clone();
    let b = m
        .ok(
            "session.agent.attach",
            json!({"sessionId": "s", "agent": agent, "capabilities": caps}),
        )
        .await["agentId"]
        .clone();

    let sent = m
        .ok(
            "session.sendMessage",
            json!({"sessionId": "s", "message": "hi all", "agentIds": "all", "delivery": {"mode": "manual"}}),
        )
        .await;
    let delivery_ids = ids(&sent["deliveryIds"]);
    assert_eq!(delivery_ids.len(), 2);

    let listed = m.ok("delivery.list", json!({"messageId": sent["messageId"]})).await;
    let deliveries = listed["deliveries"].as_array().unwrap();
    assert_eq!(deliveries.len(), 2);
    assert_eq!(deliveries[0]["deliveryId"], json!(delivery_ids[0]));
    assert_eq!(deliveries[0]["agentId"], a);
    assert_eq!(deliveries[1]["agentId"], b);
    for d in deliveries {
        assert_eq!(d["status"], "pending");
        assert_eq!(d["mode"], "manual");
        assert_eq!(d["sessionId"], "s");
        assert_eq!(d["attempts"], 0);
    }
    let one = m.ok("delivery.get", json!({"deliveryId": delivery_ids[1]})).await;
    assert_eq!(one["agentId"], b);

    // A retried send answers the same delivery ids and creates no new ones.
    let req = json!({"sessionId": "s", "message": "once", "messageId": "m-1"});
    let first = m.ok("session.sendMessage", req.clone()).await;
    assert_eq!(m.ok("session.sendMessage", req).await, first);
    assert_eq!(
        m.ok("delivery.list", json!({"sessionId": "s"})).await["deliveries"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert_eq!(
        m.ok("delivery.list", json!({"agentId": a, "status": "pending"})).await["deliveries"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    m.err("delivery.get", json!({"deliveryId": "ghost"}), "not_found").await;
    m.err("delivery.list", json!({"limit": 0}), "invalid_request").await;
    m.err("delivery.list", json!({"status": "lost"}), "invalid_request")
        .await;
}

/// Flushing an agent nobody knows is `not_found`, as pausing, resuming, stopping or typing to
/// it is (it once answered `{"flushed": 0}`).
#[tokio::test]
async fn an_unknown_agent_is_not_found_by_flush_as_by_every_agent_control() {
    let (m, _registry) = mesh().await;
    for subject in ["delivery.flush", "agent.pause", "agent.resume", "agent.stop"] {
        m.err(subject, json!({"agentId": "ghost"}), "not_found").await;
    }
    m.err("agent.input", json!({"agentId": "ghost", "data": "x"}), "not_found")
        .await;
}

#[tokio::test]
async fn cancel_stops_a_pending_delivery_once_and_purge_removes_deliveries() {
    let (m, _registry) = mesh().await;
    let agent = json!({"kind": "adapter", "adapterName": "claude"});
    let sent = m
        .ok(
            "session.sendMessage",
            json!({"sessionId": "c", "agent": agent, "message": "hello"}),
        )
        .await;
    let id = ids(&sent["deliveryIds"]).remove(0);

    let cancelled = m
        .ok(
            "delivery.cancel",
            json!({"deliveryId": id, "reason": "changed my mind"}),
        )
        .await;
    assert_eq!(cancelled["status"], "cancelled");
    assert_eq!(cancelled["reason"], "changed my mind");
    assert_eq!(
        m.ok("delivery.cancel", json!({"deliveryId": id})).await["status"],
        "cancelled",
        "twice is harmless"
    );
    m.err("delivery.cancel", json!({"deliveryId": "ghost"}), "not_found")
        .await;

    for step in ["session.close", "session.archive", "session.purge"] {
        m.ok(step, json!({"sessionId": "c"})).await;
    }
    m.err("delivery.get", json!({"deliveryId": id}), "not_found").await;
}

/// A harness for one agent: answers `agent.<id>.deliver` with the scripted receipts in turn
/// (the last one repeats) and reports each request it got.
async fn harness(
    client: &async_nats::Client,
    agent_id: &str,
    script: Vec<Value>,
) -> tokio::sync::mpsc::UnboundedReceiver<(std::time::Instant, Value)> {
    use futures::StreamExt;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let client = client.clone();
    let subject = format!("agent.{agent_id}.deliver");
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let mut sub = client.subscribe(subject).await.unwrap();
        client.flush().await.unwrap();
        ready_tx.send(()).unwrap();
        let mut n = 0;
        while let Some(msg) = sub.next().await {
            let req: Value = serde_json::from_slice(&msg.payload).unwrap();
            let mut receipt = script[n.min(script.len() - 1)].clone();
            // A scripted pause stands in for an agent taking time to take the message.
            if let Some(ms) = receipt
                .as_object_mut()
                .unwrap()
                .remove("pauseMs")
                .and_then(|v| v.as_u64())
            {
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
            }
            receipt["deliveryId"] = req["context"]["id"].clone();
            n += 1;
            let _ = tx.send((std::time::Instant::now(), req));
            client
                .publish(msg.reply.unwrap(), serde_json::to_vec(&receipt).unwrap().into())
                .await
                .unwrap();
        }
    });
    ready_rx.await.unwrap();
    rx
}

async fn attached(m: &Cluster, session: &str, modes: &[&str]) -> String {
    let caps = json!({"messaging": {"receive": true}, "delivery": {"modes": modes}, "events": {"emits": []}, "lifecycle": {"release": false}});
    m.ok("session.create", json!({"sessionId": session})).await;
    let agent = json!({"kind": "adapter", "adapterName": "claude"});
    let a = m
        .ok(
            "session.agent.attach",
            json!({"sessionId": session, "agent": agent, "capabilities": caps}),
        )
        .await;
    a["agentId"].as_str().unwrap().to_string()
}

async fn wait_status(m: &Cluster, id: &str, status: &str) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        // `not_found` until the registry's hand-off reaches a runner (after a restart, say).
        let d = match m.call("delivery.get", json!({"deliveryId": id})).await {
            Ok(d) => d,
            Err(e) if e.code() == relay_contracts::ErrorCode::NotFound => json!({"status": "not handed over yet"}),
            Err(e) => panic!("delivery.get {id}: {e}"),
        };
        if d["status"] == status {
            return d;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "delivery stayed {}, expected {status}",
            d["status"]
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn an_immediate_message_reaches_the_harness_with_its_delivery_id_and_is_delivered() {
    let (m, _registry) = mesh().await;
    let agent = attached(&m, "s", &["immediate"]).await;
    let mut seen = harness(&m.client, &agent, vec![json!({"status": "delivered"})]).await;
    let sent = m
        .ok(
            "session.sendMessage",
            json!({"sessionId": "s", "message": "do the thing"}),
        )
        .await;
    let id = ids(&sent["deliveryIds"]).remove(0);
    let d = wait_status(&m, &id, "delivered").await;
    assert_eq!(d["attempts"], 1);
    let (_, req) = seen.recv().await.unwrap();
    assert_eq!(req["context"]["id"], json!(id));
    assert_eq!(req["context"]["mode"], "immediate");
    assert_eq!(req["message"]["contentText"], "do the thing");
}

/// The registry answers a send while no runner is up (the hand-off is durable in its outbox);
/// once a runner is back, every message is created and delivered, in the order sent, once.
#[tokio::test]
async fn messages_sent_while_the_runner_is_down_are_delivered_in_order_once_it_is_back() {
    let (mut m, _registry) = mesh().await;
    let agent = attached(&m, "s", &["immediate"]).await;
    let mut seen = harness(&m.client, &agent, vec![json!({"status": "delivered"})]).await;
    m.replicas[0].kill9().await;
    relay_testkit::wait_until_unserved(&m.client, "delivery.get").await;
    let sent = send_numbered(&m, "s", 5).await;
    m.replace_first_replica().await;
    for id in &sent {
        wait_status(&m, id, "delivered").await;
    }
    // Each request was queued before its receipt went back.
    let mut got = Vec::new();
    while let Ok((_, req)) = seen.try_recv() {
        got.push(req["message"]["contentText"].as_str().unwrap().to_string());
    }
    assert_eq!(got, ["m0", "m1", "m2", "m3", "m4"]);
    let listed = m.ok("delivery.list", json!({"sessionId": "s"})).await;
    assert_eq!(listed["deliveries"].as_array().unwrap().len(), 5, "{listed}");
}

/// A message whose stored form could not travel in one NATS message is refused at send, and
/// nothing of it is stored.
#[tokio::test]
async fn a_message_too_large_to_deliver_is_refused_at_send() {
    let (m, _registry) = mesh().await;
    attached(&m, "big", &["immediate"]).await;
    let text = "x".repeat(600 * 1024);
    let e = m
        .err(
            "session.sendMessage",
            json!({"sessionId": "big", "message": text}),
            "invalid_request",
        )
        .await;
    assert!(e.to_string().contains("too large to deliver"), "{e}");
    let page = m.ok("session.messages", json!({"sessionId": "big"})).await;
    assert_eq!(page["messages"], json!([]), "{page}");
    let listed = m.ok("delivery.list", json!({"sessionId": "big"})).await;
    assert_eq!(listed["deliveries"], json!([]), "{listed}");
}

/// A hand-off entry of a purged session that arrives after the purge (a relay that timed out
/// while the runner was slow) is ignored; a later one (the session's id reused by an import)
/// is applied.
#[tokio::test]
async fn a_hand_off_entry_older_than_its_sessions_purge_is_ignored() {
    let (m, _registry) = mesh().await;
    let purged = m
        .ok("delivery.purge", json!({"sessionId": "gone", "throughSeq": 100}))
        .await;
    assert_eq!(purged["deliveriesDeleted"], 0);
    let entry = |seq: i64, id: &str| {
        json!({"seq": seq, "kind": "message", "deliveries": [{"deliveryId": id, "agentId": "a1"}],
               "message": {"messageId": format!("m-{id}"), "sessionId": "gone", "turnId": null, "role": "user",
                           "blocks": [], "contentText": "late", "timestamp": 1, "targetAgentIds": ["a1"]}})
    };
    let stale = m
        .ok("delivery.handoff", json!({"entries": [entry(99, "d-stale")]}))
        .await;
    assert_eq!(stale["created"], 0);
    m.err("delivery.get", json!({"deliveryId": "d-stale"}), "not_found")
        .await;
    let fresh = m
        .ok("delivery.handoff", json!({"entries": [entry(101, "d-fresh")]}))
        .await;
    assert_eq!(fresh["created"], 1);
    m.ok("delivery.get", json!({"deliveryId": "d-fresh"})).await;
}

/// A hand-off carries whatever sends committed meanwhile and is stored as one batch: a
/// workspace's cap on waiting deliveries still counts the deliveries ahead in the same batch,
/// an entry repeated in it counts once, and the agent's queue keeps the hand-off's order.
#[tokio::test]
async fn a_batched_hand_off_keeps_order_and_caps_waiting_deliveries_counting_the_batch() {
    let (m, _registry) = mesh().await;
    let entry = |seq: i64, id: &str| {
        json!({"seq": seq, "kind": "message", "deliveries": [{"deliveryId": id, "agentId": "capped"}],
               "workspace": "w", "policy": {"maxPendingPerAgent": 2},
               "message": {"messageId": format!("m-{id}"), "sessionId": "s-capped", "turnId": null, "role": "user",
                           "blocks": [], "contentText": id, "timestamp": 1, "targetAgentIds": ["capped"]}})
    };
    let entries = json!([
        entry(1, "d1"),
        entry(2, "d2"),
        entry(2, "d2"),
        entry(3, "d3"),
        entry(4, "d4")
    ]);
    let handed = m.ok("delivery.handoff", json!({ "entries": entries })).await;
    assert_eq!(handed["created"], 4, "{handed}");
    // Handed over again (a relay that timed out): nothing new.
    let again = m.ok("delivery.handoff", json!({ "entries": entries })).await;
    assert_eq!(again["created"], 0, "{again}");

    let listed = m.ok("delivery.list", json!({"agentId": "capped"})).await;
    let order: Vec<&str> = listed["deliveries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["deliveryId"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["d1", "d2", "d3", "d4"], "{listed}");
    // The agent is attached nowhere, so each fails with its own reason: the cap's for the two
    // beyond it.
    for (id, capped) in [("d1", false), ("d2", false), ("d3", true), ("d4", true)] {
        let failed = wait_status(&m, id, "failed").await;
        let reason = failed["reason"].as_str().unwrap_or_default();
        assert_eq!(reason.contains("maxPendingPerAgent 2"), capped, "{id}: {reason}");
    }
}

#[tokio::test]
async fn a_retryable_failure_is_retried_and_a_final_one_waits_for_delivery_retry() {
    let (m, _registry) = mesh().await;
    let agent = attached(&m, "s", &["immediate"]).await;
    let script = vec![
        json!({"status": "failed", "reason": "busy", "retryable": true}),
        json!({"status": "failed", "reason": "cannot parse", "retryable": false}),
        json!({"status": "delivered"}),
    ];
    let _seen = harness(&m.client, &agent, script).await;
    let sent = m
        .ok("session.sendMessage", json!({"sessionId": "s", "message": "x"}))
        .await;
    let id = ids(&sent["deliveryIds"]).remove(0);
    let failed = wait_status(&m, &id, "failed").await;
    assert_eq!(failed["attempts"], 2, "retried once after the retryable failure");
    assert_eq!(failed["reason"], "cannot parse");
    m.err("delivery.cancel", json!({"deliveryId": id}), "conflict").await;

    m.ok("delivery.retry", json!({"deliveryId": id})).await;
    wait_status(&m, &id, "delivered").await;
    m.err("delivery.retry", json!({"deliveryId": id}), "conflict").await;
}

#[tokio::test]
async fn deferred_deliveries_wait_for_available_at_and_later_ones_keep_their_order() {
    let (m, _registry) = mesh().await;
    let agent = attached(&m, "s", &["immediate"]).await;
    let at = relay_bus::now_ms() + 700;
    let at_instant = std::time::Instant::now() + std::time::Duration::from_millis(700);
    let script = vec![
        json!({"status": "deferred", "availableAt": at, "reason": "agent busy"}),
        json!({"status": "delivered"}),
    ];
    let mut seen = harness(&m.client, &agent, script).await;
    let sent = send_numbered(&m, "s", 3).await;
    for id in &sent {
        wait_status(&m, id, "delivered").await;
    }
    let mut order = Vec::new();
    while let Ok((when, req)) = seen.try_recv() {
        order.push((when, req["message"]["contentText"].as_str().unwrap().to_string()));
    }
    let texts: Vec<&str> = order.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(texts, ["m0", "m0", "m1", "m2"], "m1 and m2 wait behind the deferred m0");
    // availableAt is in whole ms and on the wall clock: allow that much rounding.
    let redelivered_at = order[1].0 + std::time::Duration::from_millis(20);
    assert!(redelivered_at >= at_instant, "availableAt was honoured");
}

#[tokio::test]
async fn manual_deliveries_are_held_until_flushed() {
    let (m, _registry) = mesh().await;
    let agent = attached(&m, "s", &["immediate", "manual"]).await;
    let mut seen = harness(&m.client, &agent, vec![json!({"status": "delivered"})]).await;
    let sent = m
        .ok(
            "session.sendMessage",
            json!({"sessionId": "s", "message": "later", "delivery": {"mode": "manual"}}),
        )
        .await;
    let id = ids(&sent["deliveryIds"]).remove(0);
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    assert!(seen.try_recv().is_err(), "nothing surfaced before the flush");
    assert_eq!(
        m.ok("delivery.get", json!({"deliveryId": id})).await["status"],
        "pending"
    );
    assert_eq!(
        m.ok("delivery.flush", json!({"agentId": agent})).await,
        json!({"flushed": 1})
    );
    wait_status(&m, &id, "delivered").await;
    assert_eq!(seen.recv().await.unwrap().1["context"]["mode"], "manual");
}

/// A harness-SDK agent session that records how often each delivery id reached it.
struct Recording {
    surfaced: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, usize>>>,
}

impl relay_harness::AgentSession for Recording {
    async fn receive_message(
        &self,
        _message: relay_contracts::session::Message,
        ctx: relay_contracts::delivery::MessageContext,
    ) -> relay_contracts::delivery::Receipt {
        // An agent taking a moment, so the kill lands mid-walk.
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
        *self.surfaced.lock().unwrap().entry(ctx.id.clone()).or_default() += 1;
        relay_harness::receipt(relay_contracts::delivery::ReceiptStatus::Delivered, &ctx.id)
    }

    async fn release(&self, _reason: Option<String>) {}
}

/// Two runners share 1,000 deliveries to four agents; one is killed with SIGKILL part way.
/// Its leases expire (1 s here) and its agents are taken over by the survivor or its
/// replacement, which re-send what had no stored receipt. The agents are real harness-SDK
/// sessions: the SDK recognises a delivery id it has seen, so each message reaches the agent
/// once.
#[tokio::test]
async fn a_runner_killed_mid_load_leaves_every_message_delivered_and_none_surfaced_twice() {
    use futures::StreamExt;
    let env = [("RELAY_RUNNER__LEASE_MS", "1000")];
    let mut m = Cluster::start(RUNNER, "delivery-runner", 2, &env).await;
    let _registry = ServiceProcess::spawn(&relay_testkit::bin_path("session-registry"), &m.nats, &m.db, &[]);
    let _ingest = ServiceProcess::spawn(&relay_testkit::bin_path("event-ingest"), &m.nats, &m.db, &[]);
    relay_testkit::wait_for_instances(&m.client, "session-registry", 1).await;
    relay_testkit::wait_for_instances(&m.client, "event-ingest", 1).await;

    // Every hand-over, repeats included, as seen on the wire.
    let mut wire = m.client.subscribe("agent.*.deliver").await.unwrap();
    let surfaced = std::sync::Arc::new(std::sync::Mutex::new(std::collections::HashMap::new()));
    let caps: relay_contracts::capabilities::AgentSessionCapabilities = serde_json::from_value(json!({
        "messaging": {"receive": true}, "delivery": {"modes": ["immediate"]},
        "events": {"emits": ["status.changed"]}, "lifecycle": {"release": false}
    }))
    .unwrap();
    let mut bindings = Vec::new();
    for a in 0..4 {
        let opts = relay_harness::AttachOptions::new(
            format!("k{a}"),
            relay_contracts::session::AgentSelection::adapter("claude"),
            caps.clone(),
        );
        let session = std::sync::Arc::new(Recording {
            surfaced: surfaced.clone(),
        });
        bindings.push(
            relay_harness::Binding::attach(m.client.clone(), opts, session)
                .await
                .unwrap(),
        );
    }
    let mut senders = Vec::new();
    for a in 0..4 {
        let client = m.client.clone();
        senders.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            for i in 0..250 {
                let body = json!({"sessionId": format!("k{a}"), "message": format!("{a}-{i}")});
                let sent = relay_testkit::expect_ok(&client, "session.sendMessage", body).await;
                ids.extend(self::ids(&sent["deliveryIds"]));
            }
            ids
        }));
    }
    tokio::time::sleep(std::time::Duration::from_millis(700)).await;
    m.replicas[0].kill9().await;
    m.replace_first_replica().await;
    let mut all_ids = std::collections::HashSet::new();
    for s in senders {
        all_ids.extend(s.await.unwrap());
    }
    assert_eq!(all_ids.len(), 1000);

    let pool = m.db.pool().await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let left: i64 = sqlx::query_scalar("SELECT count(*) FROM deliveries WHERE status <> 'delivered'")
            .fetch_one(&pool)
            .await
            .unwrap();
        if left == 0 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{left} deliveries not delivered");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let mut handed_over = 0;
    while let Ok(Some(_)) = tokio::time::timeout(std::time::Duration::from_millis(200), wire.next()).await {
        handed_over += 1;
    }
    let surfaced = surfaced.lock().unwrap().clone();
    let lost = all_ids.iter().filter(|id| !surfaced.contains_key(*id)).count();
    let twice = surfaced.values().filter(|n| **n > 1).count();
    eprintln!(
        "kill -9 of a runner under 1,000 deliveries: delivered={} lost={lost} surfaced twice={twice} \
         redelivered (deduplicated by the harness SDK)={}",
        surfaced.len(),
        handed_over - 1000
    );
    assert_eq!(lost, 0);
    assert_eq!(twice, 0);
    assert_eq!(surfaced.len(), 1000);
    assert!(handed_over >= 1000);
}

/// A mode the agent no longer declares when its turn comes is an explicit `failed` receipt
/// with the reason, and a `delivery.failed` event, never a silent drop.
#[tokio::test]
async fn a_capability_mismatch_at_delivery_time_is_an_explicit_failure_with_its_event() {
    let (m, _registry) = mesh().await;
    let agent = attached(&m, "s", &["immediate", "manual"]).await;
    let mut seen = harness(&m.client, &agent, vec![json!({"status": "delivered"})]).await;
    let mut failed_events = m.client.subscribe("delivery.failed").await.unwrap();
    let sent = m
        .ok(
            "session.sendMessage",
            json!({"sessionId": "s", "message": "held", "delivery": {"mode": "manual"}}),
        )
        .await;
    let id = ids(&sent["deliveryIds"]).remove(0);
    let caps = json!({"messaging": {"receive": true}, "delivery": {"modes": ["immediate"]}, "events": {"emits": []}, "lifecycle": {"release": false}});
    m.ok(
        "session.agent.declareCapabilities",
        json!({"agentId": agent, "capabilities": caps}),
    )
    .await;
    m.ok("delivery.flush", json!({"agentId": agent})).await;
    let d = wait_status(&m, &id, "failed").await;
    assert!(d["reason"].as_str().unwrap().contains("capability_unsupported"), "{d}");
    assert_eq!(d["retryable"], false);
    assert!(seen.try_recv().is_err(), "the harness was never asked");
    use futures::StreamExt;
    let event = tokio::time::timeout(std::time::Duration::from_secs(5), failed_events.next())
        .await
        .unwrap()
        .unwrap();
    let event: Value = serde_json::from_slice(&event.payload).unwrap();
    assert_eq!(event["deliveryId"], json!(id));
    assert_eq!(event["agentId"], json!(agent));
}

/// Every state change is a `delivery.*` event in the durable log, in order, once.
#[tokio::test]
async fn delivery_events_reach_the_event_log_in_order() {
    let (m, _registry) = mesh().await;
    let _ingest = ServiceProcess::spawn(&relay_testkit::bin_path("event-ingest"), &m.nats, &m.db, &[]);
    relay_testkit::wait_for_instances(&m.client, "event-ingest", 1).await;
    let agent = attached(&m, "s", &["immediate"]).await;
    let script = vec![
        json!({"status": "failed", "reason": "busy", "retryable": true}),
        json!({"status": "delivered"}),
    ];
    let _seen = harness(&m.client, &agent, script).await;
    let sent = m
        .ok("session.sendMessage", json!({"sessionId": "s", "message": "x"}))
        .await;
    let id = ids(&sent["deliveryIds"]).remove(0);
    wait_status(&m, &id, "delivered").await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let page = m
            .ok(
                "event.query",
                json!({"types": ["delivery.created", "delivery.failed", "delivery.delivered"], "sessionIds": ["s"]}),
            )
            .await;
        let types: Vec<String> = page["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["type"].as_str().unwrap().to_string())
            .collect();
        if types.len() == 3 {
            assert_eq!(types, ["delivery.created", "delivery.failed", "delivery.delivered"]);
            let failed = &page["events"][1]["payload"];
            assert_eq!(failed["retryable"], true);
            assert_eq!(failed["reason"], "busy");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "log has {types:?}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// Two runners share the agents: each delivers some, none delivers twice.
#[tokio::test]
async fn two_runners_share_the_work_across_agents() {
    // Each runner works on at most 4 of the 8 agents at once, so one fast runner cannot take
    // them all while the other waits (seen once in CI on a loaded machine).
    let (mut m, _registry) = mesh_with(2, &[("RELAY_RUNNER__MAX_AGENTS", "4")]).await;
    let mut inboxes = Vec::new();
    for a in 0..8 {
        let agent = attached(&m, &format!("t{a}"), &["immediate"]).await;
        inboxes.push(harness(&m.client, &agent, vec![json!({"status": "delivered", "pauseMs": 2})]).await);
    }
    for i in 0..25 {
        for a in 0..8 {
            m.ok(
                "session.sendMessage",
                json!({"sessionId": format!("t{a}"), "message": format!("{i}")}),
            )
            .await;
        }
    }
    let pool = m.db.pool().await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while sqlx::query_scalar::<_, i64>("SELECT count(*) FROM deliveries WHERE status <> 'delivered'")
        .fetch_one(&pool)
        .await
        .unwrap()
        > 0
    {
        assert!(std::time::Instant::now() < deadline, "not all delivered");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let mut by_runner = std::collections::HashMap::<String, usize>::new();
    let mut total = 0;
    for inbox in &mut inboxes {
        let mut texts = Vec::new();
        while let Ok((_, req)) = inbox.try_recv() {
            *by_runner
                .entry(req["context"]["metadata"]["runner"].as_str().unwrap().to_string())
                .or_default() += 1;
            texts.push(req["message"]["contentText"].as_str().unwrap().parse::<u32>().unwrap());
            total += 1;
        }
        assert_eq!(texts, (0..25).collect::<Vec<_>>(), "per-agent order, each once");
    }
    eprintln!("deliveries per runner: {by_runner:?}");
    assert_eq!(total, 200);
    assert_eq!(by_runner.len(), 2, "both runners delivered: {by_runner:?}");
    m.replicas.clear();
}

/// A harness may type an accepted message and report it before the runner has recorded the
/// hand-off: its receipt still on the way, or the runner killed before it stored it (the case
/// that once left a delivery refused "not yet" for good). The report is taken at once, as
/// `accepted` then `delivered`; the late receipt changes nothing.
#[tokio::test]
async fn a_report_of_a_hand_off_not_yet_recorded_is_taken_at_once_and_the_late_receipt_changes_nothing() {
    use futures::StreamExt;
    let (m, _registry) = mesh().await;
    let _ingest = ServiceProcess::spawn(&relay_testkit::bin_path("event-ingest"), &m.nats, &m.db, &[]);
    relay_testkit::wait_for_instances(&m.client, "event-ingest", 1).await;
    let agent = attached(&m, "s", &["immediate"]).await;
    let client = m.client.clone();
    let mut inbox = client.subscribe(format!("agent.{agent}.deliver")).await.unwrap();
    client.flush().await.unwrap();
    let sent = m
        .ok("session.sendMessage", json!({"sessionId": "s", "message": "x"}))
        .await;
    let id = ids(&sent["deliveryIds"]).remove(0);
    let handed = inbox.next().await.unwrap();

    // Typed at once: the report goes out while the runner still waits for the receipt (or
    // after the runner that handed it was killed): it is taken, never refused.
    let report = json!({"deliveryId": id, "status": "delivered"});
    let taken = relay_testkit::call_json(&client, "delivery.report", report.clone())
        .await
        .expect("a report of a delivery not recorded as handed yet is taken");
    assert_eq!(taken["status"], "delivered", "{taken}");

    // The walker's late `accepted` changes nothing; a repeated report is harmless.
    let receipt = json!({"deliveryId": id, "status": "accepted"});
    client
        .publish(handed.reply.unwrap(), serde_json::to_vec(&receipt).unwrap().into())
        .await
        .unwrap();
    let again = relay_testkit::call_json(&client, "delivery.report", report.clone())
        .await
        .unwrap();
    assert_eq!(again["status"], "delivered", "{again}");
    let d = wait_status(&m, &id, "delivered").await;
    assert_eq!(d["attempts"], 1);
    // Announced accepted, then delivered, once each.
    let kinds = relay_testkit::wait_for(|| async {
        let page = m
            .ok(
                "event.query",
                json!({"sessionIds": ["s"], "types": ["delivery.created", "delivery.accepted", "delivery.delivered"]}),
            )
            .await;
        let kinds: Vec<String> = page["events"]
            .as_array()?
            .iter()
            .filter(|e| e["payload"]["deliveryId"] == id.as_str())
            .map(|e| e["type"].as_str().unwrap().to_string())
            .collect();
        kinds.contains(&"delivery.delivered".to_string()).then_some(kinds)
    })
    .await;
    assert_eq!(kinds, ["delivery.created", "delivery.accepted", "delivery.delivered"]);
}

/// SIGTERM: a runner stops claiming agents and hands back the one it is walking after the batch
/// in hand, so another replica carries on at once instead of when the lease (10 minutes here)
/// runs out; every message is delivered once, in order.
#[tokio::test]
async fn a_runner_stopped_with_sigterm_hands_its_agent_to_another_replica_at_once() {
    use futures::StreamExt;
    let env = [("RELAY_RUNNER__LEASE_MS", "600000"), ("RELAY_RUNNER__BATCH", "2")];
    let (mut m, _registry) = mesh_with(1, &env).await;
    let agent = attached(&m, "s", &["immediate"]).await;
    // The harness answers at once, except the second delivery: held until the first runner
    // was told to stop, so it is surely mid-walk then, however slow the machine.
    let (gate, held) = tokio::sync::oneshot::channel::<()>();
    let (seen_tx, mut seen) = tokio::sync::mpsc::unbounded_channel::<Value>();
    let mut inbox = m.client.subscribe(format!("agent.{agent}.deliver")).await.unwrap();
    m.client.flush().await.unwrap();
    let client = m.client.clone();
    tokio::spawn(async move {
        let mut held = Some(held);
        let mut n = 0;
        while let Some(msg) = inbox.next().await {
            let req: Value = serde_json::from_slice(&msg.payload).unwrap();
            let _ = seen_tx.send(req.clone());
            n += 1;
            if n == 2 {
                let _ = held.take().unwrap().await;
            }
            let receipt = json!({"deliveryId": req["context"]["id"], "status": "delivered"});
            let _ = client
                .publish(msg.reply.unwrap(), serde_json::to_vec(&receipt).unwrap().into())
                .await;
        }
    });
    let sent = send_numbered(&m, "s", 20).await;
    // The first runner is walking the agent (its lease has ten minutes to run) ...
    let first = seen.recv().await.unwrap();
    let second = seen.recv().await.unwrap();
    let first_runner = first["context"]["metadata"]["runner"].as_str().unwrap().to_string();
    m.add_replica().await;
    // ... when it is told to stop.
    let pid = m.replicas[0].pid().to_string();
    std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    gate.send(()).unwrap();
    let exited = m.replicas[0].wait_exit(std::time::Duration::from_secs(15)).await;
    assert_eq!(exited, Some(true), "the runner exits cleanly on SIGTERM");
    for id in &sent {
        wait_status(&m, id, "delivered").await;
    }
    let mut texts = vec![first["message"]["contentText"].as_str().unwrap().to_string()];
    let mut runners = std::collections::BTreeSet::from([first_runner.clone()]);
    texts.push(second["message"]["contentText"].as_str().unwrap().to_string());
    while let Ok(req) = seen.try_recv() {
        texts.push(req["message"]["contentText"].as_str().unwrap().to_string());
        runners.insert(req["context"]["metadata"]["runner"].as_str().unwrap().to_string());
    }
    assert_eq!(
        texts,
        (0..20).map(|i| format!("m{i}")).collect::<Vec<_>>(),
        "in order, each once"
    );
    assert_eq!(runners.len(), 2, "the second replica took over: {runners:?}");
}

/// Bounded growth: a delivered delivery and its stored message are deleted once the keep
/// window has passed since it finished; a held (pending) one and its message stay, however old.
#[tokio::test]
async fn finished_deliveries_are_deleted_after_the_keep_window_and_pending_ones_stay() {
    let (mut m, _registry) = mesh_with(1, &[("RELAY_RUNNER__KEEP_FINISHED_MS", "1000")]).await;
    let agent = attached(&m, "s", &["immediate", "manual"]).await;
    let _seen = harness(&m.client, &agent, vec![json!({"status": "delivered"})]).await;
    let held = m
        .ok(
            "session.sendMessage",
            json!({"sessionId": "s", "message": "held", "delivery": {"mode": "manual"}}),
        )
        .await;
    let held = ids(&held["deliveryIds"]).remove(0);
    let done = send_numbered(&m, "s", 5).await;
    for id in &done {
        wait_status(&m, id, "delivered").await;
    }
    let pool = m.db.pool().await;
    let count = |sql: &'static str| {
        let pool = pool.clone();
        async move { sqlx::query_scalar::<_, i64>(sql).fetch_one(&pool).await.unwrap() }
    };
    relay_testkit::wait_for(|| async { (count("SELECT count(*) FROM deliveries").await == 1).then_some(()) }).await;
    for id in &done {
        m.err("delivery.get", json!({"deliveryId": id}), "not_found").await;
    }
    assert_eq!(
        m.ok("delivery.get", json!({"deliveryId": held})).await["status"],
        "pending"
    );
    assert_eq!(
        count("SELECT count(*) FROM delivery_messages").await,
        1,
        "only the held message is kept"
    );
    // The held one can still be flushed.
    assert_eq!(
        m.ok("delivery.flush", json!({"agentId": agent})).await,
        json!({"flushed": 1})
    );
    m.replicas.clear();
}

/// A delivery its harness accepted and then typed is the agent's: cancelling it is a conflict
/// (the harness says it no longer holds it), not a `cancelled` the agent's screen contradicts;
/// the harness's report of it then lands as `delivered`.
#[tokio::test]
async fn cancelling_a_delivery_the_harness_already_typed_is_a_conflict_and_its_report_lands() {
    use futures::StreamExt;
    let (m, _registry) = mesh().await;
    let agent = attached(&m, "s", &["immediate"]).await;
    let _seen = harness(&m.client, &agent, vec![json!({"status": "accepted"})]).await;
    // The harness typed it: it holds nothing to drop.
    let mut cancels = m.client.subscribe(format!("agent.{agent}.cancel")).await.unwrap();
    m.client.flush().await.unwrap();
    let client = m.client.clone();
    tokio::spawn(async move {
        while let Some(msg) = cancels.next().await {
            let answer = serde_json::to_vec(&json!({"removed": false})).unwrap();
            let _ = client.publish(msg.reply.unwrap(), answer.into()).await;
        }
    });
    let sent = m
        .ok("session.sendMessage", json!({"sessionId": "s", "message": "x"}))
        .await;
    let id = ids(&sent["deliveryIds"]).remove(0);
    wait_status(&m, &id, "accepted").await;
    m.err("delivery.cancel", json!({"deliveryId": id}), "conflict").await;
    wait_status(&m, &id, "accepted").await;
    let report = json!({"deliveryId": id, "status": "delivered"});
    let landed = relay_testkit::call_json(&m.client, "delivery.report", report)
        .await
        .unwrap();
    assert_eq!(landed["status"], "delivered", "{landed}");
}
