//! `make bench`: placing agents across hosts. Three release-built agent-spawners (hosts h1, h2,
//! h3; h3 labelled gpu=a100), with session-registry, event-ingest and a delivery-runner, on a
//! private nats-server and a fresh database. Prints a table and writes
//! bench/results/placement.json.
//!
//! - `host.place` alone: the registry's decision (one transaction over the hosts), 500 calls;
//! - `agent.spawn` of the fake agent, 30 each way, one after another: with no placement (the
//!   least-loaded host; a spawner hands most of them to another host), and with a label only
//!   h3 has; from the request to the reply (the agent attached);
//! - baseline in the same run: a raw NATS request to an echo responder on the same server.

use futures::StreamExt;
use relay_testkit::{Database, Nats, ServiceProcess, percentile};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::Instant;

const SPAWNER: &str = env!("CARGO_BIN_EXE_agent-spawner");
const FAKE: &str = env!("CARGO_BIN_EXE_fake-agent");
const SPAWNS: usize = 30;
const PLACES: usize = 500;

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

fn summary(mut us: Vec<u64>) -> Value {
    us.sort_unstable();
    json!({ "n": us.len(), "p50Ms": ms(percentile(&us, 0.50)), "p99Ms": ms(percentile(&us, 0.99)), "maxMs": ms(*us.last().unwrap_or(&0)) })
}

async fn timed(client: &async_nats::Client, subject: &str, body: Value) -> (u64, Value) {
    let started = Instant::now();
    let reply = relay_testkit::call_json(client, subject, body)
        .await
        .unwrap_or_else(|e| panic!("{subject}: {e}"));
    (started.elapsed().as_micros() as u64, reply)
}

/// Waits until every host reports no load (its heartbeat replaced what placement counted, and
/// stopped agents' harnesses are gone).
async fn idle(client: &async_nats::Client) {
    relay_testkit::wait_for(|| async {
        let list = relay_testkit::call_json(client, "host.list", json!({})).await.ok()?;
        list["hosts"].as_array()?.iter().all(|h| h["load"] == 0).then_some(())
    })
    .await
}

#[tokio::main]
async fn main() {
    let nats = Nats::start().await;
    let db = Database::create().await;
    let client = nats.client().await;
    let mut services = Vec::new();
    for name in ["session-registry", "event-ingest", "delivery-runner"] {
        services.push(ServiceProcess::spawn(&relay_testkit::bin_path(name), &nats, &db, &[]));
        relay_testkit::wait_for_instances(&client, name, 1).await;
    }
    let mut configs = Vec::new();
    for (host, labels) in [("h1", ""), ("h2", ""), ("h3", "gpu = \"a100\"")] {
        let toml = format!(
            "[spawner]\nhost_id = \"{host}\"\nmax_agents = 1000\nheartbeat_ms = 500\n\n[spawner.labels]\n{labels}\n\n\
             [spawner.commands]\nfake = [{FAKE:?}, \"--style\", \"generic\"]\n"
        );
        let config = std::env::temp_dir().join(format!("bench-spawner-{host}-{}.toml", uuid::Uuid::new_v4().simple()));
        std::fs::write(&config, toml).unwrap();
        services.push(ServiceProcess::spawn(
            SPAWNER,
            &nats,
            &db,
            &[("RELAY_CONFIG", config.to_str().unwrap()), ("RELAY_LOG", "warn")],
        ));
        configs.push(config);
    }
    relay_testkit::wait_for_instances(&client, "agent-spawner", 3).await;

    // Baseline: a raw request to an echo responder.
    let echo = client.subscribe("bench.echo").await.unwrap();
    let responder = client.clone();
    tokio::spawn(async move {
        let mut echo = echo;
        while let Some(m) = echo.next().await {
            if let Some(reply) = m.reply {
                let _ = responder.publish(reply, m.payload).await;
            }
        }
    });
    let mut raw = Vec::new();
    for _ in 0..PLACES {
        let started = Instant::now();
        client.request("bench.echo", "x".into()).await.unwrap();
        raw.push(started.elapsed().as_micros() as u64);
    }

    // The decision alone (each call counts one spawn against the host it picks; the hosts'
    // heartbeats put the loads back).
    let mut place = Vec::new();
    for _ in 0..PLACES {
        place.push(timed(&client, "host.place", json!({"cli": "fake"})).await.0);
    }
    idle(&client).await;

    let session = relay_testkit::call_json(&client, "session.create", json!({}))
        .await
        .unwrap();
    let session = session["sessionId"].as_str().unwrap().to_string();
    let mut cases = BTreeMap::new();
    for (name, placement) in [
        ("any host", json!(null)),
        ("label gpu=a100", json!({"labels": {"gpu": "a100"}})),
    ] {
        let (mut us, mut hosts, mut agents) = (Vec::new(), BTreeMap::<String, usize>::new(), Vec::new());
        for _ in 0..SPAWNS {
            let body = json!({"sessionId": session, "cli": "fake", "placement": placement});
            let (t, spawned) = timed(&client, "agent.spawn", body).await;
            us.push(t);
            *hosts
                .entry(spawned["hostId"].as_str().unwrap().to_string())
                .or_default() += 1;
            agents.push(spawned["agentId"].as_str().unwrap().to_string());
        }
        for agent in &agents {
            relay_testkit::call_json(&client, "agent.stop", json!({"agentId": agent}))
                .await
                .unwrap();
        }
        let mut row = summary(us);
        row["hosts"] = json!(hosts);
        cases.insert(name, row);
        idle(&client).await;
    }

    let doc = json!({
        "hosts": 3,
        "rawNatsRequest": summary(raw),
        "hostPlace": summary(place),
        "agentSpawn": cases,
        "note": "agent.spawn includes starting the harness and the fake agent and its attach; the spawner that takes a request hands it to the placed host on agent.spawnOn.<host> when that is another",
    });
    println!("placement across 3 hosts ({SPAWNS} spawns per case, {PLACES} host.place calls)");
    println!("| measured | p50 | p99 | max | agents per host |");
    println!("| --- | ---: | ---: | ---: | --- |");
    let line = |name: &str, v: &Value| {
        println!(
            "| {name} | {:.2} ms | {:.2} ms | {:.2} ms | {} |",
            v["p50Ms"].as_f64().unwrap_or_default(),
            v["p99Ms"].as_f64().unwrap_or_default(),
            v["maxMs"].as_f64().unwrap_or_default(),
            v.get("hosts").map(std::string::ToString::to_string).unwrap_or_default()
        )
    };
    line("raw NATS request (baseline)", &doc["rawNatsRequest"]);
    line("host.place (the decision)", &doc["hostPlace"]);
    for (name, v) in doc["agentSpawn"].as_object().unwrap() {
        line(&format!("agent.spawn, {name}"), v);
    }
    relay_testkit::write_bench_results("placement", &doc);
    drop(services);
    for c in configs {
        let _ = std::fs::remove_file(c);
    }
}
