//! Bounded growth: the one loop every table's retention rule runs in. The owning crate writes
//! its `DELETE` statements; this runs them, in every replica (they only delete rows nobody
//! works on any more, so replicas do not get in each other's way).

use sqlx::PgPool;
use std::time::Duration;

/// Rows one statement deletes: short transactions, however far behind a sweep is.
pub const BATCH: i64 = 5_000;

/// Runs `statements` forever, a quarter of `keep` apart (between 1 s and a minute). Each is a
/// `DELETE` of at most `$2` rows whose time is before `$1` (Unix ms: now − `keep`), run again
/// while it deletes a whole batch. `what` names them in the logs.
pub fn spawn(db: &PgPool, what: &'static str, keep: Duration, statements: Vec<String>) {
    tokio::spawn(run(db.clone(), what, keep, statements));
}

/// How often a sweep of a `keep` window runs: a quarter of it, between 1 s and a minute.
pub fn interval(keep: Duration) -> Duration {
    (keep / 4).clamp(Duration::from_secs(1), Duration::from_secs(60))
}

async fn run(db: PgPool, what: &'static str, keep: Duration, statements: Vec<String>) {
    let every = interval(keep);
    loop {
        tokio::time::sleep(every).await;
        let before = crate::now_ms() - keep.as_millis() as i64;
        for sql in &statements {
            let mut deleted = 0;
            loop {
                let done = sqlx::query(sqlx::AssertSqlSafe(sql.clone()))
                    .bind(before)
                    .bind(BATCH)
                    .execute(&db)
                    .await;
                match done {
                    Ok(r) => {
                        deleted += r.rows_affected();
                        if r.rows_affected() < BATCH as u64 {
                            break;
                        }
                    }
                    Err(e) => {
                        tracing::warn!(what, error = %e, "cannot delete rows past their keep window; will retry");
                        break;
                    }
                }
            }
            if deleted > 0 {
                tracing::debug!(what, deleted, "deleted rows past their keep window");
            }
        }
    }
}
