//! The agent directory over REST: `GET /agents`, `GET /agents/{name}`, and `{name}` as a
//! handle or an id in every agent route.

mod common;
use common::{Bearer, gateway, mesh};
use reqwest::StatusCode;
use serde_json::json;

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
