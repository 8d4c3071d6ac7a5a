//! The ordering and durability guarantees, tested by racing and breaking things.

mod common;
use common::tool;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// Tiny deterministic PRNG (xorshift) so the racing schedule varies per appender.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// 8 appenders over two replicas append batches of random size with random pauses, while a
/// reader tails `event.since`. The reader must see seqs 1, 2, 3, … with nothing skipped and
/// nothing out of order, which holds only if commit order equals seq order.
#[tokio::test]
async fn a_tailing_reader_never_sees_a_gap_while_replicas_append_concurrently() {
    let log = common::start(2, &[]).await;
    let mut appenders = Vec::new();
    for a in 0..8u64 {
        let client = log.client.clone();
        appenders.push(tokio::spawn(async move {
            let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (a + 1));
            let mut appended = 0usize;
            for round in 0..40 {
                let n = 1 + rng.below(20) as usize;
                let events: Vec<Value> = (0..n).map(|i| tool(round * 100 + i, &format!("s{a}"))).collect();
                let reply: Value = relay_testkit::call_json(&client, "event.append", json!({"events": events}))
                    .await
                    .unwrap();
                appended += reply["appended"].as_array().unwrap().len();
                tokio::time::sleep(Duration::from_micros(rng.below(3000))).await;
            }
            appended
        }));
    }

    let reader_client = log.client.clone();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader_done = done.clone();
    let reader = tokio::spawn(async move {
        let (mut last, mut pages) = (0i64, 0usize);
        loop {
            let finished = reader_done.load(std::sync::atomic::Ordering::SeqCst);
            let page: Value =
                relay_testkit::call_json(&reader_client, "event.since", json!({"seq": last, "limit": 50}))
                    .await
                    .unwrap();
            pages += 1;
            for e in page["events"].as_array().unwrap() {
                let seq = e["seq"].as_i64().unwrap();
                assert_eq!(seq, last + 1, "gap or reorder after seq {last}");
                last = seq;
            }
            if finished && last == page["headSeq"].as_i64().unwrap() {
                return (last, pages);
            }
        }
    });

    let mut total = 0;
    for a in appenders {
        total += a.await.unwrap();
    }
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let (last, pages) = reader.await.unwrap();
    eprintln!("gap test: {total} events from 8 appenders on 2 replicas, tailed in {pages} pages, no gap");
    assert_eq!(last, total as i64);

    // Per-session order is dense too.
    let all = common::replay_all(&log).await;
    let mut per_session: HashMap<String, Vec<i64>> = HashMap::new();
    for e in &all {
        per_session
            .entry(e["sessionId"].as_str().unwrap().into())
            .or_default()
            .push(e["sessionSeq"].as_i64().unwrap());
    }
    for (s, seqs) in per_session {
        assert_eq!(seqs, (1..=seqs.len() as i64).collect::<Vec<_>>(), "session {s}");
    }
}

/// kill -9 of one replica while 6 callers append; each retries with the same eventId until it
/// is acknowledged. Every acknowledged event is in the log exactly once.
#[tokio::test]
async fn a_replica_killed_mid_load_loses_no_acknowledged_event() {
    let mut log = common::start(2, &[]).await;
    let per_caller = 200;
    let mut callers = Vec::new();
    for c in 0..6 {
        let client = log.client.clone();
        callers.push(tokio::spawn(async move {
            let (mut acked, mut retries) = (Vec::new(), 0u32);
            for i in 0..per_caller {
                let id = format!("k-{c}-{i}");
                let body = json!({"eventId": id, "type": "tool.called", "sessionId": format!("s{c}"), "payload": {"tool": "t"}});
                loop {
                    match relay_bus::client::request::<_, Value>(&client, "event.append", &body, Duration::from_secs(2)).await {
                        Ok(_) => break,
                        Err(e) => {
                            assert!(e.error.retryable, "unexpected {e}");
                            retries += 1;
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        }
                    }
                }
                acked.push(id);
            }
            (acked, retries)
        }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    log.replicas[0].kill9().await;
    log.replace_first_replica().await;

    let (mut acked, mut retries) = (Vec::new(), 0);
    for c in callers {
        let (a, r) = c.await.unwrap();
        acked.extend(a);
        retries += r;
    }
    let all = common::replay_all(&log).await;
    let stored: Vec<&str> = all.iter().map(|e| e["eventId"].as_str().unwrap()).collect();
    let unique: HashSet<&str> = stored.iter().copied().collect();
    let lost = acked.iter().filter(|id| !unique.contains(id.as_str())).count();
    let duplicated = stored.len() - unique.len();
    eprintln!(
        "kill -9 under load: acked={} lost={lost} duplicated={duplicated} retries={retries}",
        acked.len()
    );
    assert_eq!(acked.len(), 6 * per_caller);
    assert_eq!((lost, duplicated), (0, 0));
    let seqs: Vec<i64> = all.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    assert_eq!(
        seqs,
        (1..=seqs.len() as i64).collect::<Vec<_>>(),
        "dense seqs after the crash"
    );
}
