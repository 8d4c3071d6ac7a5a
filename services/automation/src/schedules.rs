//! `schedule.*`: a workspace's schedules. A schedule runs as the caller that created it, in its
//! workspace; every query names the caller's workspace, so another's is `not_found`.

use crate::error::{AutomationError, Result};
use crate::{Automation, check_id, new_id};
use chrono::{TimeZone, Utc};
use chrono_tz::Tz;
use croner::Cron;
use croner::parser::{CronParser, Seconds};
use relay_contracts::RequestContext;
use relay_contracts::automation::*;
use relay_contracts::messaging::To;
use sqlx::types::Json;

const COLUMNS: &str = "s.schedule_id, s.name, s.cron, s.time_zone, s.run_at, s.action, s.status, s.next_run_at,
    s.runs::bigint, s.created_by, s.created_at, s.updated_at,
    r.due_at, r.fired_at, r.ok, r.result";

type Row = (
    String,
    Option<String>,
    Option<String>,
    String,
    Option<i64>,
    Json<ScheduleAction>,
    String,
    Option<i64>,
    i64,
    String,
    i64,
    i64,
    Option<i64>,
    Option<i64>,
    Option<bool>,
    Option<serde_json::Value>,
);

/// The schedule with its last run.
const FROM: &str = "schedules s LEFT JOIN LATERAL (SELECT due_at, fired_at, ok, result FROM schedule_runs r
    WHERE r.schedule_id = s.schedule_id ORDER BY due_at DESC LIMIT 1) r ON true";

fn from_row(r: Row) -> Schedule {
    let status = match r.6.as_str() {
        "paused" => ScheduleStatus::Paused,
        "done" => ScheduleStatus::Done,
        _ => ScheduleStatus::Active,
    };
    let last_run = match (r.12, r.13, r.14, r.15) {
        (Some(due_at), Some(fired_at), Some(ok), Some(result)) => Some(ScheduleRun {
            due_at,
            fired_at,
            ok,
            result,
        }),
        _ => None,
    };
    Schedule {
        schedule_id: r.0,
        name: r.1,
        cron: r.2,
        time_zone: r.3,
        at: r.4,
        action: r.5.0,
        status,
        next_run_at: (status == ScheduleStatus::Active).then_some(r.7).flatten(),
        runs: r.8,
        last_run,
        created_by: r.9,
        created_at: r.10,
        updated_at: r.11,
    }
}

/// A cron expression as this service reads it: 5 fields, 6 with seconds first, or `@daily`.
pub fn parse_cron(expr: &str) -> Result<Cron> {
    CronParser::builder()
        .seconds(Seconds::Optional)
        .build()
        .parse(expr)
        .map_err(|e| AutomationError::Invalid(format!("cron {expr:?}: {e}")))
}

pub fn parse_zone(zone: &str) -> Result<Tz> {
    zone.parse::<Tz>().map_err(|_| {
        AutomationError::Invalid(format!(
            "timeZone {zone:?} is not an IANA time zone (e.g. Europe/Berlin)"
        ))
    })
}

/// The first time after `after_ms` that `cron` matches in `zone`.
pub fn next_after(cron: &Cron, zone: Tz, after_ms: i64) -> Option<i64> {
    let after = zone.from_utc_datetime(&Utc.timestamp_millis_opt(after_ms).single()?.naive_utc());
    cron.find_next_occurrence(&after, false)
        .ok()
        .map(|t| t.timestamp_millis())
}

fn check_text(field: &str, text: &str, most: usize) -> Result<()> {
    if text.trim().is_empty() || text.chars().count() > most || text.contains('\0') {
        return Err(AutomationError::Invalid(format!(
            "{field}: 1 to {most} characters, not blank, without NUL"
        )));
    }
    Ok(())
}

fn check_action(action: &ScheduleAction) -> Result<()> {
    match action {
        ScheduleAction::SendMessage {
            session_id,
            text,
            agent_ids,
            on_busy,
            deadline,
            ..
        } => {
            check_text("action.sessionId", session_id, 256)?;
            if agent_ids.as_ref().is_some_and(|ids| ids.len() > 100) {
                return Err(AutomationError::Invalid("action.agentIds: at most 100".into()));
            }
            if let Some(d) = deadline
                && !relay_contracts::messaging::is_rfc3339(d)
            {
                return Err(AutomationError::Invalid(format!(
                    "action.deadline {d:?} is not an RFC 3339 date-time"
                )));
            }
            if on_busy
                .as_deref()
                .is_some_and(|b| !["enqueue", "reject", "interrupt", "rollback"].contains(&b))
            {
                return Err(AutomationError::Invalid(
                    "action.onBusy: enqueue, reject, interrupt or rollback".into(),
                ));
            }
            check_text("action.text", text, 100_000)
        }
        ScheduleAction::Message { to, text, .. } => {
            let empty = match to {
                To::One(t) => t.trim().is_empty(),
                To::Many(l) => l.is_empty(),
            };
            if empty {
                return Err(AutomationError::Invalid(
                    "action.to: @handle, #channel or a list of handles".into(),
                ));
            }
            check_text("action.text", text, 32_000)
        }
        ScheduleAction::Spawn { cli, task, .. } => {
            let ok = !cli.is_empty()
                && cli.len() <= 64
                && cli
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
            if !ok {
                return Err(AutomationError::Invalid(
                    "action.cli: an agent name the spawners know (lowercase letters, digits, - and _)".into(),
                ));
            }
            check_text("action.task", task, 100_000)
        }
    }
}

/// `not_found` for a session the caller cannot see (another workspace's, or none): a schedule
/// acts as its creator, so it may name only what its creator may.
async fn sees_session(a: &Automation, ctx: &RequestContext, session_id: &str) -> Result<()> {
    let req = relay_contracts::session::SessionRef {
        session_id: session_id.to_string(),
    };
    let got = relay_bus::context::act_as(
        ctx.clone(),
        relay_bus::client::call::<relay_contracts::rpc::SessionGet>(&a.nats, &req, std::time::Duration::from_secs(5)),
    )
    .await
    .map_err(AutomationError::Upstream)?;
    match got.session {
        Some(_) => Ok(()),
        None => Err(AutomationError::NotFound(format!("session {session_id} not found"))),
    }
}

async fn find(a: &Automation, ctx: &RequestContext, id: &str) -> Result<Schedule> {
    let row: Option<Row> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM {FROM} WHERE s.schedule_id = $1 AND s.workspace = $2"
    )))
    .bind(id)
    .bind(&ctx.workspace)
    .fetch_optional(&a.db)
    .await?;
    row.map(from_row)
        .ok_or_else(|| AutomationError::NotFound(format!("schedule {id} not found")))
}

pub async fn create(a: Automation, ctx: RequestContext, req: CreateScheduleRequest) -> Result<Schedule> {
    let id = match &req.schedule_id {
        Some(id) => {
            check_id("scheduleId", id)?;
            id.clone()
        }
        None => new_id("sch"),
    };
    if let Some(name) = &req.name {
        check_text("name", name, 200)?;
    }
    check_action(&req.action)?;
    let zone_name = req.time_zone.clone().unwrap_or_else(|| "UTC".into());
    if zone_name.len() > 64 {
        return Err(AutomationError::Invalid("timeZone: at most 64 characters".into()));
    }
    let zone = parse_zone(&zone_name)?;
    let now = relay_bus::now_ms();
    let (cron, run_at, next) = match (&req.cron, req.at) {
        (Some(expr), None) => {
            check_text("cron", expr, 200)?;
            let cron = parse_cron(expr)?;
            let next = next_after(&cron, zone, now)
                .ok_or_else(|| AutomationError::Invalid(format!("cron {expr:?} never matches")))?;
            (Some(expr.clone()), None, next)
        }
        (None, Some(at)) => {
            if !at.is_finite() || at.fract() != 0.0 || !(0.0..=253_402_300_799_000.0).contains(&at) {
                return Err(AutomationError::Invalid("at: a Unix time in ms".into()));
            }
            (None, Some(at as i64), at as i64)
        }
        _ => return Err(AutomationError::Invalid("give exactly one of cron and at".into())),
    };
    if let ScheduleAction::SendMessage { session_id, .. } = &req.action {
        sees_session(&a, &ctx, session_id).await?;
    }
    let mut tx = a.db.begin().await?;
    // Creating again with the same id answers with the stored one.
    let taken: Option<String> = sqlx::query_scalar("SELECT workspace FROM schedules WHERE schedule_id = $1")
        .bind(&id)
        .fetch_optional(&mut *tx)
        .await?;
    if let Some(workspace) = taken {
        drop(tx);
        if workspace != ctx.workspace {
            return Err(AutomationError::Conflict(format!("schedule id {id} is taken")));
        }
        return find(&a, &ctx, &id).await;
    }
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM schedules WHERE workspace = $1")
        .bind(&ctx.workspace)
        .fetch_one(&mut *tx)
        .await?;
    if count >= a.schedules.max_per_workspace {
        return Err(AutomationError::Conflict(format!(
            "workspace {} has {count} schedules, the most allowed (schedules.max_per_workspace)",
            ctx.workspace
        )));
    }
    sqlx::query(
        "INSERT INTO schedules (schedule_id, workspace, name, cron, time_zone, run_at, action, status, next_run_at, created_by, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'active', $8, $9, $10, $10) ON CONFLICT (schedule_id) DO NOTHING",
    )
    .bind(&id)
    .bind(&ctx.workspace)
    .bind(&req.name)
    .bind(&cron)
    .bind(&zone_name)
    .bind(run_at)
    .bind(Json(&req.action))
    .bind(next)
    .bind(ctx.caller.to_string())
    .bind(now)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    tracing::info!(schedule_id = %id, cron = ?cron, at = ?run_at, next_run_at = next, "schedule created");
    a.fire.notify_one();
    find(&a, &ctx, &id).await
}

pub async fn list(a: Automation, ctx: RequestContext, req: ListSchedulesRequest) -> Result<ScheduleList> {
    let rows: Vec<Row> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM {FROM} WHERE s.workspace = $1 AND ($2::text IS NULL OR s.status = $2)
         ORDER BY s.created_at, s.schedule_id"
    )))
    .bind(&ctx.workspace)
    .bind(req.status.map(relay_contracts::automation::ScheduleStatus::as_str))
    .fetch_all(&a.db)
    .await?;
    Ok(ScheduleList {
        schedules: rows.into_iter().map(from_row).collect(),
    })
}

pub async fn get(a: Automation, ctx: RequestContext, req: ScheduleRef) -> Result<Schedule> {
    check_id("scheduleId", &req.schedule_id)?;
    find(&a, &ctx, &req.schedule_id).await
}

pub async fn pause(a: Automation, ctx: RequestContext, req: ScheduleRef) -> Result<Schedule> {
    set_status(&a, &ctx, &req.schedule_id, ScheduleStatus::Paused).await
}

pub async fn resume(a: Automation, ctx: RequestContext, req: ScheduleRef) -> Result<Schedule> {
    set_status(&a, &ctx, &req.schedule_id, ScheduleStatus::Active).await
}

async fn set_status(a: &Automation, ctx: &RequestContext, id: &str, to: ScheduleStatus) -> Result<Schedule> {
    check_id("scheduleId", id)?;
    let s = find(a, ctx, id).await?;
    match (s.status, to) {
        (ScheduleStatus::Done, _) => {
            return Err(AutomationError::Conflict(format!("schedule {id} has run; it is done")));
        }
        (from, to) if from == to => return Ok(s),
        _ => {}
    }
    let now = relay_bus::now_ms();
    // Resuming a cron schedule starts from its next time after now: runs missed while paused
    // are not made up. A one-time schedule keeps its time (due at once if it has passed). A run
    // being retried is kept either way: its call may already have reached the mesh, and it is
    // finished (recorded) under its own due time.
    let next = match (&s.cron, to) {
        (Some(expr), ScheduleStatus::Active) => next_after(&parse_cron(expr)?, parse_zone(&s.time_zone)?, now),
        _ => s.at,
    };
    sqlx::query(
        "UPDATE schedules SET status = $3, next_run_at = coalesce($4, next_run_at), updated_at = $5
         WHERE schedule_id = $1 AND workspace = $2 AND status <> 'done'",
    )
    .bind(id)
    .bind(&ctx.workspace)
    .bind(to.as_str())
    .bind(next)
    .bind(now)
    .execute(&a.db)
    .await?;
    a.fire.notify_one();
    find(a, ctx, id).await
}

pub async fn delete(a: Automation, ctx: RequestContext, req: ScheduleRef) -> Result<Deleted> {
    check_id("scheduleId", &req.schedule_id)?;
    let n = sqlx::query("DELETE FROM schedules WHERE schedule_id = $1 AND workspace = $2")
        .bind(&req.schedule_id)
        .bind(&ctx.workspace)
        .execute(&a.db)
        .await?
        .rows_affected();
    if n == 0 {
        return Err(AutomationError::NotFound(format!(
            "schedule {} not found",
            req.schedule_id
        )));
    }
    Ok(Deleted { deleted: true })
}

pub async fn runs(a: Automation, ctx: RequestContext, req: ScheduleRunsRequest) -> Result<ScheduleRunList> {
    check_id("scheduleId", &req.schedule_id)?;
    let limit = crate::page_limit(req.limit)?;
    find(&a, &ctx, &req.schedule_id).await?;
    let rows: Vec<(i64, i64, bool, serde_json::Value)> = sqlx::query_as(
        "SELECT due_at, fired_at, ok, result FROM schedule_runs WHERE schedule_id = $1 ORDER BY due_at DESC LIMIT $2",
    )
    .bind(&req.schedule_id)
    .bind(limit)
    .fetch_all(&a.db)
    .await?;
    Ok(ScheduleRunList {
        runs: rows
            .into_iter()
            .map(|(due_at, fired_at, ok, result)| ScheduleRun {
                due_at,
                fired_at,
                ok,
                result,
            })
            .collect(),
    })
}
