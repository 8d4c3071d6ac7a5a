//! SQL for the event log (migrations/20261123000002_events.sql).

use crate::error::Result;
use relay_contracts::events::{Appended, Event};
use sqlx::{PgConnection, PgPool};
use std::collections::HashMap;

/// An event ready to store: validated, redacted, with its id and time.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub event_id: String,
    pub event_type: String,
    pub ts: i64,
    pub session_id: Option<String>,
    pub agent_name: Option<String>,
    pub agent_id: Option<String>,
    pub workspace: String,
    pub payload: serde_json::Value,
}

/// Stores `batch` in one transaction and returns, per input event, its seq (new or existing).
/// The head row's lock is taken first and held to commit: appends from every replica commit one
/// at a time, in seq order, with dense seqs within a server timeline (a failover skips ahead).
pub async fn append(conn: &mut PgConnection, batch: &[&Prepared]) -> Result<(Vec<Appended>, Vec<Event>)> {
    let mut tx = sqlx::Connection::begin(conn).await?;
    // The server's current timeline is the first 8 hex digits of its WAL file name; a promotion
    // starts a new one, and the first append on another timeline than the last continues at the
    // next multiple of 2^40 (migrations/20261125000017_event_log_timeline.sql says why).
    let (head, timeline): (i64, i32) = sqlx::query_as(
        "SELECT CASE WHEN h.timeline <> t.tl THEN ((h.last_seq >> 40) + 1) << 40 ELSE h.last_seq END,
                t.tl
         FROM event_log_head h,
              (SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int AS tl) t
         FOR UPDATE OF h",
    )
    .fetch_one(&mut *tx)
    .await?;

    let ids: Vec<&str> = batch.iter().map(|e| e.event_id.as_str()).collect();
    let existing: HashMap<String, i64> = sqlx::query_as("SELECT event_id, seq FROM events WHERE event_id = ANY($1)")
        .bind(&ids)
        .fetch_all(&mut *tx)
        .await?
        .into_iter()
        .collect();

    // Assign seqs in input order; an id seen before (in the log or earlier in this batch) is a
    // duplicate and gets the first one's seq.
    let mut seen: HashMap<&str, i64> = HashMap::new();
    let mut appended = Vec::with_capacity(batch.len());
    let mut fresh: Vec<&Prepared> = Vec::new();
    let mut next = head;
    for &e in batch {
        if let Some(seq) = existing.get(&e.event_id).or(seen.get(e.event_id.as_str())) {
            appended.push(Appended {
                event_id: e.event_id.clone(),
                seq: *seq,
                duplicate: true,
            });
            continue;
        }
        next += 1;
        seen.insert(&e.event_id, next);
        fresh.push(e);
        appended.push(Appended {
            event_id: e.event_id.clone(),
            seq: next,
            duplicate: false,
        });
    }
    if fresh.is_empty() {
        tx.commit().await?;
        return Ok((appended, Vec::new()));
    }

    // Per-session order: reserve a block per session on its head row.
    let mut per_session: Vec<(String, i64)> = Vec::new();
    for e in &fresh {
        if let Some(sid) = &e.session_id {
            match per_session.iter_mut().find(|(s, _)| s == sid) {
                Some((_, n)) => *n += 1,
                None => per_session.push((sid.clone(), 1)),
            }
        }
    }
    let (sids, counts): (Vec<String>, Vec<i64>) = per_session.iter().cloned().unzip();
    let ends: HashMap<String, i64> = sqlx::query_as(
        "INSERT INTO event_session_heads (session_id, last_seq) SELECT * FROM UNNEST($1::text[], $2::bigint[])
         ON CONFLICT (session_id) DO UPDATE SET last_seq = event_session_heads.last_seq + EXCLUDED.last_seq
         RETURNING session_id, last_seq",
    )
    .bind(&sids)
    .bind(&counts)
    .fetch_all(&mut *tx)
    .await?
    .into_iter()
    .collect();
    let mut session_next: HashMap<&str, i64> = per_session.iter().map(|(s, n)| (s.as_str(), ends[s] - n)).collect();

    let mut events = Vec::with_capacity(fresh.len());
    for (i, e) in fresh.iter().enumerate() {
        let session_seq = e.session_id.as_deref().map(|s| {
            let n = session_next.get_mut(s).expect("reserved above");
            *n += 1;
            *n
        });
        events.push(Event {
            seq: head + 1 + i as i64,
            event_id: e.event_id.clone(),
            event_type: e.event_type.clone(),
            ts: e.ts,
            session_id: e.session_id.clone(),
            session_seq,
            agent_name: e.agent_name.clone(),
            agent_id: e.agent_id.clone(),
            workspace: Some(e.workspace.clone()),
            payload: e.payload.clone(),
        });
    }
    insert(&mut tx, &events).await?;
    sqlx::query("UPDATE event_log_head SET last_seq = $1, timeline = $2")
        .bind(next)
        .bind(timeline)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok((appended, events))
}

async fn insert(conn: &mut PgConnection, events: &[Event]) -> Result<()> {
    let col = |f: fn(&Event) -> Option<String>| events.iter().map(f).collect::<Vec<_>>();
    sqlx::query(
        "INSERT INTO events (seq, event_id, type, ts, session_id, session_seq, agent_name, agent_id, payload, workspace)
         SELECT s, i, t, ts, sid, sseq, an, aid, p::jsonb, w
         FROM UNNEST($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::bigint[], $7::text[], $8::text[], $9::text[], $10::text[])
              AS u(s, i, t, ts, sid, sseq, an, aid, p, w)",
    )
    .bind(events.iter().map(|e| e.seq).collect::<Vec<_>>())
    .bind(col(|e| Some(e.event_id.clone())))
    .bind(col(|e| Some(e.event_type.clone())))
    .bind(events.iter().map(|e| e.ts).collect::<Vec<_>>())
    .bind(col(|e| e.session_id.clone()))
    .bind(events.iter().map(|e| e.session_seq).collect::<Vec<_>>())
    .bind(col(|e| e.agent_name.clone()))
    .bind(col(|e| e.agent_id.clone()))
    .bind(col(|e| Some(e.payload.to_string())))
    .bind(col(|e| e.workspace.clone()))
    .execute(conn)
    .await?;
    Ok(())
}

/// Filters shared by query and since. `None` means no filter.
pub struct Filter<'a> {
    pub types: Option<&'a [String]>,
    pub agents: Option<&'a [String]>,
    pub session_ids: Option<&'a [String]>,
    pub since_ts: Option<i64>,
    pub until_ts: Option<i64>,
    /// The caller's workspace, when it is confined to one.
    pub workspace: Option<&'a str>,
}

/// An `events` row.
#[derive(sqlx::FromRow)]
struct Row {
    seq: i64,
    event_id: String,
    #[sqlx(rename = "type")]
    event_type: String,
    ts: i64,
    session_id: Option<String>,
    session_seq: Option<i64>,
    agent_name: Option<String>,
    agent_id: Option<String>,
    payload: serde_json::Value,
    workspace: String,
}

/// Up to `limit` events with seq > `after` matching `f`, oldest first. Pages walk the primary
/// key, so a replay never holds more than one page in memory.
pub async fn page(db: &PgPool, f: &Filter<'_>, after: i64, limit: i64) -> Result<Vec<Event>> {
    select(db, f, "seq > $1", "seq", after, limit).await
}

/// Up to `limit` events with seq < `before` (`None`: the newest) matching `f`, newest first.
pub async fn page_back(db: &PgPool, f: &Filter<'_>, before: Option<i64>, limit: i64) -> Result<Vec<Event>> {
    select(db, f, "seq < $1", "seq DESC", before.unwrap_or(i64::MAX), limit).await
}

/// One page from `from` on: `bound` and `order` are this file's own constants, never input.
async fn select(db: &PgPool, f: &Filter<'_>, bound: &str, order: &str, from: i64, limit: i64) -> Result<Vec<Event>> {
    let rows: Vec<Row> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT seq, event_id, type, ts, session_id, session_seq, agent_name, agent_id, payload, workspace FROM events
         WHERE {bound}
           AND ($8::text IS NULL OR workspace = $8)
           AND ($2::text[] IS NULL OR type = ANY($2))
           AND ($3::text[] IS NULL OR agent_name = ANY($3) OR agent_id = ANY($3))
           AND ($4::text[] IS NULL OR session_id = ANY($4))
           AND ($5::bigint IS NULL OR ts >= $5)
           AND ($6::bigint IS NULL OR ts < $6)
         ORDER BY {order} LIMIT $7"
    )))
    .bind(from)
    .bind(f.types)
    .bind(f.agents)
    .bind(f.session_ids)
    .bind(f.since_ts)
    .bind(f.until_ts)
    .bind(limit)
    .bind(f.workspace)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| Event {
            seq: r.seq,
            event_id: r.event_id,
            event_type: r.event_type,
            ts: r.ts,
            session_id: r.session_id,
            session_seq: r.session_seq,
            agent_name: r.agent_name,
            agent_id: r.agent_id,
            workspace: Some(r.workspace),
            payload: r.payload,
        })
        .collect())
}

pub async fn head(db: &PgPool) -> Result<i64> {
    Ok(sqlx::query_scalar("SELECT last_seq FROM event_log_head")
        .fetch_one(db)
        .await?)
}

pub async fn purge_session(db: &PgPool, session_id: &str) -> Result<i64> {
    let done = sqlx::query("DELETE FROM events WHERE session_id = $1")
        .bind(session_id)
        .execute(db)
        .await?;
    Ok(done.rows_affected() as i64)
}

/// Deletes up to `batch` events older than `cutoff`; short transactions, so appends never wait.
pub async fn expire(db: &PgPool, cutoff: i64, batch: i64) -> Result<u64> {
    let done =
        sqlx::query("DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE ts < $1 ORDER BY ts LIMIT $2)")
            .bind(cutoff)
            .bind(batch)
            .execute(db)
            .await?;
    Ok(done.rows_affected())
}

/// Whether `agent` has any event in `session` (by the session index, so cheap).
pub async fn agent_in_session(db: &PgPool, agent: &str, session: &str) -> sqlx::Result<bool> {
    sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM events WHERE session_id = $1 AND agent_id = $2)")
        .bind(session)
        .bind(agent)
        .fetch_one(db)
        .await
}
