//! The cost aggregator over the wire: usage events appended to the real event log, folded by
//! the real aggregator into a fresh database, read back with cost.report.

use relay_testkit::{Cluster, ServiceProcess, wait_for};
use serde_json::{Value, json};
use std::time::Duration;

const AGGREGATOR: &str = "cost-aggregator";
const ROLLUP_AFTER: &str = "RELAY_COSTS__ROLLUP_AFTER_MS";

struct Mesh {
    m: Cluster,
    _services: Vec<ServiceProcess>,
}

/// Aggregator, event log and registry; `extra` services (e.g. the delivery runner) too.
/// The tests' usage is from 2023: it is kept per event (no roll-up) unless `env` says otherwise.
async fn mesh(env: &[(&str, &str)], extra: &[&str]) -> Mesh {
    let mut env = env.to_vec();
    if !env.iter().any(|(k, _)| *k == ROLLUP_AFTER) {
        env.push((ROLLUP_AFTER, "0"));
    }
    let m = Cluster::start(&relay_testkit::bin_path(AGGREGATOR), AGGREGATOR, 1, &env).await;
    let mut names = vec!["event-ingest", "session-registry"];
    names.extend_from_slice(extra);
    let services: Vec<ServiceProcess> = names
        .iter()
        .map(|n| ServiceProcess::spawn(&relay_testkit::bin_path(n), &m.nats, &m.db, &[]))
        .collect();
    for n in names {
        relay_testkit::wait_for_instances(&m.client, n, 1).await;
    }
    Mesh { m, _services: services }
}

fn tokens(session: &str, agent: &str, model: &str, input: i64, output: i64, ts: i64) -> Value {
    json!({"type": "tokens.used", "sessionId": session, "agentId": agent, "ts": ts,
           "payload": {"inputTokens": input, "outputTokens": output, "model": model}})
}

impl Mesh {
    async fn append(&self, events: Vec<Value>) {
        self.m.ok("event.append", json!({ "events": events })).await;
    }

    /// The report once `n` usage events are folded in.
    async fn report_after(&self, n: i64, filter: Value) -> Value {
        wait_for(|| async {
            let all = self.m.ok("cost.report", json!({})).await;
            (all["total"]["events"].as_i64() == Some(n)).then_some(())
        })
        .await;
        self.m.ok("cost.report", filter).await
    }
}

fn usd(v: &Value) -> f64 {
    v["estimatedCostUsd"].as_f64().unwrap()
}

fn cents(x: f64) -> i64 {
    (x * 100.0).round() as i64
}

/// A scripted run across models, agents and sessions, priced by hand from the built-in table
/// (USD per 1M tokens): the report matches to the cent, and each part to a nano-dollar.
#[tokio::test]
async fn costs_for_a_scripted_run_match_a_hand_computed_total_to_the_cent() {
    let h = mesh(&[], &[]).await;
    let t = 1_700_000_000_000;
    h.append(vec![
        // 1,500 × $3 + 800 × $15 = $0.0165
        tokens("s1", "w1", "claude-sonnet-4-5-20250929", 1_500, 800, t),
        // 120,000 × $3 + 4,000 × $15 + 50,000 × $0.30 + 10,000 × $3.75 = $0.4725
        json!({"type": "tokens.used", "sessionId": "s1", "agentId": "w1", "ts": t + 1,
               "payload": {"inputTokens": 120_000, "outputTokens": 4_000, "cacheReadTokens": 50_000,
                           "cacheWriteTokens": 10_000, "model": "claude-sonnet-4-5"}}),
        // 200,000 × $1.25 + 30,000 × $10 = $0.55
        tokens("s2", "w2", "gpt-5", 200_000, 30_000, t + 2),
        // 10,000 × $1.25 + 2,000 × $10 = $0.0325
        tokens("s2", "w2", "gemini-2.5-pro", 10_000, 2_000, t + 3),
        // Seed 000 usage.updated with its own cost: $0.10, 5,000 tokens without a split.
        json!({"type": "usage.updated", "sessionId": "s2", "agentId": "w3", "ts": t + 4,
               "payload": {"tokens": 5_000, "costUsd": 0.10, "metadata": {"model": "custom-model"}}}),
        // No price known: counted, $0.
        tokens("s1", "w3", "llama-local", 1_000, 1_000, t + 5),
        // Not a usage: skipped with a warning, never a crash or a wrong total.
        json!({"type": "tokens.used", "sessionId": "s1", "agentId": "w1", "ts": t + 6,
               "payload": {"inputTokens": -5, "outputTokens": 1}}),
    ])
    .await;
    let r = h.report_after(6, json!({})).await;
    assert_eq!(cents(usd(&r["total"])), 117, "{r:#}");
    assert!((usd(&r["total"]) - 1.1715).abs() < 1e-9, "{r:#}");
    assert!((usd(&r["byAgent"]["w1"]) - 0.489).abs() < 1e-9);
    assert!((usd(&r["byAgent"]["w2"]) - 0.5825).abs() < 1e-9);
    assert!((usd(&r["byAgent"]["w3"]) - 0.10).abs() < 1e-9);
    assert!((usd(&r["bySession"]["s1"]) - 0.489).abs() < 1e-9);
    assert!((usd(&r["bySession"]["s2"]) - 0.6825).abs() < 1e-9);
    assert!((usd(&r["byModel"]["claude-sonnet-4-5"]) - 0.4725).abs() < 1e-9);
    assert_eq!(r["byModel"]["llama-local"]["estimatedCostUsd"], 0.0);
    assert_eq!(r["unpricedModels"], json!(["custom-model", "llama-local"]));
    let total = &r["total"];
    assert_eq!(total["inputTokens"], 1_500 + 120_000 + 200_000 + 10_000 + 1_000);
    assert_eq!(total["outputTokens"], 800 + 4_000 + 30_000 + 2_000 + 1_000);
    assert_eq!(total["cacheReadTokens"], 50_000);
    assert_eq!(total["totalTokens"], 332_500 + 37_800 + 60_000 + 5_000);
    let models = h.m.ok("cost.models", json!({})).await;
    assert_eq!(models["source"], "built-in");
}

#[tokio::test]
async fn report_filters_by_time_agent_session_and_model() {
    let h = mesh(&[], &[]).await;
    let t = 1_700_000_000_000;
    h.append(vec![
        tokens("s1", "a1", "gpt-5", 1_000_000, 0, t),              // $1.25
        tokens("s1", "a2", "gpt-5-mini", 1_000_000, 0, t + 1_000), // $0.25
        tokens("s2", "a1", "gpt-5", 0, 1_000_000, t + 2_000),      // $10
    ])
    .await;
    h.report_after(3, json!({})).await;
    let cost = |filter: Value| {
        let h = &h;
        async move { usd(&h.m.ok("cost.report", filter).await["total"]) }
    };
    assert_eq!(cost(json!({"agent": "a1"})).await, 11.25);
    assert_eq!(cost(json!({"session": "s1"})).await, 1.5);
    assert_eq!(cost(json!({"model": "gpt-5"})).await, 11.25);
    assert_eq!(cost(json!({"since": t + 1_000})).await, 10.25);
    assert_eq!(cost(json!({"until": t + 1_000})).await, 1.25);
    assert_eq!(cost(json!({"since": t + 1, "until": t + 2_000})).await, 0.25);
    assert_eq!(cost(json!({"agent": "a1", "session": "s1"})).await, 1.25);
    assert_eq!(cost(json!({"agent": "nobody"})).await, 0.0);
    let by = h.m.ok("cost.report", json!({"agent": "a1"})).await;
    let sessions: Vec<&String> = by["bySession"].as_object().unwrap().keys().collect();
    assert_eq!(sessions, ["s1", "s2"]);
    // `since <= ts < until` with until before since holds nothing: zero, not an error (any two
    // integers are a range the OpenAPI document can describe).
    assert_eq!(cost(json!({"since": t + 5, "until": t})).await, 0.0);
    h.m.err("cost.report", json!({"since": "yesterday"}), "invalid_request")
        .await;
}

/// The aggregator is killed with SIGKILL twice while usage streams in; afterwards every event
/// is counted exactly once.
#[tokio::test]
async fn aggregator_killed_mid_stream_counts_every_event_exactly_once() {
    let mut h = mesh(&[("RELAY_COSTS__PAGE", "50")], &[]).await;
    const BATCHES: i64 = 100;
    const PER_BATCH: i64 = 40;
    let client = h.m.client.clone();
    let appender = tokio::spawn(async move {
        for b in 0..BATCHES {
            let events: Vec<Value> = (0..PER_BATCH)
                .map(|i| {
                    tokens(
                        "s",
                        &format!("a{}", i % 4),
                        "gpt-5",
                        1_000 + b,
                        10 + i,
                        1_700_000_000_000 + b,
                    )
                })
                .collect();
            relay_testkit::expect_ok(&client, "event.append", json!({ "events": events })).await;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    let mut kills = 0;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while kills < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the fold finished before the second kill ({kills} kills)"
        );
        let folded = h.m.ok("cost.report", json!({})).await["total"]["events"]
            .as_i64()
            .unwrap();
        if folded > 0 && folded < BATCHES * PER_BATCH && folded > kills * 1_000 {
            h.m.replace_first_replica().await;
            kills += 1;
            eprintln!("killed the aggregator (SIGKILL) after {folded} events were folded");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    appender.await.unwrap();
    let n = BATCHES * PER_BATCH;
    let r = h.report_after(n, json!({})).await;
    let input: i64 = (0..BATCHES).map(|b| (1_000 + b) * PER_BATCH).sum();
    let output: i64 = BATCHES * (0..PER_BATCH).map(|i| 10 + i).sum::<i64>();
    println!(
        "appended={n} folded={} kills={kills} inputTokens={} (expected {input})",
        r["total"]["events"], r["total"]["inputTokens"]
    );
    assert_eq!(r["total"]["inputTokens"], input);
    assert_eq!(r["total"]["outputTokens"], output);
    let expected = (input as f64 * 1.25 + output as f64 * 10.0) / 1e6;
    assert!((usd(&r["total"]) - expected).abs() < 1e-9);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        h.m.ok("cost.report", json!({})).await["total"]["events"],
        n,
        "nothing counted twice"
    );
}

#[tokio::test]
async fn context_window_state_is_the_fullest_agent_with_levels() {
    let h = mesh(&[], &[]).await;
    let state = |h: &Mesh| {
        let c = h.m.client.clone();
        async move {
            relay_testkit::expect_ok(&c, "session.getContextWindowState", json!({"sessionId": "s"})).await["state"]
                .clone()
        }
    };
    assert_eq!(state(&h).await, Value::Null);
    let t = 1_700_000_000_000;
    // Context = prompt + reply of each agent's latest call; claude-sonnet-4-5 holds 200k.
    h.append(vec![
        tokens("s", "a1", "claude-sonnet-4-5", 99_000, 1_000, t),
        tokens("s", "a2", "claude-sonnet-4-5", 150_000, 10_000, t + 1),
    ])
    .await;
    h.report_after(2, json!({})).await;
    let s = state(&h).await;
    assert_eq!(
        (s["currentTokens"].as_i64(), s["maxTokens"].as_i64()),
        (Some(160_000), Some(200_000))
    );
    assert_eq!(
        (s["percentage"].as_f64(), s["level"].as_str()),
        (Some(80.0), Some("warn"))
    );
    h.append(vec![tokens("s", "a1", "claude-sonnet-4-5", 183_000, 2_000, t + 2)])
        .await;
    h.report_after(3, json!({})).await;
    let s = state(&h).await;
    assert_eq!(
        (s["percentage"].as_f64(), s["level"].as_str()),
        (Some(92.5), Some("critical"))
    );
    h.append(vec![
        json!({"type": "session.compressed", "sessionId": "s", "payload": {"sessionId": "s", "eventId": "e"}}),
    ])
    .await;
    wait_for(|| async { state(&h).await.is_null().then_some(()) }).await;
    h.append(vec![tokens("s", "a2", "gpt-5", 40_000, 0, t + 3)]).await;
    let s = wait_for(|| async { Some(state(&h).await).filter(|s| !s.is_null()) }).await;
    assert_eq!(
        (s["percentage"].as_f64(), s["level"].as_str()),
        (Some(10.0), Some("ok"))
    );
}

/// A session budget crossed: `budget.exceeded` in the log, the session's agent paused in the
/// delivery runner (a message sent to it stays pending), and session.usage in the registry.
#[tokio::test]
async fn a_budget_crossing_emits_budget_exceeded_and_pauses_deliveries() {
    let config = std::env::temp_dir().join(format!("relay-budget-{}.toml", uuid::Uuid::new_v4().simple()));
    std::fs::write(
        &config,
        "[[costs.budgets]]\nname = \"one-dollar\"\nscope = \"session\"\nlimit_usd = 1.0\npause = true\n\n\
         [[costs.budgets]]\nname = \"ten-per-agent\"\nscope = \"agent\"\nlimit_usd = 10.0\n",
    )
    .unwrap();
    let h = mesh(&[("RELAY_CONFIG", config.to_str().unwrap())], &["delivery-runner"]).await;
    h.m.ok("session.create", json!({"sessionId": "s"})).await;
    let caps = json!({"messaging": {"receive": true}, "delivery": {"modes": ["manual"]}, "events": {"emits": []}, "lifecycle": {"release": false}});
    let attached =
        h.m.ok(
            "session.agent.attach",
            json!({"sessionId": "s", "agent": {"kind": "adapter", "adapterName": "claude"}, "capabilities": caps}),
        )
        .await;
    let agent = attached["agentId"].as_str().unwrap().to_string();
    let t = relay_bus::now_ms();
    // The session's usage is workspace acme's: so is the crossing.
    let tokens = |session: &str, agent: &str, model: &str, input: i64, output: i64, ts: i64| {
        let mut e = tokens(session, agent, model, input, output, ts);
        e["workspace"] = json!("acme");
        e
    };
    // $0.60, then $0.60 more: the second crosses $1.
    h.append(vec![tokens("s", &agent, "gpt-5", 0, 60_000, t)]).await;
    h.report_after(1, json!({})).await;
    let pool = h.m.db.pool().await;
    let paused = || async {
        sqlx::query_scalar::<_, bool>("SELECT paused FROM delivery_agents WHERE agent_id = $1")
            .bind(&agent)
            .fetch_optional(&pool)
            .await
            .unwrap()
            .unwrap_or(false)
    };
    assert!(!paused().await);
    h.append(vec![tokens("s", &agent, "gpt-5", 0, 60_000, t + 1)]).await;
    let exceeded = wait_for(|| async {
        let e = h.m.ok("event.query", json!({"types": ["budget.exceeded"]})).await["events"].clone();
        e.as_array().and_then(|a| a.first().cloned())
    })
    .await;
    assert_eq!(exceeded["payload"]["budget"], "one-dollar");
    assert_eq!(
        exceeded["workspace"], "acme",
        "the event belongs to whom the budget was crossed for"
    );
    assert_eq!(exceeded["payload"]["scope"], "session");
    assert_eq!(exceeded["payload"]["pausedAgents"], json!([agent]));
    assert!((exceeded["payload"]["spentUsd"].as_f64().unwrap() - 1.2).abs() < 1e-9);
    wait_for(|| async { paused().await.then_some(()) }).await;
    // Once only, however much more is spent.
    h.append(vec![tokens("s", &agent, "gpt-5", 0, 60_000, t + 2)]).await;
    h.report_after(3, json!({})).await;
    let all = h.m.ok("event.query", json!({"types": ["budget.exceeded"]})).await;
    assert_eq!(all["events"].as_array().unwrap().len(), 1);
    // session.usage reached the registry with the session's totals.
    let usage: i64 = wait_for(|| async {
        sqlx::query_scalar::<_, i64>("SELECT total_output_tokens FROM registry_usage WHERE session_id = 's'")
            .fetch_optional(&pool)
            .await
            .unwrap()
            .filter(|n| *n == 180_000)
    })
    .await;
    assert_eq!(usage, 180_000);
    // cost.budgets: how close each spender is, and when the session crossed its limit.
    let b = h.m.ok("cost.budgets", json!({})).await;
    let (session, agent_budget) = (&b["budgets"][0], &b["budgets"][1]);
    assert_eq!(
        (session["name"].as_str(), session["pause"].as_bool()),
        (Some("one-dollar"), Some(true)),
        "{b}"
    );
    let spend = &session["spending"][0];
    assert_eq!(spend["key"], "s", "{b}");
    assert_eq!(cents(spend["spentUsd"].as_f64().unwrap()), 180, "{b}");
    assert_eq!(cents(spend["fraction"].as_f64().unwrap()), 180, "{b}");
    assert!(spend["exceededAt"].as_i64().unwrap() >= t, "{b}");
    let spend = &agent_budget["spending"][0];
    assert_eq!(
        (spend["key"].as_str(), spend.get("exceededAt")),
        (Some(agent.as_str()), None),
        "{b}"
    );
    assert_eq!(cents(spend["fraction"].as_f64().unwrap()), 18, "{b}");
    let _ = std::fs::remove_file(config);
}

#[tokio::test]
async fn cost_models_come_from_a_file_and_a_bad_file_stops_the_service() {
    let dir = std::env::temp_dir().join(format!("relay-models-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("cost-models.json");
    std::fs::write(
        &good,
        r#"[{"model": "house-model", "inputPer1M": 2.0, "outputPer1M": 4.0, "contextWindow": 1000}]"#,
    )
    .unwrap();
    let h = mesh(&[("RELAY_COSTS__MODELS_PATH", good.to_str().unwrap())], &[]).await;
    let models = h.m.ok("cost.models", json!({})).await;
    assert_eq!(models["models"].as_array().unwrap().len(), 1);
    assert!(models["source"].as_str().unwrap().ends_with("cost-models.json"));
    h.append(vec![
        tokens("s", "a", "house-model", 500_000, 250_000, 1),
        tokens("s", "a", "gpt-5", 1_000_000, 0, 2),
    ])
    .await;
    let r = h.report_after(2, json!({})).await;
    assert_eq!(usd(&r["total"]), 2.0, "file prices only; gpt-5 is not in the file");
    assert_eq!(r["unpricedModels"], json!(["gpt-5"]));

    let bad = dir.join("bad.json");
    std::fs::write(&bad, r#"{"models": [{"model": "x"}]}"#).unwrap();
    let mut refused = ServiceProcess::spawn(
        &relay_testkit::bin_path(AGGREGATOR),
        &h.m.nats,
        &h.m.db,
        &[("RELAY_COSTS__MODELS_PATH", bad.to_str().unwrap())],
    );
    assert_eq!(
        refused.wait_exit(Duration::from_secs(20)).await,
        Some(false),
        "exits with an error"
    );
}

/// Bounded growth: usage older than `costs.rollup_after_ms` is kept as one row per hour,
/// session, agent and model; reports add up to the same events, tokens and dollars, and a time
/// filter over it counts whole hours. Recent usage stays per event.
#[tokio::test]
async fn old_usage_is_rolled_up_per_hour_and_reports_still_add_up() {
    // 20 s: the 2023 usage goes on the first pass (5 s in), the event of now stays per event
    // for the rest of the test.
    let h = mesh(&[(ROLLUP_AFTER, "20000")], &[]).await;
    let hour = 3_600_000;
    let t = 1_699_999_200_000; // on the hour
    // 30 events 4 minutes apart: 15 in each of two hours, alternating between two agents.
    // Each: 1,000 × $3 + 100 × $15 per 1M tokens = $0.0045.
    let events = (0..30)
        .map(|i| {
            let (s, a) = if i % 2 == 0 { ("s1", "w1") } else { ("s2", "w2") };
            tokens(s, a, "claude-sonnet-4-5", 1_000, 100, t + i * 240_000)
        })
        .collect();
    h.append(events).await;
    let now = relay_bus::now_ms();
    h.append(vec![tokens("s1", "w1", "claude-sonnet-4-5", 1_000, 100, now)])
        .await;
    let pool = h.m.db.pool().await;
    relay_testkit::wait_for(|| async {
        let (rows, rolled): (i64, i64) =
            sqlx::query_as("SELECT count(*), count(*) FILTER (WHERE rolled_up) FROM cost_usage")
                .fetch_one(&pool)
                .await
                .unwrap();
        // Two hours × two agents, and the recent event on its own.
        (rows == 5 && rolled == 4).then_some(())
    })
    .await;
    let all = h.m.ok("cost.report", json!({})).await;
    assert_eq!(all["total"]["events"], 31, "{all}");
    assert_eq!(all["total"]["inputTokens"], 31_000);
    assert_eq!(all["total"]["outputTokens"], 3_100);
    assert_eq!((usd(&all["total"]) * 1e6).round(), 139_500.0, "31 × $0.0045: {all}");
    assert_eq!(all["bySession"]["s2"]["events"], 15);
    let second_hour =
        h.m.ok("cost.report", json!({"since": t + hour, "until": t + 2 * hour}))
            .await;
    assert_eq!(second_hour["total"]["events"], 15, "{second_hour}");
    // Mid-hour bounds take whole rolled-up hours: the first hour's row is at its start.
    let from_mid =
        h.m.ok("cost.report", json!({"since": t + hour / 2, "until": t + 2 * hour}))
            .await;
    assert_eq!(from_mid["total"]["events"], 15, "{from_mid}");
    let recent = h.m.ok("cost.report", json!({"since": now})).await;
    assert_eq!(recent["total"]["events"], 1, "{recent}");
}
