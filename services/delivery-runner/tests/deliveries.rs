//! Deliveries created with their message by the registry, read and cancelled through the runner.

use relay_testkit::{Cluster, ServiceProcess};
use serde_json::{Value, json};

const RUNNER: &str = env!("CARGO_BIN_EXE_delivery-runner");

async fn mesh() -> (Cluster, ServiceProcess) {
    let c = Cluster::start(RUNNER, "delivery-runner", 1, &[]).await;
    let env = [
        ("RELAY_REGISTRY__PURGE_EVENT_LOG", "false"),
        ("RELAY_REGISTRY__FORWARD_EVENTS", "false"),
    ];
    let registry = ServiceProcess::spawn(&relay_testkit::bin_path("session-registry"), &c.nats, &c.db, &env);
    relay_testkit::wait_for_instances(&c.client, "session-registry", 1).await;
    (c, registry)
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
