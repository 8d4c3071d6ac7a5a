//! A Postgres failover, as production has it: a primary with a streaming standby, and the mesh
//! reaching them through one address that follows the primary (HAProxy,
//! [`relay_testkit::PrimaryProxy`]). The primary is killed, the standby promoted, and the same
//! event-ingest and gateway carry on through the same address.
//!
//! What an acknowledged write can lose depends on the replication mode, and both are measured:
//! - asynchronous (Postgres's default): whatever the primary committed that the standby had not
//!   received. The test makes that window wide on purpose (the standby is down while events are
//!   appended), so those events are acknowledged, seen on SSE and then gone; what must still hold
//!   is that a client resuming after them is given every event of the new primary.
//! - synchronous (`synchronous_standby_names`, `synchronous_commit = on`): a commit is not
//!   acknowledged until the standby has it, so the failover loses nothing acknowledged.

mod common;

use common::{Gateway, Mesh, SseReader, gateway};
use relay_testkit::{Database, Nats, Postgres, PrimaryProxy, ServiceProcess, wait_for, wait_for_within};
use serde_json::{Value, json};
use std::time::Duration;

/// Fields drop in order: the processes, the database, the proxy, then the servers.
struct Failover {
    gateway: Gateway,
    mesh: Mesh,
    proxy: PrimaryProxy,
    primary: Postgres,
    standby: Postgres,
}

impl Failover {
    /// Event-ingest and the gateway on a database reached through the proxy.
    async fn start(synchronous: bool) -> Failover {
        let primary = Postgres::start().await;
        let standby = Postgres::standby_of(&primary).await;
        primary.set_synchronous(synchronous).await;
        let proxy = PrimaryProxy::start(&[&primary, &standby]).await;
        let db = Database::create_on(&proxy.admin_url).await;
        let nats = Nats::start().await;
        let client = nats.client().await;
        let ingest = ServiceProcess::spawn(&relay_testkit::bin_path("event-ingest"), &nats, &db, &[]);
        relay_testkit::wait_for_instances(&client, "event-ingest", 1).await;
        let mesh = Mesh {
            nats,
            db,
            client,
            _services: vec![ingest],
        };
        let gateway = gateway(&mesh, &[]).await;
        Failover {
            gateway,
            mesh,
            proxy,
            primary,
            standby,
        }
    }

    /// Appends `n` events named `{tag}-{i}` in one request; their seqs, or the error.
    async fn append(&self, tag: &str, n: usize, within: Duration) -> Result<Vec<i64>, String> {
        let events: Vec<Value> = (0..n)
            .map(
                |i| json!({"type": "test.failover", "eventId": format!("{tag}-{i}"), "sessionId": "s1", "payload": {}}),
            )
            .collect();
        let body = serde_json::to_vec(&json!({ "events": events })).unwrap();
        let reply = tokio::time::timeout(within, self.mesh.client.request("event.append", body.into()))
            .await
            .map_err(|_| "timeout".to_string())?
            .map_err(|e| e.to_string())?;
        let r: Value = serde_json::from_slice(&reply.payload).map_err(|e| e.to_string())?;
        r["appended"]
            .as_array()
            .map(|a| a.iter().map(|x| x["seq"].as_i64().unwrap()).collect())
            .ok_or_else(|| r.to_string())
    }

    /// The primary dies; the standby, started again if it was down, is promoted, and the proxy
    /// sends new connections to it. Returns once an append through the mesh is acknowledged.
    async fn fail_over(&mut self, standby_was_down: bool) -> Vec<i64> {
        self.primary.stop().await;
        if standby_was_down {
            self.standby.start_again().await;
        }
        self.standby.promote().await;
        self.proxy.wait_for_primary().await;
        let this = &*self;
        let mut tries = 0;
        wait_for_within(Duration::from_secs(60), || {
            tries += 1;
            let tag = format!("after-{tries}");
            async move { this.append(&tag, 5, Duration::from_secs(3)).await.ok() }
        })
        .await
    }

    /// Event ids in the log, in seq order.
    async fn log_ids(&self) -> Vec<String> {
        let r = relay_testkit::expect_ok(&self.mesh.client, "event.since", json!({"seq": 0, "limit": 1000})).await;
        r["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["eventId"].as_str().unwrap().to_string())
            .collect()
    }

    /// A client that saw up to seq `last_seen` resumes with it as `Last-Event-ID`: it is given
    /// exactly the events the log holds after `anchor` (every one the new primary took), each
    /// with a seq above `last_seen`.
    async fn assert_resumes_with_everything_after(&self, last_seen: i64, anchor: &str) {
        let ids = self.log_ids().await;
        let after: Vec<String> = ids.iter().skip_while(|id| *id != anchor).skip(1).cloned().collect();
        assert!(!after.is_empty(), "{ids:?}");
        let resumed = self.sse_until(Some(last_seen), after.last().unwrap()).await;
        let got: Vec<String> = resumed.iter().map(|(_, id)| id.clone()).collect();
        assert_eq!(got, after, "resumed after seq {last_seen}");
        assert!(resumed.iter().all(|(seq, _)| *seq > last_seen), "{resumed:?}");
    }

    /// Follows `/api/v1/events/sse` from `after` (as `Last-Event-ID`, or the start) until the
    /// event `until` arrives; every (seq, event id) seen.
    async fn sse_until(&self, after: Option<i64>, until: &str) -> Vec<(i64, String)> {
        let path = match after {
            Some(_) => "/api/v1/events/sse".to_string(),
            None => "/api/v1/events/sse?offset=0".to_string(),
        };
        let mut reader = SseReader::new(self.gateway.sse(&path, after).await);
        let mut seen = Vec::new();
        loop {
            let f = reader.next().await;
            let id = f.data["eventId"].as_str().unwrap().to_string();
            let done = id == until;
            seen.push((f.id, id));
            if done {
                return seen;
            }
        }
    }
}

#[tokio::test]
async fn after_an_asynchronous_failover_lost_acknowledged_events_a_resuming_sse_client_still_gets_every_new_one() {
    let mut f = Failover::start(false).await;
    f.append("before", 5, Duration::from_secs(10)).await.unwrap();
    // Replicated, then the standby goes away: what the primary acknowledges now is on the
    // primary alone.
    f.standby.wait_replayed(&f.primary).await;
    f.standby.stop().await;
    let unreplicated = f.append("unreplicated", 5, Duration::from_secs(10)).await.unwrap();
    let seen = f.sse_until(None, "unreplicated-4").await;
    let last_seen = seen.last().unwrap().0;
    assert_eq!(last_seen, *unreplicated.last().unwrap());

    let new = f.fail_over(true).await;
    // Asynchronous replication lost what the standby never received, acknowledged or not.
    let ids = f.log_ids().await;
    let lost = (0..5).filter(|i| !ids.contains(&format!("unreplicated-{i}"))).count();
    println!("asynchronous failover: 5 acknowledged events the standby never had, {lost} lost");
    assert_eq!(lost, 5, "the promoted standby never received them: {ids:?}");
    assert!((0..5).all(|i| ids.contains(&format!("before-{i}"))), "{ids:?}");

    // The new primary's seqs continue past every seq the old one handed out, so a client that
    // resumes after what it saw is given every new event, none skipped.
    assert!(
        new[0] > last_seen,
        "seq {} handed out again (the client saw up to {last_seen})",
        new[0]
    );
    f.assert_resumes_with_everything_after(last_seen, "before-4").await;
}

#[tokio::test]
async fn with_synchronous_commit_a_failover_loses_no_acknowledged_event() {
    let mut f = Failover::start(true).await;
    let before = f.append("before", 5, Duration::from_secs(10)).await.unwrap();
    // With the standby gone, the primary cannot acknowledge: the append waits (and times out).
    f.standby.stop().await;
    let refused = f.append("unreplicated", 5, Duration::from_secs(3)).await;
    assert!(refused.is_err(), "acknowledged without a standby: {refused:?}");
    let seen = f.sse_until(None, "before-4").await;
    assert_eq!(seen.last().unwrap().0, *before.last().unwrap());

    let new = f.fail_over(true).await;
    let ids = f.log_ids().await;
    let lost = (0..5).filter(|i| !ids.contains(&format!("before-{i}"))).count();
    println!("synchronous failover: 5 acknowledged events, {lost} lost");
    assert_eq!(lost, 0, "{ids:?}");
    // The append that was never acknowledged did not reach the standby either.
    assert!(!ids.iter().any(|id| id.starts_with("unreplicated")), "{ids:?}");
    assert!(new[0] > *before.last().unwrap());
    f.assert_resumes_with_everything_after(*before.last().unwrap(), "before-4")
        .await;
    wait_for(|| async { f.gateway.get("/readyz").await.0.is_success().then_some(()) }).await;
}
