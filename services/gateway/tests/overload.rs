//! Overload: requests started at ten times the rate it serves (the driver, on the same two cores,
//! reaches four to five times), the gateway sheds instead of queueing. Every
//! request is answered 201 or 503 with Retry-After (no timeout, no other error, no dropped
//! connection), every session it acknowledged exists, memory stays bounded, no process dies,
//! and once the load drops it serves every request again.

mod common;

use common::Gateway;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// `gateway.max_in_flight` here: small, so a debug build on two cores reaches it.
const LIMIT: usize = 16;
/// Requests the test itself keeps open at most (beyond it the driver, not the mesh, would be
/// the bottleneck); what it could not send is not counted as offered.
const DRIVER_CAP: usize = 1024;

#[derive(Default)]
struct Tally {
    created: Vec<String>,
    shed: usize,
    shed_without_retry_after: usize,
    /// Anything else: status and body, or the transport error.
    other: Vec<String>,
}

async fn create_session(g: &Gateway, tally: &Mutex<Tally>) {
    let sent = g
        .req(reqwest::Method::POST, "/api/v1/sessions")
        .json(&json!({}))
        .send()
        .await;
    let resp = match sent {
        Ok(r) => r,
        Err(e) => {
            tally.lock().unwrap().other.push(format!("transport: {e}"));
            return;
        }
    };
    let status = resp.status();
    let retry_after = resp.headers().get("retry-after").is_some();
    let body: Value = resp.json().await.unwrap_or(Value::Null);
    let mut t = tally.lock().unwrap();
    match status {
        StatusCode::CREATED => t
            .created
            .push(body["sessionId"].as_str().unwrap_or_default().to_string()),
        StatusCode::SERVICE_UNAVAILABLE if body["error"]["code"] == "unavailable" => {
            t.shed += 1;
            if !retry_after {
                t.shed_without_retry_after += 1;
            }
        }
        _ => t.other.push(format!("{status}: {body}")),
    }
}

/// `callers` callers, each sending its next request when the last is answered, for `secs`.
async fn closed_loop(g: &Arc<Gateway>, callers: usize, secs: f64) -> Tally {
    let tally = Arc::new(Mutex::new(Tally::default()));
    let until = Instant::now() + Duration::from_secs_f64(secs);
    let tasks: Vec<_> = (0..callers)
        .map(|_| {
            let (g, tally) = (g.clone(), tally.clone());
            tokio::spawn(async move {
                while Instant::now() < until {
                    create_session(&g, &tally).await;
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    Arc::try_unwrap(tally).ok().unwrap().into_inner().unwrap()
}

/// Requests started at `rate` per second whatever the answers, for `secs`; the rate reached.
async fn open_loop(g: &Arc<Gateway>, rate: f64, secs: f64) -> (Tally, f64) {
    let tally = Arc::new(Mutex::new(Tally::default()));
    let open = Arc::new(tokio::sync::Semaphore::new(DRIVER_CAP));
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let start = Instant::now();
    let mut tasks = Vec::new();
    while start.elapsed().as_secs_f64() < secs {
        tick.tick().await;
        let Ok(permit) = open.clone().try_acquire_owned() else {
            continue;
        };
        let (g, tally) = (g.clone(), tally.clone());
        tasks.push(tokio::spawn(async move {
            create_session(&g, &tally).await;
            drop(permit);
        }));
    }
    let offered = tasks.len() as f64 / start.elapsed().as_secs_f64();
    for t in tasks {
        t.await.unwrap();
    }
    (Arc::try_unwrap(tally).ok().unwrap().into_inner().unwrap(), offered)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn driven_far_past_its_capacity_the_gateway_sheds_with_503_loses_nothing_and_recovers() {
    let m = common::mesh().await;
    let limit = LIMIT.to_string();
    let g = Arc::new(common::gateway(&m, &[("RELAY_GATEWAY__MAX_IN_FLIGHT", &limit)]).await);
    let gateway_pid = g._process.pid();

    // What it serves: as many callers as it handles at once, each waiting for its answer.
    let warm = closed_loop(&g, LIMIT, 3.0).await;
    assert!(
        warm.other.is_empty() && warm.shed == 0,
        "at its limit: {:?}",
        warm.other
    );
    let capacity = warm.created.len() as f64 / 3.0;
    let rss_before = relay_testkit::rss_kib(gateway_pid);

    // Ten times that, started whatever the answers, while the gateway's memory is watched.
    let peak = Arc::new(Mutex::new(rss_before));
    let watching = {
        let peak = peak.clone();
        tokio::spawn(async move {
            loop {
                let now = relay_testkit::rss_kib(gateway_pid);
                {
                    let mut p = peak.lock().unwrap();
                    *p = (*p).max(now);
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    };
    let (over, offered) = open_loop(&g, 10.0 * capacity, 5.0).await;
    watching.abort();
    let peak = *peak.lock().unwrap();
    println!(
        "capacity {capacity:.0} sessions/s; offered {offered:.0}/s for 5 s: {} created, {} shed (503); gateway RSS {} KiB before, {} KiB peak",
        over.created.len(),
        over.shed,
        rss_before,
        peak
    );
    assert!(
        over.shed > 0,
        "ten times its capacity was never refused: not overloaded"
    );
    assert_eq!(over.shed_without_retry_after, 0, "every 503 says when to come back");
    assert!(
        over.other.is_empty(),
        "only 201 or 503: {:?}",
        &over.other[..over.other.len().min(5)]
    );
    // Bounded: what it holds does not grow with the requests it refuses.
    assert!(
        peak < rss_before + 64 * 1024,
        "gateway RSS grew from {rss_before} to {peak} KiB"
    );

    // Nothing it acknowledged was lost.
    let acked: Vec<String> = warm.created.into_iter().chain(over.created).collect();
    let missing = futures::future::join_all(acked.chunks(acked.len().div_ceil(LIMIT)).map(|ids| {
        let g = g.clone();
        async move {
            let mut missing = Vec::new();
            for id in ids {
                let (status, _) = g.get(&format!("/api/v1/sessions/{id}")).await;
                if status != StatusCode::OK {
                    missing.push(format!("{id}: {status}"));
                }
            }
            missing
        }
    }))
    .await
    .concat();
    assert!(
        missing.is_empty(),
        "{} of {} acknowledged sessions are gone: {:?}",
        missing.len(),
        acked.len(),
        &missing[..missing.len().min(5)]
    );

    // No process died, and with the load back under the limit every request is served.
    for s in relay_testkit::BUS_SERVICES {
        relay_testkit::wait_for_instances(&m.client, s, 1).await;
    }
    let after = closed_loop(&g, LIMIT / 2, 2.0).await;
    assert!(
        after.shed == 0 && after.other.is_empty() && !after.created.is_empty(),
        "after the overload: {} created, {} shed, {:?}",
        after.created.len(),
        after.shed,
        after.other
    );
    assert!(g.metric("relay_gateway_shed_total").await >= over.shed as f64);
}
