//! relayctl as an operator runs it: the real binary against the real services on a private
//! NATS and a fresh database, reading its stdout, stderr and exit code.

use relay_testkit::{Database, Nats, ServiceProcess, bin_path, expect_ok, wait_for};
use serde_json::json;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

const RELAYCTL: &str = env!("CARGO_BIN_EXE_relayctl");

struct Mesh {
    ctl: Ctl,
    client: async_nats::Client,
    _services: Vec<ServiceProcess>,
    _nats: Nats,
    _db: Database,
}

async fn mesh() -> Mesh {
    let nats = Nats::start().await;
    let db = Database::create().await;
    let client = nats.client().await;
    let names = relay_testkit::BUS_SERVICES;
    let services = names
        .iter()
        .map(|s| ServiceProcess::spawn(&bin_path(s), &nats, &db, &[]))
        .collect();
    for s in names {
        relay_testkit::wait_for_instances(&client, s, 1).await;
    }
    Mesh {
        ctl: Ctl {
            nats_url: nats.url.clone(),
            database_url: db.url.clone(),
            env: nats.env_for(relay_contracts::access::ADMIN),
        },
        client,
        _services: services,
        _nats: nats,
        _db: db,
    }
}

/// How to run relayctl against one mesh.
struct Ctl {
    nats_url: String,
    database_url: String,
    /// Its NATS identity: `admin`, as an operator's relayctl.
    env: Vec<(String, String)>,
}

impl Ctl {
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(RELAYCTL);
        cmd.args(args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .env("RELAY_NATS__URL", &self.nats_url)
            .env("RELAY_DATABASE__URL", &self.database_url)
            .env_remove("RELAY_CONFIG");
        cmd
    }

    async fn run(&self, args: &[&str]) -> Output {
        let mut cmd = self.command(args);
        tokio::task::spawn_blocking(move || cmd.output().unwrap())
            .await
            .unwrap()
    }

    async fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args).await;
        assert!(
            out.status.success(),
            "relayctl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }
}

impl std::ops::Deref for Mesh {
    type Target = Ctl;
    fn deref(&self) -> &Ctl {
        &self.ctl
    }
}

#[tokio::test]
async fn migrate_applies_what_is_missing_and_then_nothing() {
    let db = Database::create().await;
    let ctl = Ctl {
        nats_url: "nats://127.0.0.1:1".into(), // migrate needs no NATS
        database_url: db.url.clone(),
        env: Vec::new(),
    };
    let first = ctl.ok(&["migrate"]).await;
    assert!(first.contains(", 0 applied,"), "{first}");
    assert!(first.contains("applied 20261123000001 registry"), "{first}");
    let again = ctl.ok(&["migrate"]).await;
    assert!(again.contains("0 to apply"), "{again}");
    assert!(!again.contains("applied 2026"), "{again}");
}

#[tokio::test]
async fn sessions_permissions_costs_and_services_show_what_the_mesh_holds() {
    let m = mesh().await;
    let created = expect_ok(&m.client, "session.create", json!({ "title": "ops view" })).await;
    let session = created["sessionId"].as_str().unwrap();

    let list = m.ok(&["sessions", "list"]).await;
    assert!(list.contains(session) && list.contains("ops view"), "{list}");
    let shown = m.ok(&["sessions", "show", session]).await;
    assert!(shown.contains("title     ops view"), "{shown}");
    let json_list: serde_json::Value = serde_json::from_str(&m.ok(&["--json", "sessions", "list"]).await).unwrap();
    assert_eq!(json_list["sessions"][0]["sessionId"], session);

    // A destructive command needs a human: pending, then approved from the CLI.
    let asked = expect_ok(
        &m.client,
        "permission.request",
        json!({ "agentId": "agent-1", "sessionId": session, "tool": "Bash", "command": "rm -rf build", "description": "clean" }),
    )
    .await;
    let request_id = asked["requestId"].as_str().unwrap();
    let pending = m.ok(&["permissions", "list", "--status", "pending"]).await;
    assert!(
        pending.contains(request_id) && pending.contains("rm -rf build"),
        "{pending}"
    );
    let approved = m
        .ok(&["permissions", "approve", request_id, "--reason", "ok by ops"])
        .await;
    assert!(approved.contains("approved"), "{approved}");
    let still_pending = m.ok(&["permissions", "list", "--status", "pending"]).await;
    assert!(!still_pending.contains(request_id), "{still_pending}");

    // Usage events priced by the cost aggregator.
    expect_ok(
        &m.client,
        "event.append",
        json!({ "type": "tokens.used", "sessionId": session, "agentId": "agent-1",
                "payload": { "model": "claude-sonnet-4-5", "inputTokens": 1000, "outputTokens": 500 } }),
    )
    .await;
    let costs = wait_for(|| async {
        let out = m.ok(&["costs", "--session", session]).await;
        out.contains("1500").then_some(out)
    })
    .await;
    assert!(costs.contains("claude-sonnet-4-5"), "{costs}");

    let services = m.ok(&["services"]).await;
    for name in relay_testkit::BUS_SERVICES {
        assert!(services.contains(name), "{services}");
    }
}

#[tokio::test]
async fn bad_input_exits_non_zero_with_a_message_and_missing_things_exit_3() {
    let m = mesh().await;
    let bad = m.run(&["sessions", "list", "--status", "sideways"]).await;
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("status \"sideways\""));
    let missing = m.run(&["sessions", "show", "no-such-session"]).await;
    assert_eq!(
        missing.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&missing.stderr)
    );
    let unknown = m.run(&["deliveries", "show", "no-such-delivery"]).await;
    assert_eq!(
        unknown.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&unknown.stderr)
    );
    let negative = m.run(&["events", "tail", "--from-seq", "-5"]).await;
    assert_eq!(negative.status.code(), Some(2));
    // Nobody listening: a clear error, not a hang.
    let mut nowhere = m.command(&["sessions", "list"]);
    nowhere.env("RELAY_NATS__URL", "nats://127.0.0.1:1");
    let out = tokio::task::spawn_blocking(move || nowhere.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot connect to NATS"));
}

#[tokio::test]
async fn events_tail_replays_from_a_seq_then_follows_new_events() {
    let m = mesh().await;
    let batch = |from: usize, n: usize| {
        let events: Vec<_> = (from..from + n)
            .map(|i| json!({ "type": "test.tick", "sessionId": "tailed", "payload": { "i": i } }))
            .collect();
        json!({ "events": events })
    };
    let stored = expect_ok(&m.client, "event.append", batch(0, 20)).await;
    let fifth = stored["appended"][4]["seq"].as_i64().unwrap().to_string();

    let replayed = m
        .run(&[
            "events",
            "tail",
            "--session",
            "tailed",
            "--from-seq",
            &fifth,
            "--no-follow",
        ])
        .await;
    let stdout = String::from_utf8_lossy(&replayed.stdout);
    assert_eq!(stdout.lines().count(), 15, "{stdout}");
    assert!(stdout.lines().next().unwrap().contains("{\"i\":5}"), "{stdout}");
    assert!(String::from_utf8_lossy(&replayed.stderr).contains("replayed 15 events; caught up"));

    // Following: the replayed tail, then events appended while it runs, as JSON lines.
    let mut follow = m.command(&[
        "--json",
        "events",
        "tail",
        "--session",
        "tailed",
        "--from-seq",
        &fifth,
        "--count",
        "25",
    ]);
    let child = follow.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    expect_ok(&m.client, "event.append", batch(20, 10)).await;
    let out = tokio::time::timeout(
        Duration::from_secs(20),
        tokio::task::spawn_blocking(move || child.wait_with_output().unwrap()),
    )
    .await
    .expect("tail did not stop after --count events")
    .unwrap();
    let seen: Vec<u64> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["payload"]["i"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(seen, (5..30).collect::<Vec<_>>());
}

#[tokio::test]
async fn consensus_and_actions_from_the_terminal_propose_show_cancel_and_say_what_is_missing() {
    let m = mesh().await;
    let session = expect_ok(&m.client, "session.create", json!({})).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let caps = json!({"messaging": {"receive": true}, "delivery": {"modes": ["immediate"]},
                      "events": {"emits": ["status.changed"]}, "lifecycle": {"release": true}});
    for handle in ["bob", "carol"] {
        let body = json!({"sessionId": session, "agent": {"kind": "adapter", "adapterName": "claude"},
                          "handle": handle, "capabilities": caps});
        expect_ok(&m.client, "session.agent.attach", body).await;
    }
    m.ok(&["channels", "create", "ops"]).await;
    m.ok(&["channels", "join", "ops", "@bob"]).await;
    m.ok(&["channels", "join", "ops", "@carol"]).await;

    let proposed = m
        .ok(&[
            "consensus",
            "propose",
            "#ops",
            "Ship 1.4 today?",
            "ship",
            "wait",
            "--id",
            "p-1",
        ])
        .await;
    assert!(
        proposed.contains("proposal p-1 (open) by key:relayctl to #ops"),
        "{proposed}"
    );
    assert!(proposed.contains("quorum 2 of 2 voters"), "{proposed}");
    let listed = m.ok(&["consensus", "list", "--status", "open"]).await;
    assert!(listed.contains("p-1") && listed.contains("Ship 1.4 today?"), "{listed}");
    let cancelled = m.ok(&["consensus", "cancel", "p-1", "--reason", "later"]).await;
    assert!(cancelled.contains("(cancelled)"), "{cancelled}");
    let shown = m.ok(&["consensus", "show", "p-1"]).await;
    assert!(shown.contains("cancelled by key:relayctl: later"), "{shown}");

    // Nobody exposes anything yet: an empty list, and an invocation that says what is missing.
    let actions = m.ok(&["actions", "list"]).await;
    assert!(actions.contains("ACTION") && !actions.contains("@bob"), "{actions}");
    let out = m
        .run(&["actions", "invoke", "@bob", "deploy", r#"{"env": "prod"}"#])
        .await;
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("deploy of agent @bob"),
        "{out:?}"
    );
    let out = m.run(&["actions", "invoke", "@bob", "deploy", "{not json"]).await;
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("input is not JSON"),
        "{out:?}"
    );
}
