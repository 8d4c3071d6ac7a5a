//! The agent directory over REST: `GET /agents`, `GET /agents/{name}`, and `{name}` as a
//! handle or an id in every agent route.

mod common;
use common::{Bearer, gateway, mesh};
use reqwest::StatusCode;
use serde_json::{Value, json};

const ROOT: &str = "agents-root-token";

#[tokio::test]
async fn agents_are_listed_and_found_by_handle_or_id_in_every_agent_route() {
    let m = mesh().await;
    let g = gateway(&m, &[("RELAY_API_TOKEN", ROOT)]).await;
    let root = Bearer::new(&g, ROOT);
    relay_testkit::expect_ok(&m.client, "session.create", json!({"sessionId": "s-dir"})).await;
    let attach = |handle: Option<&str>| json!({"sessionId": "s-dir", "agent": {"kind": "adapter", "adapterName": "claude"}, "handle": handle});
    let bob = relay_testkit::expect_ok(&m.client, "session.agent.attach", attach(Some("bob"))).await;
    let bob_id = bob["agentId"].as_str().unwrap().to_string();
    let other = relay_testkit::expect_ok(&m.client, "session.agent.attach", attach(None)).await;
    assert_eq!(other["handle"], "claude");

    let (status, listed) = root.get("/api/v1/agents").await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    assert_eq!(listed["total"], 2, "{listed}");
    let (status, listed) = root.get("/api/v1/agents?sessionId=s-dir&limit=1").await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    assert_eq!(listed["agents"].as_array().unwrap().len(), 1);

    for name in ["bob", "@bob", bob_id.as_str()] {
        let (status, agent) = root.get(&format!("/api/v1/agents/{name}")).await;
        assert_eq!(status, StatusCode::OK, "{name}: {agent}");
        assert_eq!(agent["agentId"], bob_id.as_str());
        assert_eq!(agent["handle"], "bob");
        assert_eq!(agent["sessionId"], "s-dir");
    }
    let (status, caps) = root.get("/api/v1/agents/@bob/capabilities").await;
    assert_eq!(status, StatusCode::OK, "{caps}");
    assert_eq!(caps["agentId"], bob_id.as_str());

    // A control route by handle reaches the agent by its id (once the runner has it).
    let hold = relay_testkit::wait_for(|| async {
        let (status, hold) = root.post("/api/v1/agents/bob/pause", json!({})).await;
        (status == StatusCode::OK).then_some(hold)
    })
    .await;
    assert_eq!(hold["agentId"], bob_id.as_str());
    assert_eq!(hold["paused"], true);

    // Unknown: 404 naming it; a handle that is no handle is refused at spawn.
    let (status, body) = root.get("/api/v1/agents/@ghost").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("@ghost"), "{body}");
    let (status, body) = root.post("/api/v1/agents/@ghost/pause", json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, body) = root
        .post("/api/v1/sessions", json!({"agent": "Not A Handle", "cli": "claude"}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

    // relayctl reads the same directory.
    let ctl = |args: &[&str]| common::relayctl(&m, args);
    let listed = ctl(&["agents", "list"]);
    assert!(listed.contains("@bob") && listed.contains("@claude"), "{listed}");
    assert!(ctl(&["agents", "show", "@bob"]).contains(&bob_id));

    // The agent hosts, as a spawner heartbeats them (any workspace's viewer may look).
    let beat = json!({"hostId": "gpu-box", "labels": {"gpu": "a100"}, "capacity": 4, "load": 1,
                      "clis": ["claude"], "agents": [], "version": "0.1.0"});
    relay_testkit::expect_ok(&m.client, "host.heartbeat", beat).await;
    let hosts = ctl(&["hosts"]);
    let row = hosts.lines().find(|l| l.starts_with("gpu-box")).unwrap_or_default();
    assert!(
        ["online", "1/4", "gpu=a100", "claude"].iter().all(|w| row.contains(w)),
        "{hosts}"
    );

    // Another workspace's key does not see them.
    root.post("/api/v1/workspaces", json!({"name": "elsewhere"})).await;
    let (_, outsider) = root.create_key("outsider", "viewer", Some("elsewhere")).await;
    let (status, hosts) = outsider.get("/api/v1/hosts?status=online").await;
    assert_eq!(status, StatusCode::OK, "{hosts}");
    assert_eq!(hosts["hosts"][0]["hostId"], "gpu-box", "{hosts}");
    assert_eq!(hosts["hosts"][0]["labels"]["gpu"], "a100", "{hosts}");
    let (status, body) = outsider.get("/api/v1/hosts?status=gone").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, listed) = outsider.get("/api/v1/agents").await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    assert_eq!(listed["total"], 0, "{listed}");
    for name in ["@bob", bob_id.as_str()] {
        let (status, body) = outsider.get(&format!("/api/v1/agents/{name}")).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{name}: {body}");
    }
}

/// Attaches an agent with `handle` (and `capabilities`) to `session`; its id.
async fn attach(m: &common::Mesh, session: &str, handle: &str, capabilities: Value) -> String {
    let body = json!({"sessionId": session, "agent": {"kind": "adapter", "adapterName": "claude"},
                      "handle": handle, "capabilities": capabilities});
    let attached = relay_testkit::expect_ok(&m.client, "session.agent.attach", body).await;
    attached["agentId"].as_str().unwrap().to_string()
}

fn caps() -> Value {
    json!({"messaging": {"receive": true}, "delivery": {"modes": ["immediate"]},
           "events": {"emits": ["status.changed"]}, "lifecycle": {"release": true},
           "actions": {"expose": true, "invoke": true}})
}

/// `GET /events?agent=` takes what the agent routes take: a handle (`bob`, `@bob`) or an id. A
/// handle no live agent has is 404, not an empty page that reads as "nothing happened".
#[tokio::test]
async fn events_of_an_agent_are_found_by_its_handle_and_an_unknown_handle_is_not_found() {
    let m = mesh().await;
    let g = gateway(&m, &[("RELAY_API_TOKEN", ROOT)]).await;
    let root = Bearer::new(&g, ROOT);
    relay_testkit::expect_ok(&m.client, "session.create", json!({"sessionId": "s-ev"})).await;
    let bob = attach(&m, "s-ev", "bob", caps()).await;
    let harness = relay_testkit::AsAgent::connect(&m.nats, &bob).await;
    let events: Vec<Value> = (0..3)
        .map(|i| json!({"type": "tool.called", "sessionId": "s-ev", "agentId": bob, "payload": {"tool": "bash", "input": {"n": i}}}))
        .collect();
    harness.ok("event.append", json!({ "events": events })).await;

    for name in ["bob", "@bob", bob.as_str()] {
        let (status, page) = root
            .get(&format!("/api/v1/events?agent={name}&types=tool.called"))
            .await;
        assert_eq!(status, StatusCode::OK, "{name}: {page}");
        let found = page["events"].as_array().unwrap();
        assert_eq!(found.len(), 3, "{name}: {page}");
        assert!(found.iter().all(|e| e["agentId"] == bob.as_str()), "{name}: {page}");
    }
    for name in ["@ghost", "ghost"] {
        let (status, body) = root.get(&format!("/api/v1/events?agent={name}")).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{name}: {body}");
        assert_eq!(body["error"]["code"], "not_found", "{name}: {body}");
        assert!(body["error"]["message"].as_str().unwrap().contains("ghost"), "{body}");
    }
}

/// `relayctl actions list` shows what `GET /actions` shows the admin key: all six of an agent's
/// actions, not only the four an operator may invoke.
#[tokio::test]
async fn relayctl_lists_every_action_of_an_agent_that_get_actions_lists() {
    let m = mesh().await;
    let g = gateway(&m, &[("RELAY_API_TOKEN", ROOT)]).await;
    let root = Bearer::new(&g, ROOT);
    relay_testkit::expect_ok(&m.client, "session.create", json!({"sessionId": "s-act"})).await;
    let calc = attach(&m, "s-act", "calc", caps()).await;
    let harness = relay_testkit::AsAgent::connect(&m.nats, &calc).await;
    let object = json!({"type": "object"});
    let actions = json!([
        {"name": "add", "inputSchema": object},
        {"name": "sub", "inputSchema": object, "availableTo": ["*"]},
        {"name": "restart", "inputSchema": object, "availableTo": ["role:operator"]},
        {"name": "status", "inputSchema": object, "availableTo": ["role:viewer", "role:operator"]},
        {"name": "deploy", "inputSchema": object, "availableTo": ["#ops"]},
        {"name": "review", "inputSchema": object, "availableTo": ["role:agent"]},
    ]);
    harness
        .ok("action.expose", json!({"agentId": calc, "actions": actions}))
        .await;

    let (status, listed) = root.get("/api/v1/actions?agent=@calc").await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    let names = |v: &Value| -> Vec<String> {
        let mut n: Vec<String> = v["actions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["name"].as_str().unwrap().to_string())
            .collect();
        n.sort();
        n
    };
    let all = names(&listed);
    assert_eq!(all.len(), 6, "{listed}");

    let ctl = |args: &[&str]| common::relayctl(&m, args);
    let json: Value = serde_json::from_str(&ctl(&["--json", "actions", "list", "--agent", "@calc"])).unwrap();
    assert_eq!(names(&json), all, "{json}");
    let table = ctl(&["actions", "list"]);
    for name in &all {
        assert!(
            table
                .lines()
                .any(|l| l.starts_with("@calc") && l.contains(name.as_str())),
            "{name} missing: {table}"
        );
    }
}

/// An agent listing says what each agent last reported (seed 000 `status.changed`), not
/// `active` for every live agent; `?status=waiting` lists who waits on a person.
#[tokio::test]
async fn agents_show_the_status_they_last_reported_and_are_listed_by_it() {
    let m = mesh().await;
    let g = gateway(&m, &[("RELAY_API_TOKEN", ROOT)]).await;
    let root = Bearer::new(&g, ROOT);
    relay_testkit::expect_ok(&m.client, "session.create", json!({"sessionId": "s-st"})).await;
    for (handle, events) in [
        (
            "bob",
            vec![
                json!({"type": "status.changed", "payload": {"status": "active"}}),
                json!({"type": "status.changed", "payload": {"status": "waiting", "previousStatus": "active", "reason": "permission"}}),
            ],
        ),
        (
            "carol",
            vec![json!({"type": "status.changed", "payload": {"status": "blocked"}})],
        ),
        ("dave", vec![json!({"type": "status.idle", "payload": {}})]),
    ] {
        let id = attach(&m, "s-st", handle, caps()).await;
        let harness = relay_testkit::AsAgent::connect(&m.nats, &id).await;
        let events: Vec<Value> = events
            .into_iter()
            .map(|mut e| {
                e["sessionId"] = json!("s-st");
                e["agentId"] = json!(id);
                e
            })
            .collect();
        harness.ok("event.append", json!({ "events": events })).await;
    }

    // The registry follows the log: each shows its last report once it is there.
    let expected = [("bob", "waiting"), ("carol", "blocked"), ("dave", "idle")];
    for (handle, status) in expected {
        let agent = relay_testkit::wait_for(|| async {
            let (_, agent) = root.get(&format!("/api/v1/agents/@{handle}")).await;
            (agent["reportedStatus"] == status).then_some(agent)
        })
        .await;
        assert_eq!(agent["status"], "active", "the registry's record stays: {agent}");
        assert!(agent["reportedStatusAt"].as_i64().is_some(), "{agent}");
    }
    let (status, listed) = root.get("/api/v1/agents?sessionId=s-st").await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    for (handle, reported) in expected {
        let agent = listed["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["handle"] == handle)
            .unwrap_or_else(|| panic!("{handle}: {listed}"));
        assert_eq!(agent["reportedStatus"], reported, "{listed}");
    }

    // Who waits on a person, who is blocked.
    let (status, waiting) = root.get("/api/v1/agents?status=waiting").await;
    assert_eq!(status, StatusCode::OK, "{waiting}");
    assert_eq!(waiting["total"], 1, "{waiting}");
    assert_eq!(waiting["agents"][0]["handle"], "bob", "{waiting}");
    let (_, blocked) = root.get("/api/v1/agents?status=blocked").await;
    assert_eq!(blocked["total"], 1, "{blocked}");
    assert_eq!(blocked["agents"][0]["handle"], "carol", "{blocked}");
    let (status, body) = root.get("/api/v1/agents?status=sleepy").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

    // relayctl shows and filters the same.
    let ctl = |args: &[&str]| common::relayctl(&m, args);
    let waiting = ctl(&["agents", "list", "--status", "waiting"]);
    let bob_row = waiting.lines().find(|l| l.starts_with("@bob")).unwrap_or_default();
    assert!(bob_row.contains("waiting"), "{waiting}");
    assert!(!waiting.contains("@carol") && !waiting.contains("@dave"), "{waiting}");
    let all = ctl(&["agents", "list", "--session", "s-st"]);
    let carol_row = all.lines().find(|l| l.starts_with("@carol")).unwrap_or_default();
    assert!(carol_row.contains("blocked"), "{all}");
}
