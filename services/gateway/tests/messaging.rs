//! Relay messaging over the real mesh with auth on: fake agents under their PTY harnesses
//! (each its own NATS identity), people through the gateway with API keys. Agents send with the
//! output convention (`->relay:@bob text`, written by the fake's `say`); what each agent got is
//! what it was typed (its `--log`).

mod common;
use common::{Bearer, gateway, mesh_with};
use relay_testkit::{ServiceProcess, wait_for};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::PathBuf;

const ROOT: &str = "messaging-root-token";

struct World {
    m: common::Mesh,
    _g: common::Gateway,
    root: Bearer,
    logs: HashMap<String, PathBuf>,
    agents: HashMap<String, String>,
    _spawner: ServiceProcess,
}

/// The mesh, the gateway and one fake claude-style agent per handle, each logging what it is typed.
async fn world(handles: &[&str], env: &[(&str, &str)]) -> World {
    let m = mesh_with(env).await;
    let g = gateway(&m, &[("RELAY_API_TOKEN", ROOT)]).await;
    let root = Bearer::new(&g, ROOT);
    let dir = std::env::temp_dir().join(format!("relay-messaging-{}", common::free_port()));
    std::fs::create_dir_all(&dir).unwrap();
    let fake = relay_testkit::bin_path("fake-agent");
    let mut config = String::new();
    let mut logs = HashMap::new();
    for h in handles {
        let log = dir.join(format!("{h}.log"));
        std::fs::write(&log, "").unwrap();
        config += &format!(
            "[spawner.agents.{h}]\ncommand = [{fake:?}, \"--style\", \"claude\", \"--log\", {:?}]\npatterns = \"claude\"\n",
            log.to_str().unwrap()
        );
        logs.insert(h.to_string(), log);
    }
    let config_path = dir.join("spawner.toml");
    std::fs::write(&config_path, config).unwrap();
    let spawner = ServiceProcess::spawn(
        &relay_testkit::bin_path("agent-spawner"),
        &m.nats,
        &m.db,
        &[("RELAY_CONFIG", config_path.to_str().unwrap())],
    );
    relay_testkit::wait_for_instances(&m.client, "agent-spawner", 1).await;
    let mut agents = HashMap::new();
    for h in handles {
        let (status, created) = root.post("/api/v1/sessions", json!({"cli": h, "agent": h})).await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
        agents.insert(h.to_string(), created["agentId"].as_str().unwrap().to_string());
    }
    World {
        m,
        _g: g,
        root,
        logs,
        agents,
        _spawner: spawner,
    }
}

impl World {
    /// The messages `handle` was typed so far, one per entry (newlines as `\n`).
    fn surfaced(&self, handle: &str) -> Vec<String> {
        std::fs::read_to_string(&self.logs[handle])
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Waits until `handle` was typed a message containing `needle`; that message.
    async fn wait_surfaced(&self, handle: &str, needle: &str) -> String {
        wait_for(|| async { self.surfaced(handle).into_iter().find(|l| l.contains(needle)) }).await
    }

    async fn send(&self, body: Value) -> Value {
        let (status, sent) = self.root.post("/api/v1/messages", body).await;
        assert_eq!(status, StatusCode::CREATED, "{sent}");
        sent
    }

    /// The relay messages found by full-text search for `q`, newest first.
    async fn search(&self, q: &str) -> Vec<Value> {
        let (status, page) = self
            .root
            .get(&format!("/api/v1/messages?q={}", q.replace(' ', "+")))
            .await;
        assert_eq!(status, StatusCode::OK, "{page}");
        page["messages"].as_array().unwrap().clone()
    }

    async fn delivered(&self, delivery_id: &str) -> bool {
        let (status, d) = self.root.get(&format!("/api/v1/deliveries/{delivery_id}")).await;
        status == StatusCode::OK && d["status"] == "delivered"
    }
}

fn reasons(sent: &Value) -> HashMap<String, String> {
    sent["recipients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["handle"].as_str().unwrap().to_string(),
                r["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn agents_talk_by_dm_group_channel_mention_and_thread_each_with_its_reason() {
    let w = world(&["alice", "bob", "carol"], &[]).await;

    // A person's DM to bob makes bob DM alice with the output convention: alice gets it from
    // @bob, as a DM, and the log names bob's agent as the sender.
    let sent = w
        .send(json!({"to": "@bob", "text": "say ->relay:@alice hello alice"}))
        .await;
    assert_eq!(reasons(&sent), HashMap::from([("bob".to_string(), "dm".to_string())]));
    let got = w.wait_surfaced("alice", "hello alice").await;
    assert!(got.contains("[relay dm from @bob"), "{got}");
    let found = wait_for(|| async {
        w.search("hello alice")
            .await
            .into_iter()
            .find(|m| m["from"]["kind"] == "agent")
    })
    .await;
    assert_eq!(found["from"]["handle"], "bob");
    assert_eq!(found["from"]["id"], w.agents["bob"].as_str());
    assert_eq!(found["conversation"], "dm:@alice,@bob");
    let delivery = found["recipients"][0]["deliveryId"].as_str().unwrap().to_string();
    wait_for(|| async { w.delivered(&delivery).await.then_some(()) }).await;
    // Her terminal shows it: the agent's recent output over REST, by handle, oldest row first.
    let rows = wait_for(|| async {
        let (_, out) = w.root.get("/api/v1/agents/@alice/output?limit=20").await;
        let rows: Vec<String> = out["rows"]
            .as_array()?
            .iter()
            .map(|r| r["text"].as_str().unwrap_or_default().to_string())
            .collect();
        rows.iter().any(|r| r.contains("Received: hello alice")).then_some(rows)
    })
    .await;
    assert!(rows.len() <= 20, "{rows:?}");

    // A channel: members get `message`, a mentioned agent that is no member `mention`.
    let (status, ops) = w
        .root
        .post("/api/v1/channels", json!({"name": "ops", "topic": "deploys"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{ops}");
    for h in ["@alice", "@bob"] {
        let (status, members) = w.root.post("/api/v1/channels/ops/join", json!({"agent": h})).await;
        assert_eq!(status, StatusCode::OK, "{members}");
    }
    let sent = w
        .send(json!({"to": "#ops", "text": "deploy is done, @carol please check"}))
        .await;
    assert_eq!(
        reasons(&sent),
        HashMap::from([
            ("alice".to_string(), "message".to_string()),
            ("bob".to_string(), "message".to_string()),
            ("carol".to_string(), "mention".to_string()),
        ])
    );
    for h in ["alice", "bob"] {
        assert!(
            w.wait_surfaced(h, "deploy is done")
                .await
                .contains("[relay message from key:")
        );
    }
    assert!(
        w.wait_surfaced("carol", "deploy is done")
            .await
            .contains("[relay mention from key:")
    );

    // A group DM: both get `dm`, in one conversation with the sender.
    let sent = w
        .send(json!({"to": ["@alice", "@carol"], "text": "standup in 5"}))
        .await;
    assert_eq!(reasons(&sent).values().collect::<Vec<_>>(), vec!["dm", "dm"]);
    assert!(
        sent["conversation"]
            .as_str()
            .unwrap()
            .starts_with("dm:@alice,@carol,key:"),
        "{sent}"
    );
    w.wait_surfaced("alice", "standup in 5").await;
    w.wait_surfaced("carol", "standup in 5").await;

    // A thread in #ops: alice and bob both answer the root with `->relay:reply`; a person's
    // reply in the thread then reaches both of them as `thread-reply`.
    let root = w.send(json!({"to": "#ops", "text": "say ->relay:reply on it"})).await;
    let root_id = root["messageId"].as_str().unwrap().to_string();
    let thread = wait_for(|| async {
        let (_, t) = w.root.get(&format!("/api/v1/messages/{root_id}/thread")).await;
        (t["replies"].as_array().map_or(0, Vec::len) == 2).then_some(t)
    })
    .await;
    let repliers: Vec<&str> = thread["replies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["from"]["handle"].as_str().unwrap())
        .collect();
    assert!(repliers.contains(&"alice") && repliers.contains(&"bob"), "{thread}");
    let reply = w.send(json!({"threadId": root_id, "text": "thanks both"})).await;
    assert_eq!(
        reasons(&reply),
        HashMap::from([
            ("alice".to_string(), "thread-reply".to_string()),
            ("bob".to_string(), "thread-reply".to_string()),
        ])
    );
    for h in ["alice", "bob"] {
        assert!(
            w.wait_surfaced(h, "thanks both")
                .await
                .contains("[relay thread-reply from key:")
        );
    }
    assert!(!w.surfaced("carol").iter().any(|l| l.contains("thanks both")));

    // The channel's history is in order; the log has message.exchanged for every send.
    let (status, history) = w.root.get("/api/v1/channels/ops/history").await;
    assert_eq!(status, StatusCode::OK, "{history}");
    let texts: Vec<&str> = history["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts[0], "deploy is done, @carol please check", "{texts:?}");
    assert_eq!(texts[1], "say ->relay:reply on it", "{texts:?}");
    assert_eq!(texts.last(), Some(&"thanks both"), "{texts:?}");
    let logged = wait_for(|| async {
        let (_, events) = w.root.get("/api/v1/events?types=message.exchanged&limit=100").await;
        let events = events["events"].as_array().cloned().unwrap_or_default();
        events
            .iter()
            .any(|e| e["payload"]["body"] == "thanks both")
            .then_some(events)
    })
    .await;
    let thanks = logged.iter().find(|e| e["payload"]["body"] == "thanks both").unwrap();
    assert_eq!(thanks["sessionId"], "#ops", "{thanks}");
    assert_eq!(thanks["payload"]["kind"], "channel", "{thanks}");

    // The channel's own SSE stream replays its messages in order, and resumes after the last
    // one seen without a gap or a repeat.
    let sse = |last: Option<i64>| {
        let mut r = w
            .root
            .http
            .get(format!("{}/api/v1/channels/ops/events/sse?offset=0", w.root.base))
            .bearer_auth(ROOT);
        if let Some(id) = last {
            r = r.header("Last-Event-ID", id.to_string());
        }
        async move { common::SseReader::new(r.send().await.unwrap()) }
    };
    let mut stream = sse(None).await;
    let first = stream.take(2).await;
    assert!(first.iter().all(|f| f.event == "message.exchanged"), "{first:?}");
    assert_eq!(first[0].data["payload"]["body"], texts[0]);
    assert_eq!(first[1].data["payload"]["body"], texts[1]);
    let mut resumed = sse(Some(first[0].id)).await;
    let next = resumed.next().await;
    assert_eq!(next.id, first[1].id);

    // relayctl speaks the same: send as operator:relayctl, list channels, tail a channel.
    let ctl = |args: &[&str]| common::relayctl(&w.m, args);
    let sent = ctl(&["send", "@carol", "from", "the", "terminal"]);
    assert!(
        sent.contains("@carol") && sent.contains("dm") && sent.contains("queued"),
        "{sent}"
    );
    assert!(
        w.wait_surfaced("carol", "from the terminal")
            .await
            .contains("[relay dm from key:relayctl")
    );
    assert!(ctl(&["channels", "list"]).contains("#ops"));
    assert!(ctl(&["channels", "members", "ops"]).contains("@alice"));
    let tailed = ctl(&["tail", "#ops", "--from-seq", "0", "--count", "2"]);
    assert!(
        tailed.contains("deploy is done") && tailed.contains("→ #ops"),
        "{tailed}"
    );
}

#[tokio::test]
async fn bad_messages_are_refused_with_what_is_wrong_and_nothing_is_stored() {
    let w = world(&["alice"], &[]).await;
    let refuse = |body: Value, status: StatusCode, needle: &'static str| {
        let w = &w;
        async move {
            let (got, err) = w.root.post("/api/v1/messages", body).await;
            assert_eq!(got, status, "{err}");
            let message = err["error"]["message"].as_str().unwrap_or_default().to_string();
            assert!(message.contains(needle), "{needle:?} not in {err}");
        }
    };
    // The sender is the key: a body that names one is refused, like any unknown field.
    refuse(
        json!({"to": "@alice", "text": "hi", "from": "@mallory"}),
        StatusCode::BAD_REQUEST,
        "from",
    )
    .await;
    refuse(json!({"to": "@ghost", "text": "hi"}), StatusCode::NOT_FOUND, "@ghost").await;
    refuse(json!({"to": "#nope", "text": "hi"}), StatusCode::NOT_FOUND, "#nope").await;
    refuse(json!({"to": "alice", "text": "hi"}), StatusCode::BAD_REQUEST, "handle").await;
    refuse(json!({"to": "@alice", "text": "   "}), StatusCode::BAD_REQUEST, "empty").await;
    refuse(json!({"text": "hi"}), StatusCode::BAD_REQUEST, "threadId").await;
    refuse(
        json!({"threadId": "no-such-message", "text": "hi"}),
        StatusCode::NOT_FOUND,
        "no-such-message",
    )
    .await;
    refuse(
        json!({"to": "@alice", "text": "hi", "deadline": "tomorrow"}),
        StatusCode::BAD_REQUEST,
        "RFC 3339",
    )
    .await;
    refuse(
        json!({"to": "@alice", "text": "look", "attachments": [{"type": "image", "data": "AA==", "mediaType": "image/png"}]}),
        StatusCode::UNPROCESSABLE_ENTITY,
        "messaging.attachments: image",
    )
    .await;
    // A thread of another workspace is not found here, exactly as one that never existed.
    let sent = w.send(json!({"to": "@alice", "text": "first"})).await;
    w.root.post("/api/v1/workspaces", json!({"name": "other"})).await;
    let (_, outsider) = w.root.create_key("outsider", "operator", Some("other")).await;
    let (status, err) = outsider
        .post("/api/v1/messages", json!({"threadId": sent["messageId"], "text": "hi"}))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{err}");
    assert!(!err.to_string().contains("default"), "names no workspace: {err}");
    let (status, err) = outsider
        .get(&format!("/api/v1/messages/{}", sent["messageId"].as_str().unwrap()))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{err}");
    // A viewer may read but not send.
    let (_, viewer) = w.root.create_key("viewer", "viewer", None).await;
    let (status, err) = viewer
        .post("/api/v1/messages", json!({"to": "@alice", "text": "hi"}))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{err}");
    let (status, _) = viewer.get("/api/v1/channels").await;
    assert_eq!(status, StatusCode::OK);
    // A retried send with the same idempotency key is the first one.
    let body = json!({"to": "@alice", "text": "dispatch", "idempotencyKey": "k-1"});
    let first = w.send(body.clone()).await;
    let (status, again) = w.root.post("/api/v1/messages", body).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again["messageId"], first["messageId"]);
    assert_eq!(again["duplicate"], true);
    // Nothing half-stored: alice got exactly the two good messages.
    w.wait_surfaced("alice", "dispatch").await;
    let (_, page) = w.root.get("/api/v1/messages?q=hi+OR+look+OR+first+OR+dispatch").await;
    let stored: Vec<&str> = page["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(stored, vec!["dispatch", "first"], "{page}");
}

#[tokio::test]
async fn a_reply_loop_between_two_agents_is_stopped_by_the_hop_guard() {
    let w = world(&["alice", "bob"], &[("RELAY_REGISTRY__MESSAGING__MAX_HOPS", "2")]).await;
    // Each agent answers what it got in the thread, one level less deep: without the guard the
    // exchange would go five replies deep.
    let nested = "say ->relay:reply ".repeat(5) + "bottom";
    w.send(json!({"to": "@alice", "text": format!("say ->relay:@bob {nested}")}))
        .await;
    let root = wait_for(|| async {
        w.search("bottom")
            .await
            .into_iter()
            .find(|m| m["from"]["handle"] == "alice" && m["threadId"].is_null())
    })
    .await;
    let root_id = root["messageId"].as_str().unwrap().to_string();
    // The third reply is refused: its sender's harness logs the guard's reason.
    let refused = wait_for(|| async {
        let (_, events) = w.root.get("/api/v1/events?types=log&limit=100").await;
        events["events"].as_array().unwrap().iter().find_map(|e| {
            let m = e["payload"]["message"].as_str().unwrap_or_default();
            m.contains("reply loop guard").then(|| m.to_string())
        })
    })
    .await;
    assert!(refused.contains("messaging.max_hops is 2"), "{refused}");
    let (_, thread) = w.root.get(&format!("/api/v1/messages/{root_id}/thread")).await;
    let hops: Vec<i64> = thread["replies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["hop"].as_i64().unwrap())
        .collect();
    assert_eq!(hops, vec![1, 2], "{thread}");
    // A person speaking in the thread starts the count again.
    let (status, sent) = w
        .root
        .post("/api/v1/messages", json!({"threadId": root_id, "text": "enough"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{sent}");
    let (_, got) = w
        .root
        .get(&format!("/api/v1/messages/{}", sent["messageId"].as_str().unwrap()))
        .await;
    assert_eq!(got["hop"], 0);
    let _ = &w.m;
}

/// The numbers in `log` lines that carry `prefix-<n>`, in the order they were typed.
fn numbered(lines: &[String], prefix: &str) -> Vec<u32> {
    lines
        .iter()
        .filter_map(|l| l.split(&format!("{prefix}-")).nth(1))
        .filter_map(|rest| rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
        .collect()
}

#[tokio::test]
async fn a_delivery_runner_killed_mid_conversation_loses_repeats_and_reorders_nothing() {
    const N: u32 = 30;
    // A killed runner's agents are taken over once its lease ends: a short one here.
    let lease = [("RELAY_RUNNER__LEASE_MS", "1500")];
    let mut w = world(&["alice", "bob"], &lease).await;
    w.root.post("/api/v1/channels", json!({"name": "ops"})).await;
    for h in ["@alice", "@bob"] {
        w.root.post("/api/v1/channels/ops/join", json!({"agent": h})).await;
    }
    // Two conversations, interleaved, each message acknowledged before the next is sent.
    let sender = {
        let root = w.root.clone();
        tokio::spawn(async move {
            for i in 1..=N {
                for (to, prefix) in [("@alice", "dm"), ("#ops", "ops")] {
                    let (status, sent) = root
                        .post(
                            "/api/v1/messages",
                            json!({"to": to, "text": format!("{prefix}-{i:03}")}),
                        )
                        .await;
                    assert_eq!(status, StatusCode::CREATED, "{sent}");
                }
            }
        })
    };
    // kill -9 the runner once a third of alice's messages surfaced, start another.
    wait_for(|| async { (w.surfaced("alice").len() as u32 >= 2 * N / 3).then_some(()) }).await;
    w.m._services[2].kill9().await;
    relay_testkit::wait_until_unserved(&w.m.client, "delivery.get").await;
    let runner = ServiceProcess::spawn(&relay_testkit::bin_path("delivery-runner"), &w.m.nats, &w.m.db, &lease);
    relay_testkit::wait_for_instances(&w.m.client, "delivery-runner", 1).await;
    sender.await.unwrap();

    let all: Vec<u32> = (1..=N).collect();
    wait_for(|| async {
        let a = w.surfaced("alice");
        (numbered(&a, "dm").len() as u32 >= N && numbered(&a, "ops").len() as u32 >= N).then_some(())
    })
    .await;
    wait_for(|| async { (numbered(&w.surfaced("bob"), "ops").len() as u32 >= N).then_some(()) }).await;
    let (alice, bob) = (w.surfaced("alice"), w.surfaced("bob"));
    assert_eq!(numbered(&alice, "dm"), all, "alice's DMs: once each, in order");
    assert_eq!(numbered(&alice, "ops"), all, "#ops for alice: once each, in order");
    assert_eq!(numbered(&bob, "ops"), all, "#ops for bob: once each, in order");
    drop(runner);
}

/// The runner is killed (abort: no cleanup, like kill -9) at one step of a delivery's hand-off,
/// with a lease far longer than the test waits: the harness's report of what it was handed is
/// taken by the successor, the dead runner's agent is taken over through its liveness lock, and
/// every message is typed once, in order, and `delivered`. Returns how long the takeover took.
async fn a_runner_killed_at(point: &str) -> std::time::Duration {
    const N: u32 = 8;
    let lease = ("RELAY_RUNNER__LEASE_MS", "600000");
    let crash = format!("{point}:3");
    let mut w = world(&["alice"], &[lease, ("RELAY_RUNNER_CRASH_AT", &crash)]).await;
    let alice = w.agents["alice"].clone();
    for i in 1..=N {
        w.send(json!({"to": "@alice", "text": format!("dm-{i:03}")})).await;
    }
    let died = w.m._services[2].wait_exit(std::time::Duration::from_secs(60)).await;
    assert_eq!(died, Some(false), "the runner should have died at {point} #3");
    let dead_at = std::time::Instant::now();
    let runner = ServiceProcess::spawn(
        &relay_testkit::bin_path("delivery-runner"),
        &w.m.nats,
        &w.m.db,
        &[lease],
    );
    let all: Vec<u32> = (1..=N).collect();
    let path = format!("/api/v1/deliveries?agentId={alice}");
    // Well inside the lease: only liveness can have handed the agent over.
    relay_testkit::wait_for_within(std::time::Duration::from_secs(60), || async {
        let (_, list) = w.root.get(&path).await;
        let delivered = list["deliveries"]
            .as_array()?
            .iter()
            .filter(|d| d["status"] == "delivered")
            .count();
        (delivered as u32 == N && numbered(&w.surfaced("alice"), "dm").len() as u32 >= N).then_some(())
    })
    .await;
    let took = dead_at.elapsed();
    assert_eq!(
        numbered(&w.surfaced("alice"), "dm"),
        all,
        "alice's DMs: once each, in order"
    );
    eprintln!("killed at {point}: every delivery delivered {took:?} after the kill");
    drop(runner);
    took
}

#[tokio::test]
async fn a_runner_killed_after_the_harness_took_a_delivery_but_before_recording_it_leaves_nothing_stuck() {
    a_runner_killed_at("handed").await;
}

#[tokio::test]
async fn a_runner_killed_after_recording_a_hand_off_leaves_nothing_stuck() {
    a_runner_killed_at("recorded").await;
}

#[tokio::test]
async fn a_runner_killed_while_the_harness_reports_what_it_typed_leaves_nothing_stuck() {
    a_runner_killed_at("reported").await;
}
