//! SQL for the registry's tables (migrations/20261123000001_registry.sql).
//!
//! Every row keeps its contract record in `doc`; the columns beside it are written from the same
//! struct by the `save_*`/`insert_*` functions here and nowhere else.

use crate::Registry;
use crate::error::{RegistryError, Result};
use relay_bus::db::TextEnum;
use relay_contracts::delivery::{HandoffItem, NewDelivery};
use relay_contracts::session::*;
use relay_contracts::workspace::DeliveryPolicy;
use sqlx::types::Json;
use sqlx::{PgConnection, Postgres, Row, Transaction};
use std::collections::HashMap;

pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

pub use relay_bus::now_ms;

/// Event types the log keeps as they are, as the seeds name them (seed 000's `message.sent`
/// of an agent that sent a relay message), written to `registry_seed_events`.
const SEED_NAMED: &[&str] = &[relay_contracts::session::events::MessageSent::TYPE];

/// One change to the registry: a transaction plus the events it emits. Events are written to
/// `registry_events` inside the transaction, just before it commits, and published on NATS only
/// after it commits, so a subscriber never sees an event for a change that was rolled back.
pub struct Change {
    pub tx: Transaction<'static, Postgres>,
    events: Vec<Queued>,
    /// Stored entries for the delivery runner: handed over right after commit.
    handed_over: bool,
    nats: async_nats::Client,
    forward_wake: [std::sync::Arc<tokio::sync::Notify>; 2],
    relay: crate::handoff::Relay,
    /// The workspace of the request this change serves: new sessions are created in it.
    pub workspace: String,
    /// Where the sessions this change locked live, read with their lock.
    places: HashMap<String, Place>,
    /// A conversation's turn in this process, given up when the transaction ends.
    pub(crate) held: Option<relay_messaging::Turn>,
}

/// An event of the change, with what its row needs besides: its workspace when not its
/// session's, the trace it was emitted in.
struct Queued {
    event: SessionEvent,
    workspace: Option<String>,
    traceparent: Option<String>,
}

/// A session's workspace and that workspace's delivery policy (seed 001 step 3): what a send
/// hands the delivery runner besides the message.
#[derive(Clone)]
pub struct Place {
    pub workspace: String,
    pub policy: Option<DeliveryPolicy>,
}

/// The columns of a session's [`Place`] and where they come from, for session `$1`.
const PLACE: &str = "s.workspace, w.delivery_policy
     FROM registry_sessions s LEFT JOIN registry_workspaces w ON w.name = s.workspace
     WHERE s.session_id = $1";

impl Place {
    fn of(r: &sqlx::postgres::PgRow) -> Place {
        let policy: Option<Json<DeliveryPolicy>> = r.get("delivery_policy");
        Place {
            workspace: r.get("workspace"),
            policy: policy.map(|p| p.0),
        }
    }
}

impl Change {
    pub async fn begin(reg: &Registry) -> Result<Self> {
        Ok(Change {
            workspace: relay_bus::context::outgoing().workspace,
            tx: reg.db.begin().await?,
            events: Vec::new(),
            handed_over: false,
            nats: reg.nats.clone(),
            forward_wake: reg.forward_wake.clone(),
            relay: reg.relay.clone(),
            places: HashMap::new(),
            held: None,
        })
    }

    /// [`lock_session`], reading the session's [`Place`] in the same statement.
    pub async fn lock(&mut self, id: &str) -> Result<Option<Stored>> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT s.status, s.doc, {PLACE} FOR UPDATE OF s"
        )))
        .bind(id)
        .fetch_optional(&mut *self.tx)
        .await?;
        Ok(row.map(|r| {
            self.places.insert(id.to_string(), Place::of(&r));
            stored(&r)
        }))
    }

    /// [`lock_live`], reading the session's [`Place`] in the same statement.
    pub async fn lock_live(&mut self, id: &str) -> Result<Session> {
        let stored = self.lock(id).await?;
        live(id, stored)
    }

    /// The session's [`Place`]: as read with its lock or before in this change, else from the
    /// tables; `None` for a session that does not exist.
    pub async fn place(&mut self, session_id: &str) -> Result<Option<Place>> {
        if let Some(place) = self.places.get(session_id) {
            return Ok(Some(place.clone()));
        }
        let row = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {PLACE}")))
            .bind(session_id)
            .fetch_optional(&mut *self.tx)
            .await?;
        let place = row.as_ref().map(Place::of);
        if let Some(p) = &place {
            self.places.insert(session_id.to_string(), p.clone());
        }
        Ok(place)
    }

    pub fn conn(&mut self) -> &mut PgConnection {
        &mut self.tx
    }

    /// Writes a session event: in its session's workspace.
    pub async fn emit<P: EventPayload>(&mut self, session_id: &str, payload: P) -> Result<()> {
        self.record(None, None, session_id, payload).await
    }

    /// Like [`Change::emit`], under an event id the caller chose (one its payload names too).
    pub async fn emit_as<P: EventPayload>(&mut self, event_id: String, session_id: &str, payload: P) -> Result<()> {
        self.record(Some(event_id), None, session_id, payload).await
    }

    /// Like [`Change::emit`], for a stream that is not a session (a conversation, `#ops`) in
    /// `workspace`.
    pub async fn emit_in<P: EventPayload>(&mut self, workspace: &str, stream: &str, payload: P) -> Result<()> {
        self.record(None, Some(workspace), stream, payload).await
    }

    /// Queues the event row, in `workspace` or else its session's; [`Change::commit`] writes the
    /// change's events in one statement per table, so a send's five events cost one round trip
    /// inside its locks, not five.
    async fn record<P: EventPayload>(
        &mut self,
        event_id: Option<String>,
        workspace: Option<&str>,
        stream: &str,
        payload: P,
    ) -> Result<()> {
        let payload = serde_json::to_value(&payload).map_err(|e| RegistryError::Invalid(e.to_string()))?;
        let (event_id, ts) = (event_id.unwrap_or_else(new_id), now_ms());
        self.events.push(Queued {
            event: SessionEvent {
                event_id,
                session_id: stream.to_string(),
                timestamp: ts,
                event_type: P::TYPE.to_string(),
                payload,
                seq: None,
            },
            workspace: workspace.map(str::to_string),
            traceparent: relay_bus::trace::current_traceparent(),
        });
        Ok(())
    }

    /// Writes the queued events, in the order they were emitted: one INSERT per outbox table,
    /// each row in its given workspace or else its session's (`default` for neither).
    async fn write_events(&mut self) -> Result<()> {
        // The log keeps a seed's own name for some (not `session.<type>`): their own outbox.
        for (seed_named, table) in [(false, "registry_events"), (true, "registry_seed_events")] {
            let rows: Vec<&Queued> = (self.events.iter())
                .filter(|q| SEED_NAMED.contains(&q.event.event_type.as_str()) == seed_named)
                .collect();
            if rows.is_empty() {
                continue;
            }
            let (mut ids, mut streams, mut types, mut ts) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            let (mut payloads, mut traces, mut workspaces) = (Vec::new(), Vec::new(), Vec::new());
            for q in rows {
                let e = &q.event;
                ids.push(e.event_id.as_str());
                streams.push(e.session_id.as_str());
                types.push(e.event_type.as_str());
                ts.push(e.timestamp);
                payloads.push(&e.payload);
                traces.push(q.traceparent.as_deref());
                workspaces.push(q.workspace.as_deref());
            }
            let seqs: Vec<(String, i64)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                "INSERT INTO {table} (event_id, session_id, type, ts, payload, traceparent, workspace)
                 SELECT e.event_id, e.stream, e.type, e.ts, e.payload, e.traceparent,
                        coalesce(e.workspace, s.workspace, 'default')
                 FROM UNNEST($1::text[], $2::text[], $3::text[], $4::bigint[], $5::jsonb[], $6::text[], $7::text[])
                      WITH ORDINALITY AS e(event_id, stream, type, ts, payload, traceparent, workspace, n)
                 LEFT JOIN registry_sessions s ON s.session_id = e.stream
                 ORDER BY e.n
                 RETURNING event_id, seq"
            )))
            .bind(&ids)
            .bind(&streams)
            .bind(&types)
            .bind(&ts)
            .bind(&payloads)
            .bind(&traces)
            .bind(&workspaces)
            .fetch_all(&mut *self.tx)
            .await?;
            let seqs: HashMap<String, i64> = seqs.into_iter().collect();
            for q in &mut self.events {
                if let Some(seq) = seqs.get(&q.event.event_id) {
                    q.event.seq = Some(*seq);
                }
            }
        }
        Ok(())
    }

    /// Hands the stored message and its deliveries (`delivery_ids` in target order, as
    /// [`insert_message`] stored them) to the delivery runner (handoff.rs) with this change.
    pub async fn hand_over_deliveries(&mut self, m: &Message, delivery_ids: &[String]) -> Result<()> {
        let deliveries: Vec<NewDelivery> = m
            .target_agent_ids
            .iter()
            .flatten()
            .zip(delivery_ids)
            .map(|(agent_id, delivery_id)| NewDelivery {
                delivery_id: delivery_id.clone(),
                agent_id: agent_id.clone(),
            })
            .collect();
        if !deliveries.is_empty() {
            let (workspace, policy) = match self.place(&m.session_id).await? {
                Some(p) => (Some(p.workspace), p.policy),
                None => (None, None),
            };
            let item = HandoffItem::Message {
                message: Box::new(m.clone()),
                deliveries,
                traceparent: relay_bus::trace::current_traceparent(),
                workspace,
                policy,
            };
            crate::handoff::store(&mut self.tx, &m.session_id, &item).await?;
            self.handed_over = true;
        }
        Ok(())
    }

    pub async fn insert_agent(&mut self, a: &Agent) -> Result<()> {
        insert_agent(&mut self.tx, a).await?;
        self.handed_over = true;
        Ok(())
    }

    pub async fn save_agent(&mut self, a: &Agent) -> Result<()> {
        save_agent(&mut self.tx, a).await?;
        self.handed_over = true;
        Ok(())
    }

    /// Commits, then publishes each event on `session.<type>` and on the `session.event` catch-all.
    pub async fn commit(mut self) -> Result<()> {
        self.write_events().await?;
        self.tx.commit().await?;
        self.held.take();
        if self.handed_over {
            self.relay.hand_over_now().await;
        }
        if !self.events.is_empty() {
            self.forward_wake.iter().for_each(|w| w.notify_one());
        }
        for Queued { event, .. } in &self.events {
            let typed = relay_contracts::subjects::session::event_subject(&event.event_type);
            let published = async {
                relay_bus::client::publish(&self.nats, typed, &event.payload).await?;
                relay_bus::client::publish(&self.nats, relay_contracts::subjects::session::EVENT.into(), event).await
            };
            // The change is committed and its event stored; a failed publish must not turn into
            // an error reply, or a retrying caller would apply the change twice.
            if let Err(e) = published.await {
                tracing::warn!(event = %event.event_type, error = %e, "event stored but not published");
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Sessions

/// A session row as found under lock.
pub enum Stored {
    Live(Box<Session>),
    Purged,
}

/// `SELECT … FOR UPDATE`: every mutation of a session goes through this row lock, so replicas
/// serialise on the session, not on a process-local mutex.
pub async fn lock_session(conn: &mut PgConnection, id: &str) -> Result<Option<Stored>> {
    let row = sqlx::query("SELECT status, doc FROM registry_sessions WHERE session_id = $1 FOR UPDATE")
        .bind(id)
        .fetch_optional(conn)
        .await?;
    Ok(row.as_ref().map(stored))
}

fn stored(r: &sqlx::postgres::PgRow) -> Stored {
    match r.get::<Option<Json<Session>>, _>("doc") {
        Some(Json(s)) if r.get::<String, _>("status") != "purged" => Stored::Live(Box::new(s)),
        _ => Stored::Purged,
    }
}

/// Locks a session that must exist and not be purged.
pub async fn lock_live(conn: &mut PgConnection, id: &str) -> Result<Session> {
    live(id, lock_session(conn, id).await?)
}

/// The session `lock_session` found, which must exist and not be purged.
pub fn live(id: &str, stored: Option<Stored>) -> Result<Session> {
    match stored {
        Some(Stored::Live(s)) => Ok(*s),
        Some(Stored::Purged) => Err(RegistryError::Conflict(format!(
            "session {id} was purged; its data is gone"
        ))),
        None => Err(RegistryError::session_not_found(id)),
    }
}

fn doc_of(s: &Session) -> Json<Session> {
    // Agents live in their own table and the preview is computed on read.
    let mut doc = s.clone();
    doc.agents.clear();
    doc.preview = None;
    Json(doc)
}

/// Inserts a new session in `workspace`; `false` when the id is already taken.
pub async fn insert_session(conn: &mut PgConnection, s: &Session, workspace: &str) -> Result<bool> {
    let done = sqlx::query(
        "INSERT INTO registry_sessions (session_id, status, parent_session_id, adapter_session_id, execution_target_id,
             is_imported, created_at, last_activity_at, doc, workspace)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (session_id) DO NOTHING",
    )
    .bind(&s.session_id)
    .bind(s.status.as_str())
    .bind(&s.parent_session_id)
    .bind(&s.adapter_session_id)
    .bind(&s.execution_target_id)
    .bind(s.is_imported.unwrap_or(false))
    .bind(s.created_at)
    .bind(s.last_activity_at)
    .bind(doc_of(s))
    .bind(workspace)
    .execute(conn)
    .await
    .map_err(|e| match e.as_database_error().and_then(|d| d.constraint()) {
        Some(c) if c.contains("workspace") => RegistryError::NotFound {
            what: "workspace",
            id: workspace.to_string(),
        },
        _ => RegistryError::Db(e),
    })?;
    Ok(done.rows_affected() == 1)
}

pub async fn save_session(conn: &mut PgConnection, s: &Session) -> Result<()> {
    sqlx::query(
        "UPDATE registry_sessions SET status = $2, parent_session_id = $3, adapter_session_id = $4,
             execution_target_id = $5, is_imported = $6, last_activity_at = $7, doc = $8,
             status_since = CASE WHEN status = $2 THEN status_since ELSE $9 END
         WHERE session_id = $1",
    )
    .bind(&s.session_id)
    .bind(s.status.as_str())
    .bind(&s.parent_session_id)
    .bind(&s.adapter_session_id)
    .bind(&s.execution_target_id)
    .bind(s.is_imported.unwrap_or(false))
    .bind(s.last_activity_at)
    .bind(doc_of(s))
    .bind(now_ms())
    .execute(conn)
    .await?;
    Ok(())
}

/// The workspace of a session, if it exists.
pub async fn session_workspace(conn: &mut PgConnection, id: &str) -> Result<Option<String>> {
    Ok(
        sqlx::query_scalar("SELECT workspace FROM registry_sessions WHERE session_id = $1")
            .bind(id)
            .fetch_optional(conn)
            .await?,
    )
}

pub async fn branch_state(conn: &mut PgConnection, id: &str) -> Result<Option<String>> {
    Ok(
        sqlx::query_scalar("SELECT branch_state FROM registry_sessions WHERE session_id = $1")
            .bind(id)
            .fetch_optional(conn)
            .await?
            .flatten(),
    )
}

pub async fn set_branch_state(conn: &mut PgConnection, id: &str, state: &str) -> Result<()> {
    sqlx::query("UPDATE registry_sessions SET branch_state = $2 WHERE session_id = $1")
        .bind(id)
        .bind(state)
        .execute(conn)
        .await?;
    Ok(())
}

/// Sessions by id, in the order given, with their agents; purged and unknown ids are left out.
pub async fn load_sessions(conn: &mut PgConnection, ids: &[String]) -> Result<Vec<Session>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let rows: Vec<(String, Json<Session>)> = sqlx::query_as(
        "SELECT session_id, doc FROM registry_sessions WHERE session_id = ANY($1) AND status <> 'purged'",
    )
    .bind(ids)
    .fetch_all(&mut *conn)
    .await?;
    let mut by_id: HashMap<String, Session> = rows.into_iter().map(|(id, Json(s))| (id, s)).collect();
    let mut agents = agents_of(conn, ids).await?;
    Ok(ids
        .iter()
        .filter_map(|id| {
            let mut s = by_id.remove(id)?;
            s.agents = agents.remove(id).unwrap_or_default();
            Some(s)
        })
        .collect())
}

pub async fn load_session(conn: &mut PgConnection, id: &str) -> Result<Option<Session>> {
    Ok(load_sessions(conn, &[id.to_string()]).await?.pop())
}

/// A live session or `not_found`; purged sessions are not found by readers.
pub async fn require_session(conn: &mut PgConnection, id: &str) -> Result<Session> {
    load_session(conn, id)
        .await?
        .ok_or_else(|| RegistryError::session_not_found(id))
}

/// Message count and first user message of each session.
pub async fn previews(conn: &mut PgConnection, ids: &[String]) -> Result<HashMap<String, Preview>> {
    let rows: Vec<(String, i64, Option<String>)> = sqlx::query_as(
        "SELECT s.id, coalesce(c.n, 0), f.content_text
         FROM unnest($1::text[]) AS s(id)
         LEFT JOIN LATERAL (SELECT count(*) AS n FROM registry_messages m WHERE m.session_id = s.id) c ON true
         LEFT JOIN LATERAL (SELECT content_text FROM registry_messages m
                            WHERE m.session_id = s.id AND m.role = 'user' ORDER BY seq LIMIT 1) f ON true",
    )
    .bind(ids)
    .fetch_all(conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, n, first)| {
            (
                id,
                Preview {
                    message_count: n,
                    first_user_message: first,
                },
            )
        })
        .collect())
}

pub async fn with_previews(conn: &mut PgConnection, mut sessions: Vec<Session>) -> Result<Vec<Session>> {
    let ids: Vec<String> = sessions.iter().map(|s| s.session_id.clone()).collect();
    let mut previews = previews(conn, &ids).await?;
    for s in &mut sessions {
        s.preview = previews.remove(&s.session_id);
    }
    Ok(sessions)
}

/// Ids of the live children of `id`.
pub async fn child_ids(conn: &mut PgConnection, id: &str) -> Result<Vec<String>> {
    Ok(sqlx::query_scalar(
        "SELECT session_id FROM registry_sessions WHERE parent_session_id = $1 AND status <> 'purged' ORDER BY created_at, session_id",
    )
    .bind(id)
    .fetch_all(conn)
    .await?)
}

// ---------------------------------------------------------------------------------------------
// Agents

pub async fn agents_of(conn: &mut PgConnection, session_ids: &[String]) -> Result<HashMap<String, Vec<Agent>>> {
    let rows: Vec<(String, Json<Agent>)> =
        sqlx::query_as("SELECT session_id, doc FROM registry_agents WHERE session_id = ANY($1) ORDER BY attach_seq")
            .bind(session_ids)
            .fetch_all(conn)
            .await?;
    let mut out: HashMap<String, Vec<Agent>> = HashMap::new();
    for (sid, Json(a)) in rows {
        out.entry(sid).or_default().push(a);
    }
    Ok(out)
}

pub async fn session_agents(conn: &mut PgConnection, session_id: &str) -> Result<Vec<Agent>> {
    Ok(agents_of(conn, &[session_id.to_string()])
        .await?
        .remove(session_id)
        .unwrap_or_default())
}

pub async fn find_agent(conn: &mut PgConnection, agent_id: &str) -> Result<Agent> {
    let row: Option<Json<Agent>> = sqlx::query_scalar("SELECT doc FROM registry_agents WHERE agent_id = $1")
        .bind(agent_id)
        .fetch_optional(conn)
        .await?;
    row.map(|Json(a)| a)
        .ok_or_else(|| RegistryError::agent_not_found(agent_id))
}

/// Inserts the agent and hands it to the delivery runner (its status and capabilities decide
/// what may be delivered to it).
pub async fn insert_agent(conn: &mut PgConnection, a: &Agent) -> Result<()> {
    sqlx::query(
        "INSERT INTO registry_agents (agent_id, session_id, adapter_session_id, doc, workspace)
         VALUES ($1, $2, $3, $4, (SELECT workspace FROM registry_sessions WHERE session_id = $2))",
    )
    .bind(&a.agent_id)
    .bind(&a.session_id)
    .bind(&a.adapter_session_id)
    .bind(Json(a))
    .execute(&mut *conn)
    .await
    .map_err(|e| handle_taken(e, a))?;
    hand_over_agent(conn, a).await
}

/// A unique violation of the live-handle index is the handle being taken.
fn handle_taken(e: sqlx::Error, a: &Agent) -> RegistryError {
    match e.as_database_error().and_then(|d| d.constraint()) {
        Some("registry_agents_live_handle") => RegistryError::Conflict(format!(
            "handle @{} is taken by a live agent of this workspace",
            a.handle.as_deref().unwrap_or_default()
        )),
        _ => e.into(),
    }
}

/// Serialises handle choices in a workspace until the transaction ends (two attaches must not
/// both pick the same free default).
pub async fn lock_handles(conn: &mut PgConnection, workspace: &str) -> Result<()> {
    sqlx::query("SELECT pg_advisory_xact_lock(hashtext('relay-handles:' || $1))")
        .bind(workspace)
        .execute(conn)
        .await?;
    Ok(())
}

/// The live agents' handles of `workspace` that are `base` or `base-<n>`.
pub async fn handles_like(conn: &mut PgConnection, workspace: &str, base: &str) -> Result<Vec<String>> {
    Ok(sqlx::query_scalar(
        "SELECT handle FROM registry_agents
         WHERE workspace = $1 AND live AND (handle = $2 OR starts_with(handle, $2 || '-'))",
    )
    .bind(workspace)
    .bind(base)
    .fetch_all(conn)
    .await?)
}

/// The live agent with `handle` in `workspace`.
pub async fn agent_by_handle(conn: &mut PgConnection, workspace: &str, handle: &str) -> Result<Option<Agent>> {
    let row: Option<Json<Agent>> =
        sqlx::query_scalar("SELECT doc FROM registry_agents WHERE workspace = $1 AND handle = $2 AND live")
            .bind(workspace)
            .bind(handle)
            .fetch_optional(conn)
            .await?;
    Ok(row.map(|Json(a)| a))
}

/// The workspace of an agent's session.
pub async fn agent_workspace(conn: &mut PgConnection, agent_id: &str) -> Result<Option<String>> {
    Ok(
        sqlx::query_scalar("SELECT workspace FROM registry_agents WHERE agent_id = $1")
            .bind(agent_id)
            .fetch_optional(conn)
            .await?,
    )
}

/// Those of `agent_ids` that belong to `workspace`.
pub async fn agents_in_workspace(conn: &mut PgConnection, agent_ids: &[&str], workspace: &str) -> Result<Vec<String>> {
    Ok(
        sqlx::query_scalar("SELECT agent_id FROM registry_agents WHERE agent_id = ANY($1) AND workspace = $2")
            .bind(agent_ids)
            .bind(workspace)
            .fetch_all(conn)
            .await?,
    )
}

/// What [`list_agents`] lists.
pub struct AgentFilter<'a> {
    pub workspace: Option<&'a str>,
    pub live_only: bool,
    pub session_id: Option<&'a str>,
    /// Only agents whose last reported status is this one.
    pub reported: Option<&'a str>,
}

/// A page of agents with their reported status, most recently active first, and how many match
/// in all.
pub async fn list_agents(
    conn: &mut PgConnection,
    f: &AgentFilter<'_>,
    limit: i64,
    offset: i64,
) -> Result<(Vec<Agent>, i64)> {
    const FROM: &str = "registry_agents a LEFT JOIN registry_agent_status r ON r.agent_id = a.agent_id";
    const FILTER: &str = "($1::text IS NULL OR a.workspace = $1) AND (NOT $2 OR a.live)
         AND ($3::text IS NULL OR a.session_id = $3) AND ($4::text IS NULL OR r.status = $4)";
    let rows: Vec<(Json<Agent>, Option<String>, Option<i64>)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT a.doc, r.status, r.since FROM {FROM} WHERE {FILTER}
         ORDER BY a.last_activity_at DESC, a.agent_id LIMIT $5 OFFSET $6"
    )))
    .bind(f.workspace)
    .bind(f.live_only)
    .bind(f.session_id)
    .bind(f.reported)
    .bind(limit)
    .bind(offset)
    .fetch_all(&mut *conn)
    .await?;
    let total: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT count(*) FROM {FROM} WHERE {FILTER}"
    )))
    .bind(f.workspace)
    .bind(f.live_only)
    .bind(f.session_id)
    .bind(f.reported)
    .fetch_one(conn)
    .await?;
    let agents = rows
        .into_iter()
        .map(|(Json(a), status, at)| reported_as(a, status, at))
        .collect();
    Ok((agents, total))
}

/// `agent` with the status it last reported (followed from the event log by status.rs).
pub async fn with_reported_status(conn: &mut PgConnection, agent: Agent) -> Result<Agent> {
    let row: Option<(String, i64)> =
        sqlx::query_as("SELECT status, since FROM registry_agent_status WHERE agent_id = $1")
            .bind(&agent.agent_id)
            .fetch_optional(conn)
            .await?;
    let (status, at) = row.unzip();
    Ok(reported_as(agent, status, at))
}

fn reported_as(mut agent: Agent, status: Option<String>, at: Option<i64>) -> Agent {
    agent.reported_status = status.and_then(|s| serde_json::from_value(serde_json::Value::String(s)).ok());
    agent.reported_status_at = agent.reported_status.and(at);
    agent
}

async fn hand_over_agent(conn: &mut PgConnection, a: &Agent) -> Result<()> {
    let item = HandoffItem::Agent {
        agent: Box::new(a.clone()),
    };
    crate::handoff::store(conn, &a.session_id, &item).await
}

pub async fn save_agent(conn: &mut PgConnection, a: &Agent) -> Result<()> {
    sqlx::query("UPDATE registry_agents SET adapter_session_id = $2, doc = $3 WHERE agent_id = $1")
        .bind(&a.agent_id)
        .bind(&a.adapter_session_id)
        .bind(Json(a))
        .execute(&mut *conn)
        .await
        .map_err(|e| handle_taken(e, a))?;
    hand_over_agent(conn, a).await
}

// ---------------------------------------------------------------------------------------------
// Turns and messages

pub async fn active_turn(conn: &mut PgConnection, session_id: &str) -> Result<Option<Turn>> {
    let row: Option<Json<Turn>> =
        sqlx::query_scalar("SELECT doc FROM registry_turns WHERE session_id = $1 AND status = 'active'")
            .bind(session_id)
            .fetch_optional(conn)
            .await?;
    Ok(row.map(|Json(t)| t))
}

pub async fn find_turn(conn: &mut PgConnection, turn_id: &str) -> Result<Option<Turn>> {
    let row: Option<Json<Turn>> = sqlx::query_scalar("SELECT doc FROM registry_turns WHERE turn_id = $1")
        .bind(turn_id)
        .fetch_optional(conn)
        .await?;
    Ok(row.map(|Json(t)| t))
}

/// Inserts a new turn numbered after the session's last one (in the same statement: the session
/// is locked, so no other turn is being numbered), and sets that number on `t`.
pub async fn insert_next_turn(conn: &mut PgConnection, t: &mut Turn) -> Result<()> {
    t.turn_number = sqlx::query_scalar(
        "INSERT INTO registry_turns (turn_id, session_id, turn_number, status, doc)
         SELECT $1, $2, n, $3, jsonb_set($4, '{turnNumber}', to_jsonb(n))
         FROM (SELECT coalesce(max(turn_number), 0) + 1 AS n FROM registry_turns WHERE session_id = $2) next
         RETURNING turn_number",
    )
    .bind(&t.turn_id)
    .bind(&t.session_id)
    .bind(turn_status(t))
    .bind(Json(&*t))
    .fetch_one(conn)
    .await?;
    Ok(())
}

fn turn_status(t: &Turn) -> &'static str {
    match t.status {
        TurnStatus::Active => "active",
        TurnStatus::Completed => "completed",
        TurnStatus::Error => "error",
        TurnStatus::Cancelled => "cancelled",
    }
}

pub async fn insert_turn(conn: &mut PgConnection, t: &Turn) -> Result<()> {
    sqlx::query(
        "INSERT INTO registry_turns (turn_id, session_id, turn_number, status, doc) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(&t.turn_id)
    .bind(&t.session_id)
    .bind(t.turn_number)
    .bind(turn_status(t))
    .bind(Json(t))
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn save_turn(conn: &mut PgConnection, t: &Turn) -> Result<()> {
    sqlx::query("UPDATE registry_turns SET status = $2, doc = $3 WHERE turn_id = $1")
        .bind(&t.turn_id)
        .bind(turn_status(t))
        .bind(Json(t))
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn turns_of(conn: &mut PgConnection, session_ids: &[String]) -> Result<Vec<Turn>> {
    let rows: Vec<Json<Turn>> = sqlx::query_scalar(
        "SELECT doc FROM registry_turns WHERE session_id = ANY($1) ORDER BY session_id, turn_number",
    )
    .bind(session_ids)
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().map(|Json(t)| t).collect())
}

fn role_str(r: MessageRole) -> &'static str {
    match r {
        MessageRole::Assistant => "assistant",
        MessageRole::System => "system",
        MessageRole::User => "user",
    }
}

/// Stores the message and its targets, the n-th with the n-th of `delivery_ids` (none for an
/// imported message), in one statement.
pub async fn insert_message(conn: &mut PgConnection, m: &Message, delivery_ids: &[String]) -> Result<()> {
    let targets: Vec<&String> = m.target_agent_ids.iter().flatten().collect();
    let ids: Vec<Option<&String>> = (0..targets.len()).map(|i| delivery_ids.get(i)).collect();
    sqlx::query(
        "WITH m AS (
             INSERT INTO registry_messages (message_id, session_id, turn_id, role, content_text, created_at, doc)
             VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING message_id)
         INSERT INTO registry_message_targets (message_id, agent_id, delivery_id, turn_id)
         SELECT m.message_id, t.agent_id, t.delivery_id, $3
         FROM m, UNNEST($8::text[], $9::text[]) WITH ORDINALITY AS t(agent_id, delivery_id, n)
         ORDER BY t.n",
    )
    .bind(&m.message_id)
    .bind(&m.session_id)
    .bind(&m.turn_id)
    .bind(role_str(m.role))
    .bind(&m.content_text)
    .bind(m.timestamp)
    .bind(Json(m))
    .bind(&targets)
    .bind(&ids)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// A message's delivery ids, in target order.
pub async fn delivery_ids_of(conn: &mut PgConnection, m: &Message) -> Result<Vec<String>> {
    let ids: HashMap<String, String> = sqlx::query_as(
        "SELECT agent_id, delivery_id FROM registry_message_targets WHERE message_id = $1 AND delivery_id IS NOT NULL",
    )
    .bind(&m.message_id)
    .fetch_all(conn)
    .await?
    .into_iter()
    .collect();
    Ok(m.target_agent_ids
        .iter()
        .flatten()
        .filter_map(|a| ids.get(a).cloned())
        .collect())
}

pub async fn find_message(conn: &mut PgConnection, message_id: &str) -> Result<Option<(Message, i64)>> {
    let row: Option<(Json<Message>, i64)> =
        sqlx::query_as("SELECT doc, seq FROM registry_messages WHERE message_id = $1")
            .bind(message_id)
            .fetch_optional(conn)
            .await?;
    Ok(row.map(|(Json(m), seq)| (m, seq)))
}

/// Messages of a session in order, optionally only up to (and including) commit order `upto`.
pub async fn messages_of(conn: &mut PgConnection, session_id: &str, upto: Option<i64>) -> Result<Vec<Message>> {
    let rows: Vec<Json<Message>> = sqlx::query_scalar(
        "SELECT doc FROM registry_messages WHERE session_id = $1 AND ($2::bigint IS NULL OR seq <= $2) ORDER BY seq",
    )
    .bind(session_id)
    .bind(upto)
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().map(|Json(m)| m).collect())
}

pub async fn last_message_id(conn: &mut PgConnection, session_id: &str) -> Result<Option<String>> {
    Ok(
        sqlx::query_scalar("SELECT message_id FROM registry_messages WHERE session_id = $1 ORDER BY seq DESC LIMIT 1")
            .bind(session_id)
            .fetch_optional(conn)
            .await?,
    )
}

/// Per-agent progress on one message.
pub struct Target {
    /// The message it is a target of.
    pub message: Message,
    pub acknowledged: bool,
    pub outcome: Option<Outcome>,
    /// The message's turn (`None` only for a message stored without one).
    pub turn: Option<Turn>,
}

impl Target {
    pub fn turn(&self) -> Result<&Turn> {
        self.turn.as_ref().ok_or_else(|| RegistryError::NotFound {
            what: "turn",
            id: self.message.turn_id.clone().unwrap_or_default(),
        })
    }
}

/// A target row as [`target`] reads it.
#[derive(sqlx::FromRow)]
struct TargetRow {
    message: Json<Message>,
    acknowledged_at: Option<i64>,
    outcome: Option<TextEnum<Outcome>>,
    turn: Option<Json<Turn>>,
}

/// An agent's target row on a message, locked, read with its message and turn in one statement
/// (every receipt reads all three).
pub async fn target(conn: &mut PgConnection, message_id: &str, agent_id: &str) -> Result<Option<Target>> {
    let row: Option<TargetRow> = sqlx::query_as(
        "SELECT m.doc AS message, t.acknowledged_at, t.outcome, tr.doc AS turn
         FROM registry_message_targets t
         JOIN registry_messages m ON m.message_id = t.message_id
         LEFT JOIN registry_turns tr ON tr.turn_id = m.turn_id
         WHERE t.message_id = $1 AND t.agent_id = $2
         FOR UPDATE OF t",
    )
    .bind(message_id)
    .bind(agent_id)
    .fetch_optional(conn)
    .await?;
    Ok(row.map(|r| Target {
        message: r.message.0,
        acknowledged: r.acknowledged_at.is_some(),
        outcome: r.outcome.map(|o| o.0),
        turn: r.turn.map(|Json(t)| t),
    }))
}

pub async fn acknowledge_target(conn: &mut PgConnection, message_id: &str, agent_id: &str) -> Result<()> {
    sqlx::query("UPDATE registry_message_targets SET acknowledged_at = $3 WHERE message_id = $1 AND agent_id = $2")
        .bind(message_id)
        .bind(agent_id)
        .bind(now_ms())
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn complete_target(
    conn: &mut PgConnection,
    message_id: &str,
    agent_id: &str,
    outcome: Outcome,
    error: Option<&str>,
) -> Result<()> {
    let outcome = serde_json::to_value(outcome)
        .ok()
        .and_then(|v| v.as_str().map(String::from));
    sqlx::query(
        "UPDATE registry_message_targets SET outcome = $3, error = $4, completed_at = $5,
             acknowledged_at = coalesce(acknowledged_at, $5)
         WHERE message_id = $1 AND agent_id = $2",
    )
    .bind(message_id)
    .bind(agent_id)
    .bind(outcome)
    .bind(error)
    .bind(now_ms())
    .execute(conn)
    .await?;
    Ok(())
}

/// (is a target still pending, first error among completed ones) for every message of a turn:
/// two ranges of the targets' turn index, whatever the size of the turn.
pub async fn turn_progress(conn: &mut PgConnection, turn_id: &str) -> Result<(bool, Option<String>)> {
    let row: (bool, Option<String>) = sqlx::query_as(
        "SELECT EXISTS (SELECT 1 FROM registry_message_targets WHERE turn_id = $1 AND outcome IS NULL),
                (SELECT min(coalesce(error, 'agent ' || agent_id || ' failed')) FROM registry_message_targets
                 WHERE turn_id = $1 AND outcome = 'error')",
    )
    .bind(turn_id)
    .fetch_one(conn)
    .await?;
    Ok(row)
}

/// (message, agent) of a turn's targets with no outcome yet, in message order.
pub async fn unfinished_targets(conn: &mut PgConnection, turn_id: &str) -> Result<Vec<(String, String)>> {
    Ok(sqlx::query_as(
        "SELECT t.message_id, t.agent_id FROM registry_message_targets t JOIN registry_messages m USING (message_id)
         WHERE t.turn_id = $1 AND t.outcome IS NULL ORDER BY m.seq, t.agent_id",
    )
    .bind(turn_id)
    .fetch_all(conn)
    .await?)
}

/// Deliveries of a turn's messages not yet delivered nor finished: what a rollback cancels.
pub async fn undelivered_of_turn(conn: &mut PgConnection, turn_id: &str) -> Result<Vec<String>> {
    Ok(sqlx::query_scalar(
        "SELECT t.delivery_id FROM registry_message_targets t JOIN registry_messages m USING (message_id)
         WHERE t.turn_id = $1 AND t.outcome IS NULL AND t.acknowledged_at IS NULL AND t.delivery_id IS NOT NULL
         ORDER BY m.seq, t.agent_id",
    )
    .bind(turn_id)
    .fetch_all(conn)
    .await?)
}

/// (session, message) of the messages delivered to `agent_id` that it has not finished, in
/// message order.
pub async fn open_targets(conn: &mut PgConnection, agent_id: &str) -> Result<Vec<(String, String)>> {
    Ok(sqlx::query_as(
        "SELECT m.session_id, t.message_id FROM registry_message_targets t JOIN registry_messages m USING (message_id)
         WHERE t.agent_id = $1 AND t.acknowledged_at IS NOT NULL AND t.outcome IS NULL ORDER BY m.seq",
    )
    .bind(agent_id)
    .fetch_all(conn)
    .await?)
}

/// Agents with a message delivered before `before` (Unix ms) and not finished, at most `limit`.
pub async fn agents_with_open_targets(conn: &mut PgConnection, before: i64, limit: i64) -> Result<Vec<String>> {
    Ok(sqlx::query_scalar(
        "SELECT DISTINCT agent_id FROM registry_message_targets
         WHERE acknowledged_at IS NOT NULL AND outcome IS NULL AND acknowledged_at < $1 LIMIT $2",
    )
    .bind(before)
    .bind(limit)
    .fetch_all(conn)
    .await?)
}

/// The agents a turn's messages went to, and its messages, in order.
pub async fn turn_members(conn: &mut PgConnection, turn_id: &str) -> Result<(Vec<String>, Vec<String>)> {
    let agents: Vec<String> =
        sqlx::query_scalar("SELECT DISTINCT agent_id FROM registry_message_targets WHERE turn_id = $1 ORDER BY 1")
            .bind(turn_id)
            .fetch_all(&mut *conn)
            .await?;
    let messages: Vec<String> =
        sqlx::query_scalar("SELECT message_id FROM registry_messages WHERE turn_id = $1 ORDER BY seq")
            .bind(turn_id)
            .fetch_all(&mut *conn)
            .await?;
    Ok((agents, messages))
}

// ---------------------------------------------------------------------------------------------
// Events

pub async fn events_of(conn: &mut PgConnection, session_ids: &[String]) -> Result<Vec<SessionEvent>> {
    let rows: Vec<(String, String, i64, String, serde_json::Value, i64)> = sqlx::query_as(
        "SELECT event_id, session_id, ts, type, payload, seq FROM registry_events WHERE session_id = ANY($1) ORDER BY seq",
    )
    .bind(session_ids)
    .fetch_all(conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(
            |(event_id, session_id, timestamp, event_type, payload, seq)| SessionEvent {
                event_id,
                session_id,
                timestamp,
                event_type,
                payload,
                seq: Some(seq),
            },
        )
        .collect())
}

/// Locks a session's stored events against the forwarders; returns how many are not forwarded.
pub async fn lock_session_events(conn: &mut PgConnection, session_id: &str) -> Result<i64> {
    let mut rows: Vec<bool> =
        sqlx::query_scalar("SELECT forwarded FROM registry_events WHERE session_id = $1 FOR UPDATE")
            .bind(session_id)
            .fetch_all(&mut *conn)
            .await?;
    let seed: Vec<bool> =
        sqlx::query_scalar("SELECT forwarded FROM registry_seed_events WHERE session_id = $1 FOR UPDATE")
            .bind(session_id)
            .fetch_all(conn)
            .await?;
    rows.extend(seed);
    Ok(rows.iter().filter(|f| !**f).count() as i64)
}

pub async fn count_session_events(conn: &mut PgConnection, session_id: &str) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "SELECT (SELECT count(*) FROM registry_events WHERE session_id = $1)
              + (SELECT count(*) FROM registry_seed_events WHERE session_id = $1)",
    )
    .bind(session_id)
    .fetch_one(conn)
    .await?)
}

/// Deletes a session's data and events but keeps its row as a `purged` tombstone.
pub async fn purge(conn: &mut PgConnection, session_id: &str) -> Result<()> {
    for table in [
        "registry_messages",
        "registry_turns",
        "registry_agents",
        "registry_usage",
    ] {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "DELETE FROM {table} WHERE session_id = $1"
        )))
        .bind(session_id)
        .execute(&mut *conn)
        .await?;
    }
    sqlx::query("DELETE FROM registry_events WHERE session_id = $1")
        .bind(session_id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("DELETE FROM registry_seed_events WHERE session_id = $1")
        .bind(session_id)
        .execute(&mut *conn)
        .await?;
    sqlx::query(
        "UPDATE registry_sessions SET status = 'purged', doc = NULL, adapter_session_id = NULL WHERE session_id = $1",
    )
    .bind(session_id)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Removes a session row and everything under it (snapshot import with `overwrite`). Its
/// events stay: they are history, and the outbox may not have forwarded them yet.
pub async fn delete_session(conn: &mut PgConnection, session_id: &str) -> Result<()> {
    sqlx::query("DELETE FROM registry_sessions WHERE session_id = $1")
        .bind(session_id)
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn upsert_usage(conn: &mut PgConnection, u: &UsageRequest) -> Result<()> {
    sqlx::query(
        "INSERT INTO registry_usage (session_id, adapter_count, total_calls, total_input_tokens, total_output_tokens, total_tokens, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (session_id) DO UPDATE SET adapter_count = $2, total_calls = $3, total_input_tokens = $4,
             total_output_tokens = $5, total_tokens = $6, updated_at = $7",
    )
    .bind(&u.session_id)
    .bind(u.adapter_count)
    .bind(u.total_calls)
    .bind(u.total_input_tokens)
    .bind(u.total_output_tokens)
    .bind(u.total_tokens)
    .bind(now_ms())
    .execute(conn)
    .await?;
    Ok(())
}

/// Tenancy is hosted here: its handlers get the registry's pool, and ask it whether a
/// workspace still has live agents before deleting it.
impl relay_tenancy::Host for Registry {
    fn tenancy(&self) -> &relay_tenancy::Tenancy {
        &self.tenancy
    }

    async fn live_agents(&self, conn: &mut PgConnection, workspace: &str) -> std::result::Result<i64, sqlx::Error> {
        sqlx::query_scalar("SELECT count(*) FROM registry_agents WHERE workspace = $1 AND live")
            .bind(workspace)
            .fetch_one(conn)
            .await
    }
}

/// Personas and profiles are hosted here, on the registry's pool.
impl relay_prompts::Host for Registry {
    fn prompts_db(&self) -> &sqlx::PgPool {
        &self.db
    }
}
