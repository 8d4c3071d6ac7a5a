//! Schedules over the real mesh (auth on): messages sent to a session on a cron expression by
//! two automation replicas, at a time, and after the service was down.

use relay_testkit::{BUS_SERVICES, Database, Nats, ServiceProcess, expect_err, expect_ok, wait_for};
use serde_json::{Value, json};
use std::collections::HashSet;

struct World {
    nats: Nats,
    db: Database,
    client: async_nats::Client,
    _services: Vec<ServiceProcess>,
    automation: Vec<ServiceProcess>,
}

fn automation(nats: &Nats, db: &Database) -> ServiceProcess {
    ServiceProcess::spawn(&relay_testkit::bin_path("automation"), nats, db, &[])
}

async fn world(replicas: usize) -> World {
    let nats = Nats::start().await;
    let db = Database::create().await;
    let client = nats.client().await;
    let services = BUS_SERVICES
        .iter()
        .map(|s| ServiceProcess::spawn(&relay_testkit::bin_path(s), &nats, &db, &[]))
        .collect();
    for s in BUS_SERVICES {
        relay_testkit::wait_for_instances(&client, s, 1).await;
    }
    let automation = (0..replicas).map(|_| automation(&nats, &db)).collect();
    relay_testkit::wait_for_instances(&client, "automation", replicas).await;
    World {
        nats,
        db,
        client,
        _services: services,
        automation,
    }
}

impl World {
    /// A session with an agent (no harness: its deliveries wait, its messages are kept).
    async fn new_session(&self) -> String {
        let r = expect_ok(&self.client, "session.create", json!({})).await;
        let id = r["sessionId"].as_str().unwrap().to_string();
        let agent = json!({"sessionId": id, "agent": {"kind": "persona", "personaId": "p-1"}});
        expect_ok(&self.client, "session.agent.attach", agent).await;
        id
    }

    async fn messages(&self, session: &str) -> Vec<Value> {
        let r = expect_ok(
            &self.client,
            "session.messages",
            json!({"sessionId": session, "limit": 5000}),
        )
        .await;
        r["messages"].as_array().unwrap().clone()
    }

    async fn runs(&self, schedule: &str) -> Vec<Value> {
        let r = expect_ok(
            &self.client,
            "schedule.runs",
            json!({"scheduleId": schedule, "limit": 500}),
        )
        .await;
        r["runs"].as_array().unwrap().clone()
    }

    async fn every_second(&self, session: &str) -> String {
        let s = expect_ok(
            &self.client,
            "schedule.create",
            json!({"cron": "* * * * * *", "action": {"kind": "sendMessage", "sessionId": session, "text": "tick"}}),
        )
        .await;
        assert_eq!(s["status"], "active", "{s}");
        s["scheduleId"].as_str().unwrap().to_string()
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

#[tokio::test]
async fn a_cron_schedule_under_two_replicas_fires_once_each_time() {
    let w = world(2).await;
    let session = w.new_session().await;
    let id = w.every_second(&session).await;
    wait_for(|| async { (w.runs(&id).await.len() >= 5).then_some(()) }).await;
    let paused = expect_ok(&w.client, "schedule.pause", json!({"scheduleId": id})).await;
    assert_eq!(paused["status"], "paused");
    let runs = w.runs(&id).await;
    assert!(runs.iter().all(|r| r["ok"] == true), "{runs:?}");
    let due: Vec<i64> = runs.iter().map(|r| r["dueAt"].as_i64().unwrap()).collect();
    assert!(
        due.iter().all(|d| d % 1000 == 0),
        "each run is due on a second: {due:?}"
    );

    // Each run sent one message, under an id of its own; none twice.
    let messages: Vec<Value> = w
        .messages(&session)
        .await
        .into_iter()
        .filter(|m| m["messageId"].as_str().unwrap().starts_with(&id))
        .collect();
    let ids: HashSet<&str> = messages.iter().map(|m| m["messageId"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), messages.len(), "no message twice: {messages:?}");
    assert_eq!(messages.len(), runs.len(), "one message per run: {messages:?} {runs:?}");
    let fired = wait_for(|| async {
        let e = expect_ok(
            &w.client,
            "event.query",
            json!({"types": ["schedule.fired"], "limit": 1000}),
        )
        .await;
        let e = e["events"].as_array().unwrap().clone();
        (e.len() >= runs.len()).then_some(e)
    })
    .await;
    assert_eq!(fired.len(), runs.len(), "one schedule.fired per run");

    // Paused, it stays quiet.
    let s = expect_ok(&w.client, "schedule.get", json!({"scheduleId": id})).await;
    assert_eq!(s["runs"].as_i64().unwrap() as usize, runs.len());
    assert!(s["nextRunAt"].is_null(), "{s}");
}

#[tokio::test]
async fn a_one_time_schedule_sends_its_message_at_its_time_and_is_done() {
    let w = world(1).await;
    let session = w.new_session().await;
    let at = now_ms() + 1500;
    let s = expect_ok(
        &w.client,
        "schedule.create",
        json!({"at": at, "action": {"kind": "sendMessage", "sessionId": session, "text": "later"}}),
    )
    .await;
    let id = s["scheduleId"].as_str().unwrap().to_string();
    assert_eq!(s["nextRunAt"], at, "{s}");
    let done = wait_for(|| async {
        let s = expect_ok(&w.client, "schedule.get", json!({"scheduleId": id})).await;
        (s["status"] == "done").then_some(s)
    })
    .await;
    assert_eq!(done["runs"], 1);
    assert_eq!(done["lastRun"]["ok"], true, "{done}");
    let messages = w.messages(&session).await;
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0]["timestamp"].as_i64().unwrap() >= at,
        "held until its time: {messages:?}"
    );
    // A done schedule cannot be resumed.
    expect_err(&w.client, "schedule.resume", json!({"scheduleId": id}), "conflict").await;
}

#[tokio::test]
async fn a_message_sent_with_deliver_at_is_held_then_sent_under_the_id_it_was_promised() {
    let w = world(1).await;
    let session = w.new_session().await;
    let at = now_ms() + 1500;
    let sent = expect_ok(
        &w.client,
        "session.sendMessage",
        json!({"sessionId": session, "message": "held for later", "deliverAt": at}),
    )
    .await;
    let schedule = sent["scheduleId"].as_str().unwrap().to_string();
    let promised = sent["messageId"].as_str().unwrap().to_string();
    assert_eq!(sent["turnId"], "", "no turn until it is sent: {sent}");
    assert!(
        w.messages(&session).await.is_empty(),
        "held, not stored in the session yet"
    );
    let s = expect_ok(&w.client, "schedule.get", json!({"scheduleId": schedule})).await;
    assert_eq!(s["at"], at, "{s}");

    let message = wait_for(|| async {
        w.messages(&session)
            .await
            .into_iter()
            .find(|m| m["messageId"] == promised.as_str())
    })
    .await;
    assert_eq!(message["contentText"], "held for later");
    assert!(message["timestamp"].as_i64().unwrap() >= at, "{message}");
    // Only plain text to the session's agents can wait.
    expect_err(
        &w.client,
        "session.sendMessage",
        json!({"sessionId": session, "message": {"blocks": [{"type": "text", "text": "x"}]}, "deliverAt": at}),
        "invalid_request",
    )
    .await;
    expect_err(
        &w.client,
        "session.sendMessage",
        json!({"sessionId": "nope", "message": "x", "deliverAt": at}),
        "not_found",
    )
    .await;
}

#[tokio::test]
async fn a_schedule_sends_a_relay_message_to_an_agent_by_handle() {
    let w = world(1).await;
    let r = expect_ok(&w.client, "session.create", json!({})).await;
    let session = r["sessionId"].as_str().unwrap();
    let agent = json!({"sessionId": session, "agent": {"kind": "persona", "personaId": "p-1"}, "handle": "bob"});
    expect_ok(&w.client, "session.agent.attach", agent).await;
    let s = expect_ok(
        &w.client,
        "schedule.create",
        json!({"at": now_ms(), "action": {"kind": "message", "to": "@bob", "text": "standup in 5"}}),
    )
    .await;
    let id = s["scheduleId"].as_str().unwrap().to_string();
    let done = wait_for(|| async {
        let s = expect_ok(&w.client, "schedule.get", json!({"scheduleId": id})).await;
        (s["status"] == "done").then_some(s)
    })
    .await;
    assert_eq!(done["lastRun"]["ok"], true, "{done}");
    let message_id = done["lastRun"]["result"]["messageId"].as_str().unwrap();
    let m = expect_ok(&w.client, "message.get", json!({"messageId": message_id})).await;
    assert_eq!(m["text"], "standup in 5", "{m}");
}

#[tokio::test]
async fn runs_missed_while_the_service_was_down_are_made_up_once() {
    let mut w = world(1).await;
    let session = w.new_session().await;
    let id = w.every_second(&session).await;
    wait_for(|| async { (!w.runs(&id).await.is_empty()).then_some(()) }).await;
    w.automation[0].kill9().await;
    let killed = now_ms();
    relay_testkit::wait_until_unserved(&w.client, "schedule.runs").await;
    // Down for at least three of its times (a run fired before the kill was due before it).
    wait_for(|| async { (now_ms() > killed + 3500).then_some(()) }).await;
    let restarted = now_ms();
    w.automation.push(automation(&w.nats, &w.db));
    relay_testkit::wait_for_instances(&w.client, "automation", 1).await;
    wait_for(|| async {
        let runs = w.runs(&id).await;
        runs.iter()
            .any(|r| r["dueAt"].as_i64().unwrap() > restarted + 1000)
            .then_some(())
    })
    .await;
    expect_ok(&w.client, "schedule.pause", json!({"scheduleId": id})).await;
    let runs = w.runs(&id).await;
    let missed: Vec<&Value> = runs
        .iter()
        .filter(|r| {
            let due = r["dueAt"].as_i64().unwrap();
            due > killed && due < restarted
        })
        .collect();
    assert_eq!(missed.len(), 1, "the missed times fire once: {runs:?}");
    assert!(missed[0]["firedAt"].as_i64().unwrap() >= restarted);
}

/// A run retried because the registry is down is finished when the registry is back, although
/// its schedule was paused meanwhile: its call may already have reached the mesh, so it is
/// recorded, once, and its message is there once.
#[tokio::test]
async fn a_run_being_retried_when_its_schedule_is_paused_is_finished_and_recorded() {
    let mut w = world(1).await;
    let session = w.new_session().await;
    let id = w.every_second(&session).await;
    wait_for(|| async { (!w.runs(&id).await.is_empty()).then_some(()) }).await;
    w._services[0].kill9().await;
    relay_testkit::wait_until_unserved(&w.client, "session.get").await;
    let log = w.automation[0].log.clone();
    wait_for(|| async {
        let text = std::fs::read_to_string(&log).ok()?;
        text.contains("trying again").then_some(())
    })
    .await;
    expect_ok(&w.client, "schedule.pause", json!({"scheduleId": id})).await;
    let paused = now_ms();
    w._services.push(ServiceProcess::spawn(
        &relay_testkit::bin_path("session-registry"),
        &w.nats,
        &w.db,
        &[],
    ));
    relay_testkit::wait_for_instances(&w.client, "session-registry", 1).await;
    let runs = wait_for(|| async {
        let runs = w.runs(&id).await;
        runs.iter()
            .any(|r| r["firedAt"].as_i64().unwrap() > paused)
            .then_some(runs)
    })
    .await;
    let after: Vec<&Value> = runs
        .iter()
        .filter(|r| r["firedAt"].as_i64().unwrap() > paused)
        .collect();
    assert_eq!(after.len(), 1, "only the run being retried: {runs:?}");
    assert_eq!(after[0]["ok"], true, "{runs:?}");
    let sent: Vec<String> = w
        .messages(&session)
        .await
        .iter()
        .map(|m| m["messageId"].as_str().unwrap().to_string())
        .collect();
    let recorded: Vec<String> = runs.iter().map(|r| format!("{id}-{}", r["dueAt"])).collect();
    let mut sorted = sent.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), sent.len(), "a message twice: {sent:?}");
    for m in &sent {
        assert!(recorded.contains(m), "message {m} has no recorded run: {runs:?}");
    }
}

#[tokio::test]
async fn bad_schedules_are_refused_with_the_reason() {
    let w = world(1).await;
    let action = json!({"kind": "sendMessage", "sessionId": "s", "text": "x"});
    for (body, says) in [
        (json!({"cron": "61 * * * *", "action": action}), "cron"),
        (
            json!({"cron": "* * * * *", "timeZone": "Mars/Olympus", "action": action}),
            "timeZone",
        ),
        (json!({"cron": "* * * * *", "at": 1, "action": action}), "exactly one"),
        (json!({"action": action}), "exactly one"),
        (
            json!({"at": 1, "action": {"kind": "spawn", "cli": "Bad Name", "task": "t"}}),
            "cli",
        ),
        (
            json!({"at": 1, "action": {"kind": "sendMessage", "sessionId": "s", "text": " "}}),
            "text",
        ),
    ] {
        let e = expect_err(&w.client, "schedule.create", body.clone(), "invalid_request").await;
        assert!(e.error.message.contains(says), "{body}: {e:?}");
    }
    expect_err(&w.client, "schedule.get", json!({"scheduleId": "nope"}), "not_found").await;
}

/// Bounded growth: a schedule's runs leave its history once `schedules.keep_runs_ms` has
/// passed, but its latest run stays (schedule.get shows it) and its run count keeps counting.
#[tokio::test]
async fn old_schedule_runs_leave_the_history_and_the_latest_stays() {
    let nats = Nats::start().await;
    let db = Database::create().await;
    let client = nats.client().await;
    let services: Vec<ServiceProcess> = BUS_SERVICES
        .iter()
        .map(|s| ServiceProcess::spawn(&relay_testkit::bin_path(s), &nats, &db, &[]))
        .collect();
    for s in BUS_SERVICES {
        relay_testkit::wait_for_instances(&client, s, 1).await;
    }
    let env = [("RELAY_SCHEDULES__KEEP_RUNS_MS", "1500")];
    let automation = ServiceProcess::spawn(&relay_testkit::bin_path("automation"), &nats, &db, &env);
    relay_testkit::wait_for_instances(&client, "automation", 1).await;
    let w = World {
        nats,
        db,
        client,
        _services: services,
        automation: vec![automation],
    };
    let session = w.new_session().await;
    let id = w.every_second(&session).await;
    // Runs pile up past the window, yet the history stays short.
    let s = wait_for(|| async {
        let s = expect_ok(&w.client, "schedule.get", json!({"scheduleId": id})).await;
        (s["runs"].as_i64().unwrap() >= 8).then_some(s)
    })
    .await;
    expect_ok(&w.client, "schedule.pause", json!({"scheduleId": id})).await;
    let kept = wait_for(|| async {
        let runs = w.runs(&id).await;
        (runs.len() == 1).then_some(runs)
    })
    .await;
    let s2 = expect_ok(&w.client, "schedule.get", json!({"scheduleId": id})).await;
    assert!(
        s2["runs"].as_i64().unwrap() >= s["runs"].as_i64().unwrap(),
        "the count does not shrink"
    );
    assert_eq!(kept[0]["dueAt"], s2["lastRun"]["dueAt"], "the latest run stays: {s2}");
}

/// A call as the gateway makes it for operator key `key_id` of `workspace`.
async fn as_key(w: &World, key_id: &str, workspace: &str, subject: &str, body: Value) -> Value {
    relay_testkit::call_as_key(&w.nats, &format!("operator:{key_id}"), workspace, subject, body).await
}

/// A schedule acts as the key that made it: it may name only sessions that key can see (another
/// workspace's answers as an unknown one), and once the key is revoked it stops — its next run
/// fails `unauthorized`, nothing is sent, and it is paused.
#[tokio::test]
async fn a_schedule_names_only_its_creators_sessions_and_stops_when_its_key_is_revoked() {
    let w = world(1).await;
    expect_ok(&w.client, "workspace.create", json!({"name": "acme"})).await;
    let made = expect_ok(
        &w.client,
        "key.create",
        json!({"name": "ops", "role": "operator", "workspace": "acme"}),
    )
    .await;
    let key_id = made["key"]["keyId"].as_str().unwrap().to_string();
    let theirs = w.new_session().await; // workspace default's
    let every_second = |session: &str| json!({"cron": "* * * * * *", "action": {"kind": "sendMessage", "sessionId": session, "text": "tick"}});
    for session in [theirs.as_str(), "no-such-session"] {
        let refused = as_key(&w, &key_id, "acme", "schedule.create", every_second(session)).await;
        assert_eq!(refused["error"]["code"], "not_found", "{session}: {refused}");
    }

    let ours = as_key(&w, &key_id, "acme", "session.create", json!({})).await;
    let ours = ours["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("{ours}"))
        .to_string();
    let agent = json!({"sessionId": ours, "agent": {"kind": "persona", "personaId": "p-1"}});
    expect_ok(&w.client, "session.agent.attach", agent).await;
    let s = as_key(&w, &key_id, "acme", "schedule.create", every_second(&ours)).await;
    let id = s["scheduleId"].as_str().unwrap_or_else(|| panic!("{s}")).to_string();
    // It runs while the key stands...
    wait_for(|| async { (!w.messages(&ours).await.is_empty()).then_some(()) }).await;
    // ...and stops once it is revoked.
    expect_ok(&w.client, "key.revoke", json!({"keyId": key_id})).await;
    let get = || as_key(&w, "an-admin", "acme", "schedule.get", json!({"scheduleId": id}));
    let runs = || async {
        let r = as_key(&w, "an-admin", "acme", "schedule.runs", json!({"scheduleId": id})).await;
        r["runs"].as_array().unwrap_or_else(|| panic!("{r}")).len()
    };
    let paused = wait_for(|| async {
        let s = get().await;
        (s["status"] == "paused").then_some(s)
    })
    .await;
    assert_eq!(paused["lastRun"]["ok"], false, "{paused}");
    assert!(
        paused["lastRun"]["result"].to_string().contains("unauthorized"),
        "{paused}"
    );
    let sent = w.messages(&ours).await.len();
    let ran = runs().await;
    // Resumed, it fires as the revoked key again: refused again, nothing more sent.
    let resumed = as_key(&w, "an-admin", "acme", "schedule.resume", json!({"scheduleId": id})).await;
    assert_eq!(resumed["status"], "active", "{resumed}");
    wait_for(|| async { (get().await["status"] == "paused" && runs().await > ran).then_some(()) }).await;
    assert_eq!(w.messages(&ours).await.len(), sent);
}
