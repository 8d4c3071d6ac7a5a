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
use sqlx::types::Json;
use std::collections::BTreeSet;

pub async fn handoff(runner: Runner, _ctx: RequestContext, req: HandoffRequest) -> Result<HandoffResponse> {
    let mut tx = runner.db.begin().await?;
    let now = relay_bus::now_ms();
    let mut created = Vec::new();
    let mut agents = BTreeSet::new();
    let sessions: Vec<&str> = req.entries.iter().map(|e| session_of(&e.item)).collect();
    let purged: std::collections::HashMap<String, i64> =
        sqlx::query_as("SELECT session_id, through_seq FROM delivery_purges WHERE session_id = ANY($1)")
            .bind(&sessions)
            .fetch_all(&mut *tx)
            .await?
            .into_iter()
            .collect();
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
            } => {
                let workspace = workspace.unwrap_or_else(|| relay_contracts::context::DEFAULT_WORKSPACE.to_string());
                sqlx::query(
                    "INSERT INTO delivery_messages (message_id, session_id, doc, created_at, workspace) VALUES ($1, $2, $3, $4, $5)
                     ON CONFLICT (message_id) DO NOTHING",
                )
                .bind(&message.message_id)
                .bind(&message.session_id)
                .bind(Json(&message))
                .bind(message.timestamp)
                .bind(&workspace)
                .execute(&mut *tx)
                .await?;
                let mode = message.delivery_mode.unwrap_or(DeliveryMode::Immediate);
                let (priority, deadline) = urgency(&message);
                for d in deliveries {
                    // The workspace's policy, applied before delivery: a refused delivery fails
                    // with the reason when its turn comes.
                    let refusal = match &policy {
                        Some(p) => {
                            let pending: i64 = sqlx::query_scalar(
                                "SELECT count(*) FROM deliveries WHERE agent_id = $1
                                 AND status IN ('pending', 'deferred') AND refusal IS NULL",
                            )
                            .bind(&d.agent_id)
                            .fetch_one(&mut *tx)
                            .await?;
                            p.refusal(&workspace, mode, pending)
                        }
                        None => None,
                    };
                    let inserted = sqlx::query(
                        "INSERT INTO deliveries (delivery_id, message_id, session_id, agent_id, mode, status, available_at, created_at, updated_at, traceparent, workspace, priority, deadline, refusal)
                         VALUES ($1, $2, $3, $4, $5, 'pending', $6, $6, $6, $7, $8, $9, $10, $11) ON CONFLICT (delivery_id) DO NOTHING",
                    )
                    .bind(&d.delivery_id)
                    .bind(&message.message_id)
                    .bind(&message.session_id)
                    .bind(&d.agent_id)
                    .bind(mode.as_str())
                    .bind(message.timestamp)
                    .bind(&traceparent)
                    .bind(&workspace)
                    .bind(priority)
                    .bind(deadline)
                    .bind(&refusal)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                    if inserted == 0 {
                        continue;
                    }
                    let event = DeliveryEvent {
                        event_type: "delivery.created".into(),
                        delivery_id: d.delivery_id,
                        message_id: message.message_id.clone(),
                        session_id: message.session_id.clone(),
                        agent_id: d.agent_id.clone(),
                        mode,
                        attempt: 0,
                        available_at: None,
                        reason: None,
                        retryable: None,
                    };
                    let payload = serde_json::to_value(&event).map_err(|e| DeliveryError::Invalid(e.to_string()))?;
                    sqlx::query(
                        "INSERT INTO delivery_events (event_id, session_id, type, ts, payload, traceparent, workspace)
                         VALUES ($1, $2, $3, $4, $5, $6, $7)",
                    )
                    .bind(uuid::Uuid::now_v7().to_string())
                    .bind(&message.session_id)
                    .bind(&event.event_type)
                    .bind(message.timestamp)
                    .bind(payload)
                    .bind(&traceparent)
                    .bind(&workspace)
                    .execute(&mut *tx)
                    .await?;
                    agents.insert(d.agent_id);
                    created.push(event);
                }
            }
        }
    }
    let agents: Vec<String> = agents.into_iter().collect();
    crate::store::wake_agents(&mut *tx, &agents).await?;
    tx.commit().await?;
    crate::settle::publish(&runner.nats, &runner.forward_wake, &created).await;
    Ok(HandoffResponse {
        created: created.len() as i64,
    })
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
    (priority.map_or(1, |p| p.rank()), deadline)
}
