//! Workspace isolation, as clients of two workspaces see the mesh: a key of workspace A gets
//! 404 for B's session, events, stream frames, permissions and costs, and B never shows in A's
//! lists, counts or search — over REST, SSE, gRPC and NATS (the gateway's own identity acting
//! for A's key, and an agent of A on its harness subjects). B's key sees all of it.

mod common;

use common::{Bearer, SseReader, gateway};
use relay_contracts::access;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::time::Duration;

const ROOT: &str = "root-token";

/// An agent's harness connection in `workspace`, calling on its own harness subjects.
struct Agent {
    client: async_nats::Client,
    id: String,
    workspace: String,
}

impl Agent {
    async fn connect(m: &common::Mesh, id: &str, workspace: &str) -> Agent {
        let creds = m.nats.harness_creds(id, workspace).unwrap();
        let client = async_nats::ConnectOptions::with_credentials(&creds)
            .unwrap()
            .custom_inbox_prefix(access::harness_inbox_prefix(id))
            .connect(&m.nats.url)
            .await
            .unwrap();
        Agent {
            client,
            id: id.into(),
            workspace: workspace.into(),
        }
    }

    async fn call(&self, subject: &str, body: Value) -> Value {
        let on = access::harness_subject(&self.workspace, &self.id, subject);
        let reply = tokio::time::timeout(
            Duration::from_secs(10),
            self.client.request(on, serde_json::to_vec(&body).unwrap().into()),
        )
        .await
        .unwrap_or_else(|_| panic!("{subject} timed out"))
        .unwrap();
        serde_json::from_slice(&reply.payload).unwrap()
    }
}

/// A call as the gateway makes it for operator key `key_id` of `workspace`.
async fn as_key_over_nats(m: &common::Mesh, key_id: &str, workspace: &str, subject: &str, body: Value) -> Value {
    relay_testkit::call_as_key(&m.nats, &format!("operator:{key_id}"), workspace, subject, body).await
}

/// Two new workspaces, each with one key of `role`: (key id, its bearer) per workspace.
async fn two_workspaces(root: &Bearer, names: [&str; 2], role: &str) -> [(String, Bearer); 2] {
    let mut keys = Vec::new();
    for ws in names {
        let (status, body) = root.post("/api/v1/workspaces", json!({"name": ws})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        keys.push(root.create_key(ws, role, Some(ws)).await);
    }
    <[_; 2]>::try_from(keys).ok().unwrap()
}

#[tokio::test]
async fn a_key_of_one_workspace_never_sees_another_workspaces_sessions_events_streams_permissions_or_costs() {
    // A budget for each session: its spenders are listed per workspace.
    let config = std::env::temp_dir().join(format!("isolation-{}.toml", common::free_port()));
    std::fs::write(
        &config,
        "[[costs.budgets]]\nname = \"each-session\"\nscope = \"session\"\nlimit_usd = 1.0\n",
    )
    .unwrap();
    let m = common::mesh_with(&[("RELAY_CONFIG", config.to_str().unwrap())]).await;
    let g = gateway(&m, &[("RELAY_API_TOKEN", ROOT)]).await;
    let root = Bearer::new(&g, ROOT);
    let [(a_id, a), (_, b)] = two_workspaces(&root, ["ws-a", "ws-b"], "operator").await;

    // Workspace B: a session with an agent, a message, a pending permission and usage.
    let hb = Agent::connect(&m, "hb", "ws-b").await;
    assert!(
        hb.call("session.create", json!({"sessionId": "b-1", "title": "zebra plans"}))
            .await["sessionId"]
            .is_string()
    );
    let attached = hb
        .call(
            "session.agent.attach",
            json!({"sessionId": "b-1", "agent": {"kind": "adapter", "adapterName": "claude"}}),
        )
        .await;
    assert_eq!(attached["agentId"], "hb", "{attached}");
    let (status, sent) = b
        .post(
            "/api/v1/sessions/b-1/messages",
            json!({"message": "zebra crossing", "agentIds": ["hb"]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{sent}");
    let asked = hb
        .call(
            "permission.request",
            json!({"agentId": "hb", "sessionId": "b-1", "tool": "Bash", "command": "rm -rf /tmp/b", "description": "clean up"}),
        )
        .await;
    assert_eq!(asked["decision"], "pending", "{asked}");
    let request_id = asked["requestId"].as_str().unwrap().to_string();
    hb.call(
        "event.append",
        json!({"type": "tokens.used", "sessionId": "b-1", "payload": {"inputTokens": 100, "outputTokens": 20, "model": "m"}}),
    )
    .await;
    // B sees all of it (the costs once folded).
    assert_eq!(b.get("/api/v1/sessions/b-1").await.0, StatusCode::OK);
    let folded = relay_testkit::wait_for(|| async {
        let (_, c) = b.get("/api/v1/costs").await;
        (c["total"]["events"].as_i64() == Some(1)).then_some(c)
    })
    .await;
    assert_eq!(folded["total"]["inputTokens"], 100);
    let (_, budgets) = b.get("/api/v1/costs/budgets").await;
    assert_eq!(budgets["budgets"][0]["spending"][0]["key"], "b-1", "{budgets}");
    let (status, window) = b.get("/api/v1/sessions/b-1/context-window").await;
    assert_eq!(status, StatusCode::OK, "{window}");
    assert_eq!(window["state"]["currentTokens"], 120, "{window}");
    let (_, perms) = b.get("/api/v1/agents/hb/permissions").await;
    assert_eq!(perms["permissions"].as_array().unwrap().len(), 1, "{perms}");

    // A, over REST: not found, never listed, never counted.
    let (status, body) = a.get("/api/v1/sessions/b-1").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (_, list) = a.get("/api/v1/sessions?status=all").await;
    assert_eq!(list["total"], 0, "{list}");
    let (_, events) = a.get("/api/v1/events?sessionId=b-1").await;
    assert_eq!(events["events"].as_array().unwrap().len(), 0, "{events}");
    let (_, all_events) = a.get("/api/v1/events").await;
    assert!(
        all_events["events"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["workspace"] == "ws-a"),
        "{all_events}"
    );
    let (_, perms) = a.get("/api/v1/agents/hb/permissions").await;
    assert_eq!(perms["permissions"].as_array().unwrap().len(), 0, "{perms}");
    let (status, body) = a
        .post(
            &format!("/api/v1/agents/hb/permissions/{request_id}/approve"),
            json!({"reason": "mine now"}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (_, costs) = a.get("/api/v1/costs").await;
    assert_eq!(costs["total"]["events"], 0, "{costs}");
    let (_, budgets) = a.get("/api/v1/costs/budgets").await;
    assert_eq!(budgets["budgets"][0]["name"], "each-session", "{budgets}");
    assert_eq!(budgets["budgets"][0]["spending"], json!([]), "{budgets}");
    let (status, body) = a.get("/api/v1/sessions/b-1/context-window").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(
        a.get("/api/v1/deliveries?sessionId=b-1").await.1["deliveries"],
        json!([])
    );
    let delivery = sent["deliveryIds"][0].as_str().unwrap();
    assert_eq!(
        a.get(&format!("/api/v1/deliveries/{delivery}")).await.0,
        StatusCode::NOT_FOUND
    );
    let (status, _) = a.post("/api/v1/agents/hb/stop", json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // A send is scoped with its session's lock: refused, and nothing handed over.
    let (status, body) = a
        .post(
            "/api/v1/sessions/b-1/messages",
            json!({"message": "from a", "agentIds": ["hb"]}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (_, deliveries) = b.get("/api/v1/deliveries?sessionId=b-1").await;
    assert_eq!(
        deliveries["deliveries"].as_array().map(Vec::len),
        Some(1),
        "{deliveries}"
    );
    // A, over gRPC: the same answers.
    let channel = tonic::transport::Channel::from_shared(g.base.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    fn with_key<T>(token: &str, msg: T) -> tonic::Request<T> {
        let mut r = tonic::Request::new(msg);
        r.metadata_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
        r
    }
    let mut sessions = relay_proto::v1::session_service_client::SessionServiceClient::new(channel.clone());
    let hidden = sessions
        .get(with_key(
            &a.token,
            relay_proto::v1::SessionRef {
                session_id: "b-1".into(),
            },
        ))
        .await
        .expect_err("another workspace's session is not found over gRPC, as over REST");
    assert_eq!(hidden.code(), tonic::Code::NotFound, "{hidden:?}");
    let mut permissions = relay_proto::v1::permission_service_client::PermissionServiceClient::new(channel);
    let refused = permissions
        .get(with_key(
            &a.token,
            relay_proto::v1::GetPermissionRequest {
                request_id: request_id.clone(),
            },
        ))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::NotFound, "{refused:?}");

    // The request is still pending, untouched by A.
    let (_, still) = b.get("/api/v1/agents/hb/permissions").await;
    assert_eq!(still["permissions"][0]["status"], "pending");

    // A, over NATS as the gateway acting for A's key: search, counts and the log.
    let found = as_key_over_nats(&m, &a_id, "ws-a", "session.search", json!({"query": "zebra"})).await;
    assert_eq!(found["total"], 0, "{found}");
    let counts = as_key_over_nats(&m, &a_id, "ws-a", "session.getStatusCounts", json!({})).await;
    assert_eq!(counts["all"], 0, "{counts}");
    let since = as_key_over_nats(&m, &a_id, "ws-a", "event.since", json!({"seq": 0})).await;
    // A's own log holds only A's events (its audit trail: the workspace and key made for it).
    assert!(
        since["events"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["workspace"] == "ws-a"),
        "{since}"
    );
    let found_b = as_key_over_nats(&m, "kb", "ws-b", "session.search", json!({"query": "zebra"})).await;
    assert_eq!(found_b["total"], 1, "{found_b}");

    // An agent of A, over NATS on its own subjects: B's session does not exist for it.
    let ha = Agent::connect(&m, "ha", "ws-a").await;
    let refused = ha
        .call(
            "session.agent.attach",
            json!({"sessionId": "b-1", "agent": {"kind": "adapter", "adapterName": "claude"}}),
        )
        .await;
    assert_eq!(refused["error"]["code"], "not_found", "{refused}");
    let refused = ha
        .call("session.sendMessage", json!({"sessionId": "b-1", "message": "hi"}))
        .await;
    assert_eq!(refused["error"]["code"], "not_found", "{refused}");

    // A's stream from the start: A's own marker arrives, nothing of B ever does.
    let stream = a
        .http
        .get(format!("{}/api/v1/events/sse?offset=0", a.base))
        .bearer_auth(&a.token)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    let created = ha.call("session.create", json!({"sessionId": "a-1"})).await;
    assert_eq!(created["sessionId"], "a-1", "{created}");
    let marked = ha
        .call(
            "event.append",
            json!({"type": "log", "sessionId": "a-1", "payload": {"level": "info", "message": "marker"}}),
        )
        .await;
    assert!(marked["appended"][0]["seq"].is_i64(), "{marked}");
    let mut reader = SseReader::new(stream);
    let mut frames = Vec::new();
    loop {
        let f = reader.next().await;
        let done = f.event == "log";
        frames.push(f);
        if done {
            break;
        }
    }
    assert!(
        frames
            .iter()
            .all(|f| f.data["workspace"] == "ws-a" && f.data["sessionId"] != "b-1"),
        "{frames:?}"
    );
}

/// The holes a second tenant found (issue 35): a fork naming the victim's session as its
/// source, the hosts list, and events appended about the victim's session or agent — each
/// answers exactly as for an id that never existed, and a type only services write (the audit
/// trail, a budget, a decision) is refused to any key or agent.
#[tokio::test]
async fn another_workspaces_key_or_agent_cannot_fork_its_sessions_see_its_agents_on_hosts_or_forge_its_events() {
    let m = common::mesh().await;
    let g = gateway(&m, &[("RELAY_API_TOKEN", ROOT)]).await;
    let root = Bearer::new(&g, ROOT);
    let [(a_id, a), (_, b)] = two_workspaces(&root, ["ws-a", "ws-b"], "admin").await;

    // B: a session with an agent and a message; A: its own agent.
    let hb = Agent::connect(&m, "hb", "ws-b").await;
    hb.call("session.create", json!({"sessionId": "b-1", "title": "zebra plans"}))
        .await;
    let attached = hb
        .call(
            "session.agent.attach",
            json!({"sessionId": "b-1", "agent": {"kind": "adapter", "adapterName": "claude"}}),
        )
        .await;
    assert_eq!(attached["agentId"], "hb", "{attached}");
    let (status, sent) = b
        .post("/api/v1/sessions/b-1/messages", json!({"message": "zebra secret"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{sent}");
    let ha = Agent::connect(&m, "ha", "ws-a").await;
    ha.call("session.create", json!({"sessionId": "a-1"})).await;
    ha.call(
        "session.agent.attach",
        json!({"sessionId": "a-1", "agent": {"kind": "adapter", "adapterName": "claude"}}),
    )
    .await;

    // Fork, over REST and gRPC: B's session answers as an unknown one, and nothing is made.
    let (status, victim) = a.post("/api/v1/sessions/b-1/fork", json!({})).await;
    let (unknown_status, unknown) = a.post("/api/v1/sessions/no-such-session/fork", json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{victim}");
    assert_eq!(
        (status, &victim["error"]["code"]),
        (unknown_status, &unknown["error"]["code"])
    );
    let channel = tonic::transport::Channel::from_shared(g.base.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut sessions = relay_proto::v1::session_service_client::SessionServiceClient::new(channel);
    let fork = |source: &str| {
        let mut r = tonic::Request::new(relay_proto::v1::ForkRequest {
            source_session_id: source.into(),
            ..Default::default()
        });
        r.metadata_mut()
            .insert("authorization", format!("Bearer {}", a.token).parse().unwrap());
        r
    };
    let refused = sessions.fork(fork("b-1")).await.unwrap_err();
    let unknown = sessions.fork(fork("no-such-session")).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::NotFound, "{refused:?}");
    assert_eq!(refused.code(), unknown.code());
    // A request invalid in another way answers the same for B's session and an unknown one.
    for session in ["b-1", "no-such-session"] {
        let refused = as_key_over_nats(
            &m,
            &a_id,
            "ws-a",
            "session.compress",
            json!({"sessionId": session, "pipeline": []}),
        )
        .await;
        assert_eq!(refused["error"]["code"], "not_found", "{session}: {refused}");
    }
    let (_, list) = a.get("/api/v1/sessions?status=all").await;
    assert!(!list.to_string().contains("zebra"), "{list}");
    assert_eq!(list["total"], 1, "only A's own session: {list}");

    // Hosts: a host running both tenants' agents shows each tenant only its own.
    let beat = json!({"hostId": "h1", "labels": {}, "capacity": 8, "load": 2, "clis": ["claude"],
                      "agents": ["ha", "hb"], "version": "test"});
    relay_testkit::expect_ok(&m.client, "host.heartbeat", beat).await;
    let (status, hosts) = a.get("/api/v1/hosts").await;
    assert_eq!(status, StatusCode::OK, "{hosts}");
    assert_eq!(hosts["hosts"][0]["agents"], json!(["ha"]), "{hosts}");
    assert_eq!(hosts["hosts"][0]["load"], 1, "{hosts}");
    let (_, hosts_b) = b.get("/api/v1/hosts").await;
    assert_eq!(hosts_b["hosts"][0]["agents"], json!(["hb"]), "{hosts_b}");

    // Events about B's agent or session, as A's key (how the gateway calls for gRPC
    // EventService/Append) and as A's agent: not found, as for ids that never existed.
    let forgeries = [
        json!({"type": "status.active", "agentId": "hb"}),
        json!({"type": "usage.updated", "agentId": "hb", "sessionId": "b-1",
               "payload": {"inputTokens": 1_000_000, "outputTokens": 1, "model": "m"}}),
        json!({"type": "log", "sessionId": "a-1", "payload": {"level": "info", "message": "x", "sessionId": "b-1"}}),
    ];
    let unknowns = [
        json!({"type": "status.active", "agentId": "nobody"}),
        json!({"type": "usage.updated", "agentId": "nobody", "sessionId": "nothing",
               "payload": {"inputTokens": 1_000_000, "outputTokens": 1, "model": "m"}}),
        json!({"type": "log", "sessionId": "a-1", "payload": {"level": "info", "message": "x", "sessionId": "nothing"}}),
    ];
    for (forged, unknown) in forgeries.iter().zip(&unknowns) {
        let by_key = as_key_over_nats(&m, &a_id, "ws-a", "event.append", forged.clone()).await;
        let by_key_unknown = as_key_over_nats(&m, &a_id, "ws-a", "event.append", unknown.clone()).await;
        for refused in [&by_key, &by_key_unknown] {
            assert_eq!(refused["error"]["code"], "not_found", "{forged}: {refused}");
        }
        // An agent naming another agent at all is refused before anything is looked up.
        let by_agent = ha.call("event.append", forged.clone()).await;
        let by_agent_unknown = ha.call("event.append", unknown.clone()).await;
        assert!(by_agent["error"]["code"].is_string(), "{forged}: {by_agent}");
        assert_eq!(by_agent["error"]["code"], by_agent_unknown["error"]["code"], "{forged}");
    }
    // What A may write: its own session and agent.
    let own = ha
        .call("event.append", json!({"type": "status.active", "sessionId": "a-1"}))
        .await;
    assert!(own["appended"][0]["seq"].is_i64(), "{own}");
    // Types only the mesh's services write, even about one's own session.
    for t in [
        "audit.recorded",
        "budget.exceeded",
        "permission.resolved",
        "delivery.delivered",
        "session.created",
    ] {
        let forged = json!({"type": t, "sessionId": "a-1", "payload": {}});
        let by_key = as_key_over_nats(&m, &a_id, "ws-a", "event.append", forged.clone()).await;
        let by_agent = ha.call("event.append", forged).await;
        for refused in [&by_key, &by_agent] {
            assert_eq!(refused["error"]["code"], "forbidden", "{t}: {refused}");
        }
    }
    // The log, read across workspaces, holds none of it.
    let events = relay_testkit::expect_ok(
        &m.client,
        "event.query",
        json!({"agents": ["hb"], "types": ["status.active", "usage.updated"]}),
    )
    .await;
    assert_eq!(events["events"], json!([]), "{events}");

    // A fork of A's own session is A's to make, and its audit trail says who took the copy.
    let (status, forked) = a.post("/api/v1/sessions/a-1/fork", json!({})).await;
    assert_eq!(status, StatusCode::CREATED, "{forked}");
    let child = forked["sessionId"].as_str().unwrap().to_string();
    let entry = relay_testkit::wait_for(|| async {
        let (_, page) = a.get("/api/v1/audit").await;
        page["events"]
            .as_array()?
            .iter()
            .map(|e| e["payload"].clone())
            .find(|e| e["action"] == "session.fork" && e["target"] == child.as_str())
    })
    .await;
    assert_eq!(entry["actor"], format!("admin:{a_id}"), "{entry}");
    assert_eq!(entry["detail"]["sourceSessionId"], "a-1", "{entry}");
}

/// A workspace is deleted by the mesh's administrators only, once none of its agents is live:
/// its keys are revoked at once, it is not found from then on and its name is not reused.
/// Another workspace's admin gets what an unknown name gets; the workspace's own admin, 403.
#[tokio::test]
async fn a_deleted_workspace_loses_its_keys_at_once_and_only_the_meshs_admins_may_delete_one() {
    let m = common::mesh().await;
    let g = gateway(&m, &[("RELAY_API_TOKEN", ROOT)]).await;
    let root = Bearer::new(&g, ROOT);
    let [(gone_key_id, gone), (_, acme)] = two_workspaces(&root, ["gone", "acme"], "admin").await;
    let delete = |who: &Bearer, name: &str| {
        let (who, path) = (who.clone(), format!("/api/v1/workspaces/{name}"));
        async move { who.send(reqwest::Method::DELETE, &path, None).await }
    };
    let (status, other, _) = delete(&acme, "gone").await;
    let (unknown_status, unknown, _) = delete(&acme, "no-such-workspace").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{other}");
    assert_eq!(
        (status, &other["error"]["code"]),
        (unknown_status, &unknown["error"]["code"])
    );
    let (status, own, _) = delete(&gone, "gone").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{own}");
    let (status, default, _) = delete(&root, "default").await;
    assert_eq!(status, StatusCode::CONFLICT, "{default}");

    // A live agent holds it.
    let agent = Agent::connect(&m, "g1", "gone").await;
    agent.call("session.create", json!({"sessionId": "g-1"})).await;
    let attached = agent
        .call(
            "session.agent.attach",
            json!({"sessionId": "g-1", "agent": {"kind": "adapter", "adapterName": "claude"},
                   "capabilities": {"messaging": {"receive": true}, "delivery": {"modes": ["manual"]},
                                    "events": {"emits": []}, "lifecycle": {"release": true}}}),
        )
        .await;
    assert_eq!(attached["agentId"], "g1", "{attached}");
    let (status, held, _) = delete(&root, "gone").await;
    assert_eq!(status, StatusCode::CONFLICT, "{held}");
    assert_eq!(gone.get("/api/v1/sessions").await.0, StatusCode::OK);
    let released = agent
        .call("session.agent.release", json!({"sessionId": "g-1", "agentId": "g1"}))
        .await;
    assert!(released.get("error").is_none(), "{released}");

    let (status, deleted, _) = delete(&root, "gone").await;
    assert_eq!(status, StatusCode::OK, "{deleted}");
    assert_eq!(deleted["keysRevoked"], json!([gone_key_id]), "{deleted}");
    assert_eq!(gone.get("/api/v1/sessions").await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(root.get("/api/v1/workspaces/gone").await.0, StatusCode::NOT_FOUND);
    let (_, list) = root.get("/api/v1/workspaces").await;
    assert!(!list.to_string().contains("\"gone\""), "{list}");
    let (status, again) = root.post("/api/v1/workspaces", json!({"name": "gone"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{again}");
    let (status, key) = root
        .post(
            "/api/v1/keys",
            json!({"name": "late", "role": "viewer", "workspace": "gone"}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{key}");
    // relayctl deletes too.
    let out = common::relayctl(&m, &["workspaces", "delete", "acme"]);
    assert!(out.contains("acme: deleted, 1 key(s) revoked"), "{out}");
}
