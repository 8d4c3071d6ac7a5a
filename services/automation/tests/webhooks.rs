//! Webhooks over the real mesh (auth on): sessions are created, their events are posted to a
//! receiver that checks every signature with the official Standard Webhooks library for Python
//! (relay_testkit::WebhookReceiver), and that is down for a while.

use relay_testkit::{BUS_SERVICES, Database, Nats, ServiceProcess, WebhookReceiver, expect_err, expect_ok, wait_for};
use serde_json::{Value, json};

/// A fixed secret, so the receiver can verify from its first post.
const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// The posts about session `id`'s `session.created`.
fn created(rx: &WebhookReceiver, id: &str) -> Vec<Value> {
    rx.posts()
        .into_iter()
        .filter(|p| p["type"] == "session.created" && p["sessionId"] == id)
        .collect()
}

struct World {
    _nats: Nats,
    _db: Database,
    client: async_nats::Client,
    _services: Vec<ServiceProcess>,
}

async fn world(automation_env: &[(&str, &str)]) -> World {
    let nats = Nats::start().await;
    let db = Database::create().await;
    let client = nats.client().await;
    let mut services: Vec<ServiceProcess> = BUS_SERVICES
        .iter()
        .map(|s| ServiceProcess::spawn(&relay_testkit::bin_path(s), &nats, &db, &[]))
        .collect();
    services.push(ServiceProcess::spawn(
        &relay_testkit::bin_path("automation"),
        &nats,
        &db,
        automation_env,
    ));
    for s in BUS_SERVICES.iter().chain(&["automation"]) {
        relay_testkit::wait_for_instances(&client, s, 1).await;
    }
    World {
        _nats: nats,
        _db: db,
        client,
        _services: services,
    }
}

impl World {
    async fn new_session(&self) -> String {
        let r = expect_ok(&self.client, "session.create", json!({})).await;
        r["sessionId"].as_str().unwrap().to_string()
    }

    async fn subscribe(&self, url: &str) -> String {
        let w = expect_ok(
            &self.client,
            "webhook.create",
            json!({"url": url, "events": ["session.created"], "secret": SECRET}),
        )
        .await;
        assert_eq!(w["secret"], SECRET, "{w}");
        w["webhookId"].as_str().unwrap().to_string()
    }

    async fn deliveries(&self, webhook: &str) -> Vec<Value> {
        let d = expect_ok(
            &self.client,
            "webhook.deliveries",
            json!({"webhookId": webhook, "limit": 500}),
        )
        .await;
        d["deliveries"].as_array().unwrap().clone()
    }
}

const FAST_RETRIES: [(&str, &str); 3] = [
    ("RELAY_WEBHOOKS__ALLOW_PRIVATE", "true"),
    ("RELAY_WEBHOOKS__RETRY_BASE_MS", "200"),
    ("RELAY_WEBHOOKS__RETRY_MAX_MS", "400"),
];

#[tokio::test]
async fn events_are_posted_signed_and_retried_until_the_receiver_is_back() {
    let w = world(&FAST_RETRIES).await;
    let rx = WebhookReceiver::start(SECRET).await;
    let hook = w.subscribe(&rx.url).await;

    let first = w.new_session().await;
    let posts = wait_for(|| async { Some(created(&rx, &first)).filter(|p| !p.is_empty()) }).await;
    assert_eq!(posts[0]["valid"], true, "the signature verifies: {posts:?}");
    assert_eq!(posts[0]["status"], 204);

    // Down: the receiver answers 503 until it is back; the same delivery is posted again.
    rx.set_down(true);
    let second = w.new_session().await;
    wait_for(|| async { (created(&rx, &second).len() >= 3).then_some(()) }).await;
    rx.set_down(false);
    let posts = wait_for(|| async {
        let p = created(&rx, &second);
        p.iter().any(|p| p["status"] == 204).then_some(p)
    })
    .await;
    assert!(posts.iter().all(|p| p["valid"] == true), "{posts:?}");
    let ids: std::collections::HashSet<_> = posts.iter().map(|p| p["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 1, "every attempt carries the same webhook-id: {posts:?}");
    assert_eq!(posts.iter().filter(|p| p["status"] == 204).count(), 1);

    // The receiver logs a post before it answers; the log says delivered once it has the answer.
    let id = *ids.iter().next().unwrap();
    let d = wait_for(|| async {
        let log = w.deliveries(&hook).await;
        log.into_iter()
            .find(|d| d["deliveryId"] == id && d["status"] == "delivered")
    })
    .await;
    assert_eq!(d["attempts"].as_u64().unwrap() as usize, posts.len(), "{d}");
    assert_eq!(d["lastStatus"], 204);
    // Other event types were not posted: the subscription names session.created only.
    assert!(rx.posts().iter().all(|p| p["type"] == "session.created"));
}

#[tokio::test]
async fn a_receiver_failing_too_often_is_disabled_and_nothing_is_lost_once_enabled_and_replayed() {
    let mut env = FAST_RETRIES.to_vec();
    env.extend([
        ("RELAY_WEBHOOKS__MAX_ATTEMPTS", "2"),
        ("RELAY_WEBHOOKS__DISABLE_AFTER", "3"),
    ]);
    let w = world(&env).await;
    let rx = WebhookReceiver::start(SECRET).await;
    rx.set_down(true);
    let hook = w.subscribe(&rx.url).await;
    let a = w.new_session().await;
    let b = w.new_session().await;

    // 2 attempts for each of 2 deliveries; the third failure in a row disables it.
    let disabled = wait_for(|| async {
        let h = expect_ok(&w.client, "webhook.get", json!({"webhookId": hook})).await;
        (h["enabled"] == false).then_some(h)
    })
    .await;
    let reason = disabled["disabledReason"].as_str().unwrap();
    assert!(reason.contains("3 failed attempts in a row"), "{reason}");
    assert!(reason.contains("503"), "{reason}");
    let events = wait_for(|| async {
        let e = expect_ok(&w.client, "event.query", json!({"types": ["webhook.disabled"]})).await;
        Some(e["events"].as_array().unwrap().clone()).filter(|e| !e.is_empty())
    })
    .await;
    assert_eq!(events[0]["payload"]["webhookId"], hook);

    // Back and enabled again: whatever was still pending goes; a failed one is replayed.
    rx.set_down(false);
    expect_ok(&w.client, "webhook.update", json!({"webhookId": hook, "enabled": true})).await;
    let failed: Vec<Value> = w
        .deliveries(&hook)
        .await
        .into_iter()
        .filter(|d| d["status"] == "failed")
        .collect();
    assert!(!failed.is_empty(), "a delivery used both its attempts while down");
    for d in &failed {
        let r = expect_ok(
            &w.client,
            "webhook.replay",
            json!({"webhookId": hook, "deliveryId": d["deliveryId"]}),
        )
        .await;
        assert_eq!(r["status"], "pending");
    }
    for s in [&a, &b] {
        let posts = wait_for(|| async {
            let p = created(&rx, s);
            p.iter().any(|p| p["status"] == 204).then_some(p)
        })
        .await;
        assert_eq!(posts.iter().filter(|p| p["status"] == 204).count(), 1, "{posts:?}");
    }
    let log = wait_for(|| async {
        let log = w.deliveries(&hook).await;
        log.iter().all(|d| d["status"] == "delivered").then_some(log)
    })
    .await;
    assert_eq!(log.len(), 2, "one delivery per event: {log:?}");
}

#[tokio::test]
async fn private_targets_are_refused_when_created_and_when_a_name_resolves_to_one() {
    // The defaults: private targets are not allowed.
    let w = world(&[("RELAY_WEBHOOKS__RETRY_BASE_MS", "200")]).await;
    let rx = WebhookReceiver::start(SECRET).await;
    for url in [
        rx.url.clone(),
        "http://169.254.169.254/latest/meta-data".into(),
        "http://[::1]:9/".into(),
        "ftp://example.com/".into(),
        "not a url".into(),
    ] {
        let e = expect_err(
            &w.client,
            "webhook.create",
            json!({"url": url, "events": ["*"]}),
            "invalid_request",
        )
        .await;
        assert!(e.error.message.contains("url"), "{url}: {e:?}");
    }
    // A name is checked on what it resolves to, when the post connects.
    let by_name = rx.url.replace("127.0.0.1", "localhost");
    let hook = w.subscribe(&by_name).await;
    let s = w.new_session().await;
    let d = wait_for(|| async {
        let log = w.deliveries(&hook).await;
        log.into_iter().find(|d| d["lastError"].is_string())
    })
    .await;
    let error = d["lastError"].as_str().unwrap();
    assert!(error.contains("refused: localhost resolves to"), "{error}");
    assert!(created(&rx, &s).is_empty(), "nothing reached the receiver");
    // A secret must be whsec_ and the base64 of 24 to 64 bytes.
    expect_err(
        &w.client,
        "webhook.create",
        json!({"url": "https://example.com/", "secret": "whsec_short"}),
        "invalid_request",
    )
    .await;
}

/// Bounded growth: a webhook's delivered deliveries leave its delivery log once
/// `webhooks.keep_deliveries_ms` has passed; what was posted stays posted, once.
#[tokio::test]
async fn delivered_webhook_deliveries_leave_the_log_after_the_keep_window() {
    let env: Vec<(&str, &str)> = FAST_RETRIES
        .iter()
        .copied()
        .chain([("RELAY_WEBHOOKS__KEEP_DELIVERIES_MS", "1000")])
        .collect();
    let w = world(&env).await;
    let rx = WebhookReceiver::start(SECRET).await;
    let hook = w.subscribe(&rx.url).await;
    let mut sessions = Vec::new();
    for _ in 0..5 {
        sessions.push(w.new_session().await);
    }
    for s in &sessions {
        wait_for(|| async { Some(created(&rx, s)).filter(|p| !p.is_empty()) }).await;
    }
    wait_for(|| async { w.deliveries(&hook).await.is_empty().then_some(()) }).await;
    for s in &sessions {
        assert_eq!(created(&rx, s).len(), 1, "posted once");
    }
}

/// A webhook posts for the key that made it: once that key is revoked, nothing more is posted
/// and the webhook is disabled, saying why.
#[tokio::test]
async fn a_webhook_stops_posting_and_is_disabled_when_the_key_that_made_it_is_revoked() {
    let w = world(&FAST_RETRIES).await;
    let rx = WebhookReceiver::start(SECRET).await;
    let made = expect_ok(&w.client, "key.create", json!({"name": "hooks", "role": "admin"})).await;
    let key_id = made["key"]["keyId"].as_str().unwrap().to_string();
    // Made as the key, in `default`.
    let body = json!({"url": rx.url, "events": ["session.created"], "secret": SECRET});
    let hook =
        relay_testkit::call_as_key(&w._nats, &format!("admin:{key_id}"), "default", "webhook.create", body).await;
    let hook = hook["webhookId"]
        .as_str()
        .unwrap_or_else(|| panic!("{hook}"))
        .to_string();

    let before = w.new_session().await;
    wait_for(|| async { (!created(&rx, &before).is_empty()).then_some(()) }).await;
    expect_ok(&w.client, "key.revoke", json!({"keyId": key_id})).await;
    let after = w.new_session().await;
    let disabled = wait_for(|| async {
        let h = expect_ok(&w.client, "webhook.get", json!({"webhookId": hook})).await;
        (h["enabled"] == false).then_some(h)
    })
    .await;
    assert!(
        disabled["disabledReason"].as_str().unwrap().contains("revoked"),
        "{disabled}"
    );
    // The session made after the revocation was never posted; its delivery waits, unposted.
    let waiting = wait_for(|| async { w.deliveries(&hook).await.into_iter().find(|d| d["status"] == "pending") }).await;
    assert_eq!(waiting["attempts"], 0, "{waiting}");
    assert!(created(&rx, &after).is_empty(), "posted after its key was revoked");
}
