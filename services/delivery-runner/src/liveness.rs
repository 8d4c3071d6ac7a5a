//! Which runners are alive, so a dead runner's agents are taken over in seconds, not after
//! their lease (`runner.lease_ms`).
//!
//! Each runner holds a session advisory lock, `(LIVENESS_CLASS, id)`, on a connection of its
//! own for as long as it runs; its lease owner name is `runner-<id>`. A process killed with
//! kill -9 closes that connection, Postgres drops the lock at once, and every other runner's
//! sweep sees it gone from `pg_locks`: after [`GRACE`] (a runner whose connection was cut by
//! a Postgres restart gets that long to lock again), its leases are cleared and the runners
//! woken to claim its agents. What the dead runner had handed but not recorded is handed
//! again by its successor; the harness knows the delivery id and answers what became of it.
//! A runner whose leases were swept while it still lived finds out at its next renewal or
//! receipt (both check the owner) and stops walking.

use crate::Runner;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// First key of every runner's liveness lock ("rela"); the second is the runner's id.
const LIVENESS_CLASS: i32 = 0x7265_6c61;
/// How long a lease owner must be missing from `pg_locks` before its leases are swept.
pub const GRACE: Duration = Duration::from_secs(2);
/// How often the sweep looks.
const EVERY: Duration = Duration::from_millis(500);

/// This runner's lease owner name; holds its liveness lock from now on (and takes it again
/// whenever the connection is lost).
pub fn start(runner: &Runner) -> String {
    let id = (uuid::Uuid::new_v4().as_u128() as u32 & 0x7fff_ffff).max(1) as i32;
    tokio::spawn(hold(runner.db.clone(), id));
    tokio::spawn(sweep(runner.clone()));
    format!("runner-{id}")
}

/// Holds `(LIVENESS_CLASS, id)` for the life of the process, on its own connection.
async fn hold(db: sqlx::PgPool, id: i32) {
    use sqlx::Connection;
    loop {
        let held = async {
            let mut conn = sqlx::PgConnection::connect_with(&db.connect_options()).await?;
            sqlx::query("SELECT pg_advisory_lock($1, $2)")
                .bind(LIVENESS_CLASS)
                .bind(id)
                .execute(&mut conn)
                .await?;
            tracing::debug!(runner = id, "liveness lock held");
            // Until the connection is lost: a ping now and then notices it.
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                conn.ping().await?;
            }
            #[allow(unreachable_code)]
            Ok::<(), sqlx::Error>(())
        }
        .await;
        if let Err(e) = held {
            tracing::warn!(runner = id, error = %e, "liveness lock lost; taking it again");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Clears the leases of owners that hold no liveness lock for [`GRACE`], and wakes the runners.
async fn sweep(runner: Runner) {
    let mut missing: HashMap<String, Instant> = HashMap::new();
    loop {
        tokio::time::sleep(EVERY).await;
        match sweep_once(&runner, &mut missing).await {
            Ok(0) => {}
            Ok(n) => tracing::warn!(agents = n, "a runner died: its agents were taken back for the others"),
            Err(e) => tracing::debug!(error = %e, "liveness sweep failed; next round"),
        }
    }
}

async fn sweep_once(runner: &Runner, missing: &mut HashMap<String, Instant>) -> Result<u64, sqlx::Error> {
    // Owners holding a lease now, and which of them hold their liveness lock.
    let owners: Vec<(String, bool)> = sqlx::query_as(
        "SELECT o.owner, EXISTS (SELECT 1 FROM pg_locks l
                                 WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
                                   AND l.classid = $2::oid
                                   AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                                   AND 'runner-' || l.objid::text = o.owner)
         FROM (SELECT DISTINCT owner FROM delivery_agents WHERE owner IS NOT NULL AND lease_until > $1) o",
    )
    .bind(relay_bus::now_ms())
    .bind(LIVENESS_CLASS as i64)
    .fetch_all(&runner.db)
    .await?;
    let now = Instant::now();
    missing.retain(|owner, _| owners.iter().any(|(o, alive)| o == owner && !alive));
    let dead: Vec<&str> = owners
        .iter()
        .filter(|(_, alive)| !alive)
        .filter(|(owner, _)| now.duration_since(*missing.entry(owner.clone()).or_insert(now)) >= GRACE)
        .map(|(owner, _)| owner.as_str())
        .collect();
    if dead.is_empty() {
        return Ok(0);
    }
    let mut tx = runner.db.begin().await?;
    let taken = sqlx::query("UPDATE delivery_agents SET lease_until = NULL, owner = NULL WHERE owner = ANY($1)")
        .bind(&dead)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    crate::store::wake_runners(&mut *tx).await?;
    tx.commit().await?;
    for owner in dead {
        tracing::info!(
            owner,
            "lease owner holds no liveness lock: its agents are free to claim"
        );
    }
    Ok(taken)
}
