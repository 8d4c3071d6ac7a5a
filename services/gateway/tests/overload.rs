//! Overload: requests started at ten times the rate it serves, the gateway sheds instead of
//! queueing. Every
//! request is answered 201 or 503 with Retry-After (no timeout, no other error, no dropped
//! connection), every session it acknowledged exists, memory stays bounded, no process dies,
//! and once the load drops it serves every request again.

mod common;

use common::Gateway;
use reqwest::StatusCode;
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

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

/// `POST /api/v1/sessions` over kept-alive connections, written and read by hand: the driver
/// shares the two cores with the mesh, and a debug-built HTTP client spent most of them itself
/// (it reached four to five times the capacity, not ten).
struct Driver {
    addr: String,
    request: Vec<u8>,
    idle: Mutex<Vec<TcpStream>>,
}

impl Driver {
    fn new(g: &Gateway) -> Driver {
        let addr = g.base.trim_start_matches("http://").to_string();
        let auth = g
            .token
            .as_ref()
            .map(|t| format!("Authorization: Bearer {t}\r\n"))
            .unwrap_or_default();
        let request = format!(
            "POST /api/v1/sessions HTTP/1.1\r\nHost: {addr}\r\n{auth}Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{{}}"
        );
        Driver {
            addr,
            request: request.into_bytes(),
            idle: Mutex::new(Vec::new()),
        }
    }

    async fn create_session(&self, tally: &Mutex<Tally>) {
        let idle = self.idle.lock().unwrap().pop();
        let mut conn = match idle {
            Some(c) => c,
            None => match TcpStream::connect(&self.addr).await {
                Ok(c) => c,
                Err(e) => return tally.lock().unwrap().other.push(format!("connect: {e}")),
            },
        };
        let answer = match exchange(&mut conn, &self.request).await {
            Ok(a) => a,
            Err(e) => return tally.lock().unwrap().other.push(format!("transport: {e}")),
        };
        if answer.keep_alive {
            self.idle.lock().unwrap().push(conn);
        }
        let body: Value = serde_json::from_slice(&answer.body).unwrap_or(Value::Null);
        let mut t = tally.lock().unwrap();
        match answer.status {
            201 => t
                .created
                .push(body["sessionId"].as_str().unwrap_or_default().to_string()),
            503 if body["error"]["code"] == "unavailable" => {
                t.shed += 1;
                if !answer.retry_after {
                    t.shed_without_retry_after += 1;
                }
            }
            status => t.other.push(format!("{status}: {body}")),
        }
    }
}

struct Answer {
    status: u16,
    retry_after: bool,
    keep_alive: bool,
    body: Vec<u8>,
}

/// One request and its response on `conn` (HTTP/1.1, a Content-Length body).
async fn exchange(conn: &mut TcpStream, request: &[u8]) -> std::io::Result<Answer> {
    use std::io::{Error, ErrorKind};
    conn.write_all(request).await?;
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    let mut read_more = async |conn: &mut TcpStream, buf: &mut Vec<u8>| {
        let n = conn.read(&mut chunk).await?;
        if n == 0 {
            return Err(Error::new(
                ErrorKind::UnexpectedEof,
                "the gateway closed the connection",
            ));
        }
        buf.extend_from_slice(&chunk[..n]);
        Ok(())
    };
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        read_more(conn, &mut buf).await?;
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let bad = |what: &str| Error::new(ErrorKind::InvalidData, format!("{what}: {head}"));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad("no status"))?;
    let (mut len, mut retry_after, mut keep_alive) = (None, false, true);
    for line in head.lines().skip(1) {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => len = value.trim().parse::<usize>().ok(),
            "retry-after" => retry_after = true,
            "connection" => keep_alive = !value.trim().eq_ignore_ascii_case("close"),
            _ => {}
        }
    }
    let len = len.ok_or_else(|| bad("no content-length"))?;
    while buf.len() < head_end + len {
        read_more(conn, &mut buf).await?;
    }
    Ok(Answer {
        status,
        retry_after,
        keep_alive,
        body: buf[head_end..head_end + len].to_vec(),
    })
}

/// `callers` callers, each sending its next request when the last is answered, for `secs`.
async fn closed_loop(g: &Arc<Driver>, callers: usize, secs: f64) -> Tally {
    let tally = Arc::new(Mutex::new(Tally::default()));
    let until = Instant::now() + Duration::from_secs_f64(secs);
    let tasks: Vec<_> = (0..callers)
        .map(|_| {
            let (g, tally) = (g.clone(), tally.clone());
            tokio::spawn(async move {
                while Instant::now() < until {
                    g.create_session(&tally).await;
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
async fn open_loop(g: &Arc<Driver>, rate: f64, secs: f64) -> (Tally, f64) {
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
            g.create_session(&tally).await;
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
    let driver = Arc::new(Driver::new(&g));
    let gateway_pid = g._process.pid();

    // What it serves: as many callers as it handles at once, each waiting for its answer.
    let warm = closed_loop(&driver, LIMIT, 3.0).await;
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
    let cpu_before = relay_testkit::cpu_reading();
    let (over, offered) = open_loop(&driver, 10.0 * capacity, 5.0).await;
    let mut cpu: Vec<(String, f64)> = relay_testkit::cpu_reading()
        .used_since(&cpu_before)
        .into_iter()
        .filter(|(_, secs)| *secs >= 0.1)
        .collect();
    cpu.sort_by(|a, b| b.1.total_cmp(&a.1));
    println!("CPU seconds while overloaded: {cpu:.1?}");
    watching.abort();
    let peak = *peak.lock().unwrap();
    println!(
        "capacity {capacity:.0} sessions/s; offered {offered:.0}/s ({:.1}× capacity) for 5 s: {} created, {} shed (503); gateway RSS {} KiB before, {} KiB peak",
        offered / capacity,
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
    let after = closed_loop(&driver, LIMIT / 2, 2.0).await;
    assert!(
        after.shed == 0 && after.other.is_empty() && !after.created.is_empty(),
        "after the overload: {} created, {} shed, {:?}",
        after.created.len(),
        after.shed,
        after.other
    );
    assert!(g.metric("relay_gateway_shed_total").await >= over.shed as f64);
}
