//! Workspace API keys at the gateway, over HTTP as a client uses them: roles (viewer reads,
//! operator acts, admin manages keys), the shared token as an admin key of `default`,
//! revocation (401 on the next request, the open stream ends), the per-key rate limit (429
//! with Retry-After, counted in /metrics), and `relayctl keys` and `relayctl workspaces`.

mod common;

use common::{Bearer, gateway, mesh};
use futures::StreamExt;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::time::Duration;

const ROOT: &str = "root-token";

fn assert_error(status: StatusCode, body: &Value, expected: StatusCode, code: &str) {
    assert_eq!(status, expected, "{body}");
    assert_eq!(body["error"]["code"], code, "{body}");
}

#[tokio::test]
async fn a_key_may_do_what_its_role_allows_and_gets_403_for_the_rest() {
    let m = mesh().await;
    let g = gateway(&m, &[("RELAY_API_TOKEN", ROOT)]).await;
    let root = Bearer::new(&g, ROOT);
    let (_, viewer) = root.create_key("dashboard", "viewer", None).await;
    let (_, operator) = root.create_key("on-call", "operator", None).await;
    let (_, admin) = root.create_key("lead", "admin", None).await;

    // viewer: reads, never acts.
    let (status, _) = viewer.get("/api/v1/sessions").await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = viewer.post("/api/v1/sessions", json!({"title": "nope"})).await;
    assert_error(status, &body, StatusCode::FORBIDDEN, "forbidden");
    let (status, body) = viewer
        .post("/api/v1/agents/a1/permissions/p1/approve", json!({"reason": "x"}))
        .await;
    assert_error(status, &body, StatusCode::FORBIDDEN, "forbidden");
    let (status, body) = viewer.get("/api/v1/keys").await;
    assert_error(status, &body, StatusCode::FORBIDDEN, "forbidden");

    // operator: acts, but does not manage keys.
    let (status, created) = operator.post("/api/v1/sessions", json!({"title": "ops"})).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let (status, body) = operator
        .post("/api/v1/agents/a1/permissions/p1/approve", json!({"reason": "x"}))
        .await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "not_found");
    let (status, body) = operator
        .post("/api/v1/keys", json!({"name": "x", "role": "admin"}))
        .await;
    assert_error(status, &body, StatusCode::FORBIDDEN, "forbidden");

    // admin: lists the workspace's keys, never their tokens.
    let (status, list) = admin.get("/api/v1/keys").await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let keys = list["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 3, "{list}");
    assert!(
        keys.iter()
            .all(|k| k.get("token").is_none() && k["workspace"] == "default")
    );
    assert!(
        !list.to_string().contains(&viewer.token[3..]),
        "a token is never listed"
    );

    // Tokens that are not keys.
    for bad in ["rk_nope", "rk_0_0", &format!("{}x", viewer.token), "not-the-root-token"] {
        let (status, body) = Bearer {
            token: bad.into(),
            ..root.clone()
        }
        .get("/api/v1/sessions")
        .await;
        assert_error(status, &body, StatusCode::UNAUTHORIZED, "unauthorized");
    }
}

#[tokio::test]
async fn a_revoked_key_gets_401_on_its_next_request_and_its_open_stream_ends() {
    let m = mesh().await;
    let g = gateway(&m, &[("RELAY_API_TOKEN", ROOT)]).await;
    let root = Bearer::new(&g, ROOT);
    let (key_id, viewer) = root.create_key("tv", "viewer", None).await;
    assert_eq!(viewer.get("/api/v1/sessions").await.0, StatusCode::OK);

    let stream = viewer
        .http
        .get(format!("{}/api/v1/events/sse", viewer.base))
        .bearer_auth(&viewer.token)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    let mut body = stream.bytes_stream();

    let (status, revoked, _) = root.send(Method::DELETE, &format!("/api/v1/keys/{key_id}"), None).await;
    assert_eq!(status, StatusCode::OK, "{revoked}");
    let (status, body_401) = viewer.get("/api/v1/sessions").await;
    assert_error(status, &body_401, StatusCode::UNAUTHORIZED, "unauthorized");

    // The stream ends (EOF), rather than idling on heartbeats.
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(chunk) = body.next().await {
            if chunk.is_err() {
                break;
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the revoked key's stream was still open 10 s later");

    // Revoking again is harmless; the list shows when.
    let (status, again, _) = root.send(Method::DELETE, &format!("/api/v1/keys/{key_id}"), None).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert!(again["revokedAt"].is_i64(), "{again}");
    let (_, list) = root.get("/api/v1/keys?includeRevoked=true").await;
    assert_eq!(list["keys"][0]["keyId"], key_id.as_str());
}

#[tokio::test]
async fn a_key_over_its_rate_gets_429_with_retry_after_and_the_metric_counts_it() {
    let m = mesh().await;
    let g = gateway(
        &m,
        &[
            ("RELAY_API_TOKEN", ROOT),
            ("RELAY_GATEWAY__RATE_LIMIT_PER_SEC", "1"),
            ("RELAY_GATEWAY__RATE_LIMIT_BURST", "1"),
        ],
    )
    .await;
    let root = Bearer::new(&g, ROOT);
    let (_, key) = root.create_key("busy", "viewer", None).await;
    let mut limited = None;
    for _ in 0..20 {
        let (status, body, headers) = key.send(Method::GET, "/api/v1/sessions", None).await;
        if status == StatusCode::TOO_MANY_REQUESTS {
            limited = Some((body, headers));
            break;
        }
    }
    let (body, headers) = limited.expect("20 requests at once stayed under 1 per second");
    assert_eq!(body["error"]["code"], "rate_limited", "{body}");
    let retry: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!(retry >= 1, "{retry}");
    assert!(g.metric("relay_gateway_rate_limited_total").await >= 1.0);
    // The shared token is the operator's own: not limited.
    for _ in 0..5 {
        assert_eq!(root.get("/api/v1/sessions").await.0, StatusCode::OK);
    }
}

#[tokio::test]
async fn relayctl_creates_workspaces_and_lists_and_revokes_keys_in_any_of_them() {
    let m = mesh().await;
    let g = gateway(&m, &[("RELAY_API_TOKEN", ROOT)]).await;
    let ctl = |args: &[&str]| common::relayctl(&m, args);
    let created: Value = serde_json::from_str(&ctl(&["--json", "keys", "create", "ci", "--role", "operator"])).unwrap();
    let token = created["token"].as_str().unwrap();
    let key_id = created["key"]["keyId"].as_str().unwrap();
    let key = Bearer::new(&g, token);
    assert_eq!(key.post("/api/v1/sessions", json!({})).await.0, StatusCode::CREATED);
    // A key of another workspace: the workspace first.
    let made: Value = serde_json::from_str(&ctl(&["--json", "workspaces", "create", "acme"])).unwrap();
    assert_eq!(made["name"], "acme");
    assert!(ctl(&["workspaces", "list"]).contains("acme"));
    let elsewhere: Value = serde_json::from_str(&ctl(&[
        "--json",
        "keys",
        "create",
        "b",
        "--role",
        "viewer",
        "--workspace",
        "acme",
    ]))
    .unwrap();
    assert_eq!(elsewhere["key"]["workspace"], "acme");

    let listed = ctl(&["keys", "list"]);
    assert!(listed.contains(key_id) && listed.contains("acme"), "{listed}");
    assert!(!listed.contains(token), "a token is never listed");
    ctl(&["keys", "revoke", key_id]);
    // relayctl revokes at the registry; the gateway forgets the key when `key.revoked` reaches
    // it, a moment after the revoke answered (and at worst after its 5 s cache).
    relay_testkit::wait_for_within(Duration::from_secs(4), || async {
        (key.get("/api/v1/sessions").await.0 == StatusCode::UNAUTHORIZED).then_some(())
    })
    .await;
}

#[tokio::test]
async fn the_audit_trail_says_who_made_and_revoked_keys_decided_a_permission_and_changed_a_policy_and_from_where() {
    let m = mesh().await;
    let g = gateway(&m, &[("RELAY_API_TOKEN", ROOT)]).await;
    let root = Bearer::new(&g, ROOT);
    let (operator_id, operator) = root.create_key("on-call", "operator", None).await;
    let (viewer_id, viewer) = root.create_key("wall", "viewer", None).await;
    assert_eq!(
        root.send(Method::DELETE, &format!("/api/v1/keys/{viewer_id}"), None)
            .await
            .0,
        StatusCode::OK
    );
    assert_eq!(viewer.get("/api/v1/sessions").await.0, StatusCode::UNAUTHORIZED);

    // An agent asks; the operator key approves.
    relay_testkit::expect_ok(&m.client, "session.create", json!({"sessionId": "s-audit"})).await;
    let asked = relay_testkit::expect_ok(
        &m.client,
        "permission.request",
        json!({"agentId": "a1", "sessionId": "s-audit", "tool": "Bash", "command": "rm -rf /tmp/x", "description": "clean"}),
    )
    .await;
    let request_id = asked["requestId"].as_str().unwrap().to_string();
    let (status, body) = operator
        .post(
            &format!("/api/v1/agents/a1/permissions/{request_id}/approve"),
            json!({"reason": "fine"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // A session's approval policy is an admin's to change: the operator may retitle it only.
    let patch = |policy: Value| Some(json!({"approvalPolicyOverride": policy}));
    let (status, body, _) = operator
        .send(Method::PATCH, "/api/v1/sessions/s-audit", patch(json!("full-access")))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let (status, body, _) = operator
        .send(
            Method::PATCH,
            "/api/v1/sessions/s-audit",
            Some(json!({"title": "cleanup"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body, _) = root
        .send(Method::PATCH, "/api/v1/sessions/s-audit", patch(json!("always-ask")))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // The trail, as an admin reads it.
    let entries = relay_testkit::wait_for(|| async {
        let (status, page) = root.get("/api/v1/audit").await;
        assert_eq!(status, StatusCode::OK, "{page}");
        let entries: Vec<Value> = page["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["payload"].clone())
            .collect();
        (entries.len() >= 6).then_some(entries)
    })
    .await;
    let find = |action: &str, target: &str| {
        entries
            .iter()
            .find(|e| e["action"] == action && e["target"] == target)
            .unwrap_or_else(|| panic!("no {action} of {target} in {entries:?}"))
            .clone()
    };
    assert_eq!(find("key.create", &operator_id)["actor"], "admin:bearer");
    assert_eq!(find("key.revoke", &viewer_id)["actor"], "admin:bearer");
    let approved = find("permission.approve", &request_id);
    assert_eq!(approved["actor"], format!("operator:{operator_id}"));
    assert_eq!(approved["detail"]["reason"], "fine");
    // From where: the client's address as the gateway saw it.
    assert_eq!(approved["origin"], "127.0.0.1");
    let policy = find("session.update", "s-audit");
    assert_eq!(policy["actor"], "admin:bearer");
    assert_eq!(policy["origin"], "127.0.0.1");
    assert_eq!(policy["detail"]["approvalPolicyOverride"], "always-ask");
    assert_eq!(
        entries.iter().filter(|e| e["action"] == "session.update").count(),
        1,
        "{entries:?}"
    );
    // The refused policy change is in the trail too: who tried what their role does not allow.
    let refused = relay_testkit::wait_for(|| async {
        let (_, page) = root.get("/api/v1/audit").await;
        page["events"]
            .as_array()?
            .iter()
            .map(|e| e["payload"].clone())
            .find(|e| e["action"] == "refused" && e["actor"] == format!("operator:{operator_id}").as_str())
    })
    .await;
    assert!(
        refused["target"].as_str().unwrap().contains("sessions/s-audit"),
        "{refused}"
    );
    // Only admins read it.
    let (status, body) = operator.get("/api/v1/audit").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
}

/// Secure by default: with no shared token and not started open, a caller without a key gets
/// 401 on every route — listing sessions or minting an admin key alike; `/readyz` says which
/// mode the gateway is in; and it refuses to start open anywhere but on loopback.
#[tokio::test]
async fn a_gateway_not_started_open_refuses_callers_without_a_key_and_never_starts_open_off_loopback() {
    let m = mesh().await;
    let closed = gateway(&m, &[("RELAY_GATEWAY__OPEN", "false")]).await;
    for (method, path, body) in [
        (Method::GET, "/api/v1/sessions", None),
        (Method::POST, "/api/v1/sessions", Some(json!({}))),
        (
            Method::POST,
            "/api/v1/keys",
            Some(json!({"name": "mine", "role": "admin"})),
        ),
        (Method::POST, "/api/v1/workspaces", Some(json!({"name": "taken"}))),
    ] {
        let (status, refused) = closed.send(method, path, body).await;
        assert_error(status, &refused, StatusCode::UNAUTHORIZED, "unauthorized");
    }
    let (_, ready) = closed.get("/readyz").await;
    assert_eq!(ready["auth"], "keys", "{ready}");
    // A key made by the operator (relayctl, over NATS with admin credentials) works there.
    let created: Value = serde_json::from_str(&common::relayctl(
        &m,
        &["--json", "keys", "create", "first", "--role", "admin"],
    ))
    .unwrap();
    let admin = Bearer::new(&closed, created["token"].as_str().unwrap());
    assert_eq!(admin.get("/api/v1/sessions").await.0, StatusCode::OK);

    // Open on loopback, as asked: served, and said so.
    let open = gateway(&m, &[]).await;
    assert_eq!(open.get("/api/v1/sessions").await.0, StatusCode::OK);
    assert_eq!(open.get("/readyz").await.1["auth"], "open");

    // Open on every interface: the gateway will not start.
    let listen = format!("0.0.0.0:{}", common::free_port());
    let mut refused = relay_testkit::ServiceProcess::spawn(
        &relay_testkit::bin_path("gateway"),
        &m.nats,
        &m.db,
        &[
            ("RELAY_GATEWAY__LISTEN", listen.as_str()),
            ("RELAY_API_TOKEN", ""),
            ("RELAY_GATEWAY__OPEN", "true"),
        ],
    );
    assert_eq!(refused.wait_exit(Duration::from_secs(30)).await, Some(false));
    let log = std::fs::read_to_string(&refused.log).unwrap();
    assert!(log.contains("loopback"), "{log}");
}
