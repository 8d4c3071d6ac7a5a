//! What the registry hands over (`delivery.handoff`): stored messages with their deliveries,
//! and agents as they change. The runner keeps its own copy of both (`delivery_messages`,
//! `delivery_agents.doc`), so it never reads the registry's tables. Applying an entry again
//! changes nothing: a delivery id is created once, and an agent entry older than the one
//! applied (`synced_seq`) is ignored.

use crate::error::Result;
use crate::{DeliveryError, Runner};
use relay_bus::RequestContext;
use relay_contracts::capabilities::DeliveryMode;
use relay_contracts::delivery::*;
use relay_contracts::session::Message;
use relay_contracts::workspace::DeliveryPolicy;
use sqlx::PgConnection;
use sqlx::types::Json;
use std::collections::{BTreeSet, HashMap, HashSet};

pub async fn handoff(runner: Runner, _ctx: RequestContext, req: HandoffRequest) -> Result<HandoffResponse> {
    let mut tx = runner.db.begin().await?;
    let now = relay_bus::now_ms();
    let mut agents = BTreeSet::new();
    let sessions: Vec<&str> = req.entries.iter().map(|e| session_of(&e.item)).collect();
    let purged: HashMap<String, i64> =
        sqlx::query_as("SELECT session_id, through_seq FROM delivery_purges WHERE session_id = ANY($1)")
            .bind(&sessions)
            .fetch_all(&mut *tx)
            .await?
            .into_iter()
            .collect();
    let mut batch = Batch::default();
    for entry in req.entries {
        if purged
            .get(session_of(&entry.item))
            .is_some_and(|through| entry.seq <= *through)
        {
            continue;
        }
        match entry.item {
            HandoffItem::Agent { agent } => {
                sqlx::query(
                    "INSERT INTO delivery_agents (agent_id, doc, synced_seq, updated_at) VALUES ($1, $2, $3, $4)
                     ON CONFLICT (agent_id) DO UPDATE SET doc = EXCLUDED.doc, synced_seq = EXCLUDED.synced_seq
                     WHERE delivery_agents.synced_seq < EXCLUDED.synced_seq",
                )
                .bind(&agent.agent_id)
                .bind(Json(&agent))
                .bind(entry.seq)
                .bind(now)
                .execute(&mut *tx)
                .await?;
                // A released agent's waiting deliveries go to the walk, which fails them.
                agents.insert(agent.agent_id);
            }
            HandoffItem::Message {
                message,
                deliveries,
                traceparent,
                workspace,
                policy,
            } => batch.messages.push(Handed {
                workspace: workspace.unwrap_or_else(|| relay_contracts::context::DEFAULT_WORKSPACE.to_string()),
                message: *message,
                deliveries,
                traceparent,
                policy,
            }),
        }
    }
    let created = batch.store(&mut tx).await?;
    agents.extend(created.iter().map(|(e, _)| e.agent_id.clone()));
    let agents: Vec<String> = agents.into_iter().collect();
    crate::store::wake_agents(&mut *tx, &agents).await?;
    tx.commit().await?;
    crate::settle::publish(&runner.nats, &runner.forward_wake, &created).await;
    Ok(HandoffResponse {
        created: created.len() as i64,
    })
}

/// A message handed over with its deliveries.
struct Handed {
    message: Message,
    deliveries: Vec<NewDelivery>,
    traceparent: Option<String>,
    workspace: String,
    policy: Option<DeliveryPolicy>,
}

/// One delivery of a hand-off, with what it takes from its message.
struct Row<'a> {
    h: &'a Handed,
    d: &'a NewDelivery,
    mode: DeliveryMode,
    priority: i16,
    deadline: Option<i64>,
}

/// The messages of one hand-off, stored with one statement per table (a hand-off carries
/// whatever sends committed meanwhile, so this is what keeps the runner's share of a send
/// small under load).
#[derive(Default)]
struct Batch {
    messages: Vec<Handed>,
}

impl Batch {
    /// Stores the messages and their new deliveries, in hand-off order, each with its
    /// `delivery.created` event; returns those events. A delivery stored before is left alone.
    async fn store(self, tx: &mut PgConnection) -> Result<Vec<crate::settle::Traced>> {
        if self.messages.is_empty() {
            return Ok(Vec::new());
        }
        let ms = &self.messages;
        sqlx::query(
            "INSERT INTO delivery_messages (message_id, session_id, doc, created_at, workspace)
             SELECT i, s, d::jsonb, c, w FROM UNNEST($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[])
                 WITH ORDINALITY AS u(i, s, d, c, w, n)
             ORDER BY n
             ON CONFLICT (message_id) DO NOTHING",
        )
        .bind(ms.iter().map(|h| h.message.message_id.as_str()).collect::<Vec<_>>())
        .bind(ms.iter().map(|h| h.message.session_id.as_str()).collect::<Vec<_>>())
        .bind(ms.iter().map(|h| encode(&h.message)).collect::<Result<Vec<_>>>()?)
        .bind(ms.iter().map(|h| h.message.timestamp).collect::<Vec<_>>())
        .bind(ms.iter().map(|h| h.workspace.as_str()).collect::<Vec<_>>())
        .execute(&mut *tx)
        .await?;

        // One row per delivery, in hand-off order (seq is each agent's queue order); an entry
        // repeated within the hand-off once.
        let mut seen = HashSet::new();
        let rows: Vec<Row> = ms
            .iter()
            .flat_map(|h| {
                let mode = h.message.delivery_mode.unwrap_or(DeliveryMode::Immediate);
                let (priority, deadline) = urgency(&h.message);
                h.deliveries.iter().map(move |d| Row {
                    h,
                    d,
                    mode,
                    priority,
                    deadline,
                })
            })
            .filter(|r| seen.insert(r.d.delivery_id.as_str()))
            .collect();
        let refusals = refusals(tx, &rows).await?;
        let col = |f: fn(&Row) -> Option<String>| rows.iter().map(f).collect::<Vec<_>>();
        let inserted: HashSet<String> = sqlx::query_scalar(
            "INSERT INTO deliveries (delivery_id, message_id, session_id, agent_id, mode, status, available_at,
                                     created_at, updated_at, traceparent, workspace, priority, deadline, refusal)
             SELECT d, m, s, a, mo, 'pending', t, t, t, tp, w, p, dl, r
             FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[],
                         $8::text[], $9::smallint[], $10::bigint[], $11::text[])
                 WITH ORDINALITY AS u(d, m, s, a, mo, t, tp, w, p, dl, r, n)
             ORDER BY n
             ON CONFLICT (delivery_id) DO NOTHING
             RETURNING delivery_id",
        )
        .bind(col(|r| Some(r.d.delivery_id.clone())))
        .bind(col(|r| Some(r.h.message.message_id.clone())))
        .bind(col(|r| Some(r.h.message.session_id.clone())))
        .bind(col(|r| Some(r.d.agent_id.clone())))
        .bind(col(|r| Some(r.mode.as_str().to_string())))
        .bind(rows.iter().map(|r| r.h.message.timestamp).collect::<Vec<_>>())
        .bind(col(|r| r.h.traceparent.clone()))
        .bind(col(|r| Some(r.h.workspace.clone())))
        .bind(rows.iter().map(|r| r.priority).collect::<Vec<_>>())
        .bind(rows.iter().map(|r| r.deadline).collect::<Vec<_>>())
        .bind(
            rows.iter()
                .map(|r| refusals.get(&r.d.delivery_id).cloned())
                .collect::<Vec<_>>(),
        )
        .fetch_all(&mut *tx)
        .await?
        .into_iter()
        .collect();

        let created: Vec<(&Handed, DeliveryEvent)> = rows
            .iter()
            .filter(|r| inserted.contains(&r.d.delivery_id))
            .map(|r| {
                let event = DeliveryEvent {
                    event_type: "delivery.created".into(),
                    delivery_id: r.d.delivery_id.clone(),
                    message_id: r.h.message.message_id.clone(),
                    session_id: r.h.message.session_id.clone(),
                    agent_id: r.d.agent_id.clone(),
                    mode: r.mode,
                    attempt: 0,
                    available_at: None,
                    reason: None,
                    retryable: None,
                };
                (r.h, event)
            })
            .collect();
        if !created.is_empty() {
            sqlx::query(
                "INSERT INTO delivery_events (event_id, session_id, type, ts, payload, traceparent, workspace)
                 SELECT i, s, 'delivery.created', t, p::jsonb, tp, w
                 FROM UNNEST($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[])
                     WITH ORDINALITY AS u(i, s, t, p, tp, w, n)
                 ORDER BY n",
            )
            .bind(
                created
                    .iter()
                    .map(|_| uuid::Uuid::now_v7().to_string())
                    .collect::<Vec<_>>(),
            )
            .bind(
                created
                    .iter()
                    .map(|(h, _)| h.message.session_id.as_str())
                    .collect::<Vec<_>>(),
            )
            .bind(created.iter().map(|(h, _)| h.message.timestamp).collect::<Vec<_>>())
            .bind(created.iter().map(|(_, e)| encode(e)).collect::<Result<Vec<_>>>()?)
            .bind(
                created
                    .iter()
                    .map(|(h, _)| h.traceparent.as_deref())
                    .collect::<Vec<_>>(),
            )
            .bind(created.iter().map(|(h, _)| h.workspace.as_str()).collect::<Vec<_>>())
            .execute(&mut *tx)
            .await?;
        }
        Ok(created.into_iter().map(|(h, e)| (e, h.traceparent.clone())).collect())
    }
}

/// Why each new delivery of `rows` under a workspace policy is refused (its agent's queue is
/// full, counting the deliveries ahead of it in the hand-off), by delivery id.
async fn refusals(tx: &mut PgConnection, rows: &[Row<'_>]) -> Result<HashMap<String, String>> {
    let ruled: Vec<(&Row, &DeliveryPolicy)> = rows
        .iter()
        .filter_map(|r| r.h.policy.as_ref().map(|p| (r, p)))
        .collect();
    if ruled.is_empty() {
        return Ok(HashMap::new());
    }
    let ids: Vec<&str> = ruled.iter().map(|(r, _)| r.d.delivery_id.as_str()).collect();
    let agent_ids: Vec<&str> = ruled.iter().map(|(r, _)| r.d.agent_id.as_str()).collect();
    // A delivery stored before (a repeated hand-off) is counted once, from the table.
    let stored: HashSet<String> = sqlx::query_scalar("SELECT delivery_id FROM deliveries WHERE delivery_id = ANY($1)")
        .bind(&ids)
        .fetch_all(&mut *tx)
        .await?
        .into_iter()
        .collect();
    let mut pending: HashMap<String, i64> = sqlx::query_as(
        "SELECT agent_id, count(*) FROM deliveries
         WHERE agent_id = ANY($1) AND status IN ('pending', 'deferred') AND refusal IS NULL
         GROUP BY agent_id",
    )
    .bind(&agent_ids)
    .fetch_all(&mut *tx)
    .await?
    .into_iter()
    .collect();
    let mut refused = HashMap::new();
    for (r, policy) in ruled {
        if stored.contains(&r.d.delivery_id) {
            continue;
        }
        let waiting = pending.entry(r.d.agent_id.clone()).or_default();
        match policy.refusal(&r.h.workspace, r.mode, *waiting) {
            Some(reason) => {
                refused.insert(r.d.delivery_id.clone(), reason);
            }
            None => *waiting += 1,
        }
    }
    Ok(refused)
}

fn encode<T: serde::Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|e| DeliveryError::Invalid(e.to_string()))
}

fn session_of(item: &HandoffItem) -> &str {
    match item {
        HandoffItem::Message { message, .. } => &message.session_id,
        HandoffItem::Agent { agent } => &agent.session_id,
    }
}

/// Deletes a purged session's deliveries, the messages they carried and its agents, and
/// remembers the purge so a hand-off entry of the session still on its way is ignored.
pub async fn purge(
    runner: Runner,
    _ctx: RequestContext,
    req: PurgeDeliveriesRequest,
) -> Result<PurgeDeliveriesResponse> {
    let mut tx = runner.db.begin().await?;
    sqlx::query(
        "INSERT INTO delivery_purges (session_id, through_seq) VALUES ($1, $2)
         ON CONFLICT (session_id) DO UPDATE SET through_seq = GREATEST(delivery_purges.through_seq, EXCLUDED.through_seq)",
    )
    .bind(&req.session_id)
    .bind(req.through_seq)
    .execute(&mut *tx)
    .await?;
    let deleted = sqlx::query("DELETE FROM deliveries WHERE session_id = $1")
        .bind(&req.session_id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    sqlx::query("DELETE FROM delivery_messages WHERE session_id = $1")
        .bind(&req.session_id)
        .execute(&mut *tx)
        .await?;
    sqlx::query("DELETE FROM delivery_agents WHERE doc->>'sessionId' = $1")
        .bind(&req.session_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(PurgeDeliveriesResponse {
        deliveries_deleted: deleted as i64,
    })
}

/// A message's place in its agents' queues and its deadline (Unix ms): from the relay message
/// that brought it, else from the send (seed 001 `MessageContext.priority` / `deadline`).
fn urgency(message: &relay_contracts::session::Message) -> (i16, Option<i64>) {
    let relay = message.relay.as_ref();
    let priority = relay.and_then(|r| r.priority).or(message.priority);
    let deadline = relay
        .and_then(|r| r.deadline.as_deref())
        .or(message.deadline.as_deref());
    let deadline = deadline
        .and_then(|d| chrono::DateTime::parse_from_rfc3339(d).ok())
        .map(|t| t.timestamp_millis());
    (priority.map_or(1, relay_contracts::messaging::Priority::rank), deadline)
}
