//! Fires due schedules. A run locks its schedule's row (`FOR UPDATE SKIP LOCKED`, so another
//! replica passes it by), makes the call as the schedule's creator, and in the same
//! transaction records the run under its due time and moves the schedule on. A replica killed
//! mid-call rolls all of it back; the next one makes the call again with the same ids (the
//! message id, the idempotency key, the session id are derived from the schedule and the due
//! time), so the mesh sees the run once.
//!
//! A call that fails transiently (`unavailable`, `timeout`: a service restarting, NATS or
//! Postgres back in a moment) is tried again every `retry_ms` under the same due time, for up
//! to `retry_for_ms`; any other failure, or one that lasts longer, is recorded as a failed run.
//! A paused schedule starts no run, but one being retried is finished: its call may already
//! have reached the mesh, and the run is recorded either way.
//!
//! Missed runs: a cron schedule whose times passed while the mesh was down fires once for the
//! latest of them when it is back, then goes on from the next time after now; a one-time
//! schedule whose time passed fires once when the mesh is back.

use crate::Automation;
use crate::error::Result;
use crate::schedules::{next_after, parse_cron, parse_zone};
use relay_contracts::automation::ScheduleAction;
use relay_contracts::automation::events::ScheduleFired;
use relay_contracts::hosts::SpawnRequest;
use relay_contracts::messaging::SendRequest;
use relay_contracts::session::{AgentTargets, CreateRequest, DeliveryRequest, SendMessageRequest};
use relay_contracts::{Caller, ErrorCode, RequestContext, WireError, rpc};
use serde_json::{Value, json};
use sqlx::types::Json;
use std::time::Duration;

pub async fn run(a: Automation) {
    relay_bus::outbox::repeat(
        &a.fire,
        "cannot fire schedules yet",
        || fire_one(&a),
        || until_next_due(&a),
    )
    .await
}

/// How long until the earliest active schedule is due, at most the poll interval.
async fn until_next_due(a: &Automation) -> Duration {
    let next: Option<i64> = sqlx::query_scalar(
        "SELECT min(next_run_at) FROM schedules WHERE status = 'active' OR retry_due_at IS NOT NULL",
    )
    .fetch_one(&a.db)
    .await
    .unwrap_or(None);
    crate::wait_until(next, a.schedules.poll_interval_ms)
}

type Due = (
    String,
    String,
    Option<String>,
    String,
    Json<ScheduleAction>,
    i64,
    Option<i64>,
    String,
);

/// Fires the most overdue schedule, if one is due; whether one was.
async fn fire_one(a: &Automation) -> Result<bool> {
    let mut tx = a.db.begin().await?;
    let due: Option<Due> = sqlx::query_as(
        "SELECT schedule_id, workspace, cron, time_zone, action, next_run_at, retry_due_at, created_by FROM schedules
         WHERE (status = 'active' OR retry_due_at IS NOT NULL) AND next_run_at <= $1
         ORDER BY next_run_at LIMIT 1 FOR UPDATE SKIP LOCKED",
    )
    .bind(relay_bus::now_ms())
    .fetch_optional(&mut *tx)
    .await?;
    let Some((id, workspace, cron, zone, Json(action), next_run_at, retry_due_at, created_by)) = due else {
        return Ok(false);
    };
    let due_at = retry_due_at.unwrap_or(next_run_at);
    let as_creator = RequestContext::new(Caller::parse(&created_by), workspace.clone());
    let timeout = Duration::from_millis(a.schedules.call_timeout_ms);
    let done = match crate::creator::stands(a, &created_by).await {
        Ok(()) => relay_bus::context::act_as(as_creator, act(a, &id, due_at, &action, timeout)).await,
        Err(e) => Err(e),
    };
    let fired_at = relay_bus::now_ms();
    let revoked = matches!(&done, Err(e) if e.code() == ErrorCode::Unauthorized);
    // A service restarting: the same run (same due time, same ids) is tried again shortly.
    if let Err(e) = &done
        && e.error.retryable
        && fired_at < due_at + a.schedules.retry_for_ms
    {
        sqlx::query("UPDATE schedules SET retry_due_at = $2, next_run_at = $3 WHERE schedule_id = $1")
            .bind(&id)
            .bind(due_at)
            .bind(fired_at + a.schedules.retry_ms)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        tracing::info!(schedule_id = %id, due_at, error = %e, "schedule run failed for now; trying again");
        return Ok(true);
    }
    let (ok, result) = match done {
        Ok(v) => (true, v),
        Err(e) => (false, json!({ "error": e })),
    };
    sqlx::query(
        "INSERT INTO schedule_runs (schedule_id, due_at, fired_at, ok, result) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (schedule_id, due_at) DO NOTHING",
    )
    .bind(&id)
    .bind(due_at)
    .bind(fired_at)
    .bind(ok)
    .bind(&result)
    .execute(&mut *tx)
    .await?;
    // The next time after now, not after the due time: missed runs are made up once.
    let next = match &cron {
        Some(expr) => next_after(&parse_cron(expr)?, parse_zone(&zone)?, fired_at.max(due_at)),
        None => None,
    };
    sqlx::query(
        "UPDATE schedules SET runs = runs + 1, next_run_at = $2, retry_due_at = NULL,
             status = CASE WHEN $2 IS NULL THEN 'done' ELSE status END, updated_at = $3
         WHERE schedule_id = $1",
    )
    .bind(&id)
    .bind(next)
    .bind(fired_at)
    .execute(&mut *tx)
    .await?;
    // Its creator's key was revoked: what the key started stops with it.
    if revoked {
        sqlx::query("UPDATE schedules SET status = 'paused' WHERE schedule_id = $1 AND status = 'active'")
            .bind(&id)
            .execute(&mut *tx)
            .await?;
        tracing::warn!(schedule_id = %id, created_by, "schedule paused: the key that created it was revoked");
    }
    let stream = match &action {
        ScheduleAction::SendMessage { session_id, .. } => session_id.clone(),
        _ => format!("schedule:{id}"),
    };
    let fired = ScheduleFired {
        schedule_id: id.clone(),
        due_at,
        ok,
        result,
        next_run_at: next,
    };
    crate::OUTBOX.write(&mut tx, &workspace, &stream, &fired).await?;
    let result = fired.result;
    tx.commit().await?;
    // A run acts for the schedule's creator: the audit trail says so, as for a call they made.
    let as_creator = RequestContext::new(Caller::parse(&created_by), workspace.clone());
    let detail = json!({ "dueAt": due_at, "ok": ok });
    relay_bus::audit::record(&a.nats, &workspace, &as_creator, "schedule.run", &id, Some(detail));
    a.outbox.notify_one();
    if ok {
        tracing::info!(schedule_id = %id, due_at, late_ms = fired_at - due_at, ?next, "schedule fired");
    } else {
        tracing::warn!(schedule_id = %id, due_at, %result, "schedule run failed");
    }
    Ok(true)
}

/// The run's call; its reply (ids) as JSON.
async fn act(
    a: &Automation,
    id: &str,
    due_at: i64,
    action: &ScheduleAction,
    timeout: Duration,
) -> std::result::Result<Value, WireError> {
    // The same for a run made again after a crash, so the mesh takes it once.
    let run_key = format!("{id}-{due_at}");
    match action {
        ScheduleAction::SendMessage {
            session_id,
            text,
            mode,
            agent_ids,
            on_busy,
            priority,
            deadline,
        } => {
            let mut req = SendMessageRequest::text(session_id.clone(), text.clone());
            req.message_id = Some(run_key);
            req.delivery = mode.map(|mode| DeliveryRequest { mode });
            req.agent_ids = agent_ids.clone().map(AgentTargets::Ids);
            req.delivery_mode = on_busy.clone();
            req.priority = *priority;
            req.deadline = deadline.clone();
            let sent = relay_bus::client::call::<rpc::SessionSendMessage>(&a.nats, &req, timeout).await?;
            Ok(json!({ "messageId": sent.message_id, "sessionId": sent.session_id, "turnId": sent.turn_id }))
        }
        ScheduleAction::Message { to, text, mode } => {
            let req = SendRequest {
                to: Some(to.clone()),
                text: text.clone(),
                delivery_mode: *mode,
                idempotency_key: Some(run_key),
                ..Default::default()
            };
            let sent = relay_bus::client::call::<rpc::MessageSend>(&a.nats, &req, timeout).await?;
            Ok(serde_json::to_value(sent).unwrap_or(Value::Null))
        }
        ScheduleAction::Spawn {
            cli,
            task,
            agent,
            title,
            cwd,
        } => {
            let create = CreateRequest {
                session_id: Some(run_key.clone()),
                title: title.clone(),
                target_working_directory: cwd.clone(),
                ..Default::default()
            };
            match relay_bus::client::call::<rpc::SessionCreate>(&a.nats, &create, timeout).await {
                Ok(_) => {}
                // Made by this run before a crash: the spawn is not repeated (at most once).
                Err(e) if e.code() == ErrorCode::Conflict => {
                    return Ok(
                        json!({ "sessionId": run_key, "note": "the session existed already; not spawned again" }),
                    );
                }
                Err(e) => return Err(e),
            }
            let spawn = SpawnRequest {
                session_id: run_key.clone(),
                agent_name: agent.clone(),
                cli: cli.clone(),
                task: Some(task.clone()),
                cwd: cwd.clone(),
                placement: None,
            };
            let spawned = relay_bus::client::call::<rpc::AgentSpawn>(&a.nats, &spawn, timeout).await?;
            Ok(json!({ "sessionId": run_key, "agentId": spawned.agent_id }))
        }
    }
}
