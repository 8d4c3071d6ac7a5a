//! SQL of `permission_requests`, `questions` and their outbox `permission_events`.

use crate::error::Result;
use relay_bus::db::TextEnum;
use relay_contracts::permission::*;
use serde_json::Value;
use sqlx::PgConnection;
use sqlx::types::Json;

const PERMISSION_COLUMNS: &str = "request_id, agent_id, session_id, tool, command, file_path, description, risk_level, status, decided_by, reason, requested_at, decided_at, expires_at";

/// A `permission_requests` row as selected by [`PERMISSION_COLUMNS`].
#[derive(sqlx::FromRow)]
struct PermissionRow {
    request_id: String,
    agent_id: String,
    session_id: String,
    tool: String,
    command: Option<String>,
    file_path: Option<String>,
    description: String,
    risk_level: TextEnum<Risk>,
    status: TextEnum<Decision>,
    decided_by: Option<String>,
    reason: Option<String>,
    requested_at: i64,
    decided_at: Option<i64>,
    expires_at: Option<i64>,
}

fn permission(r: PermissionRow) -> Permission {
    Permission {
        request_id: r.request_id,
        agent_id: r.agent_id,
        session_id: r.session_id,
        tool: r.tool,
        command: r.command,
        file_path: r.file_path,
        description: r.description,
        risk_level: r.risk_level.0,
        status: r.status.0,
        decided_by: r.decided_by,
        reason: r.reason,
        requested_at: r.requested_at,
        decided_at: r.decided_at,
        expires_at: r.expires_at,
    }
}

/// Stores a new request; `None` when its id is taken (asked before).
pub async fn insert_permission(conn: &mut PgConnection, p: &Permission) -> Result<Option<Permission>> {
    let row: Option<PermissionRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "INSERT INTO permission_requests ({PERMISSION_COLUMNS})
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
         ON CONFLICT (request_id) DO NOTHING RETURNING {PERMISSION_COLUMNS}"
    )))
    .bind(&p.request_id)
    .bind(&p.agent_id)
    .bind(&p.session_id)
    .bind(&p.tool)
    .bind(&p.command)
    .bind(&p.file_path)
    .bind(&p.description)
    .bind(p.risk_level.as_str())
    .bind(p.status.as_str())
    .bind(&p.decided_by)
    .bind(&p.reason)
    .bind(p.requested_at)
    .bind(p.decided_at)
    .bind(p.expires_at)
    .fetch_optional(conn)
    .await?;
    Ok(row.map(permission))
}

pub async fn get_permission(conn: &mut PgConnection, id: &str) -> Result<Option<Permission>> {
    let row: Option<PermissionRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {PERMISSION_COLUMNS} FROM permission_requests WHERE request_id = $1"
    )))
    .bind(id)
    .fetch_optional(conn)
    .await?;
    Ok(row.map(permission))
}

/// Decides a pending request; `None` when it is not pending (decided before, or unknown).
pub async fn decide_permission(
    conn: &mut PgConnection,
    id: &str,
    status: Decision,
    decided_by: &str,
    reason: Option<&str>,
    now: i64,
) -> Result<Option<Permission>> {
    let row: Option<PermissionRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "UPDATE permission_requests SET status = $2, decided_by = $3, reason = $4, decided_at = $5
         WHERE request_id = $1 AND status = 'pending' RETURNING {PERMISSION_COLUMNS}"
    )))
    .bind(id)
    .bind(status.as_str())
    .bind(decided_by)
    .bind(reason)
    .bind(now)
    .fetch_optional(conn)
    .await?;
    Ok(row.map(permission))
}

/// Pending requests past their expiry, decided by `status`; skips rows another replica holds.
pub async fn expire_permissions(
    conn: &mut PgConnection,
    status: Decision,
    now: i64,
    limit: i64,
) -> Result<Vec<Permission>> {
    let rows: Vec<PermissionRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "UPDATE permission_requests SET status = $1, decided_by = 'expiry', reason = 'expired', decided_at = $2
         WHERE request_id IN (
             SELECT request_id FROM permission_requests
             WHERE status = 'pending' AND expires_at <= $2
             ORDER BY expires_at LIMIT $3 FOR UPDATE SKIP LOCKED)
         RETURNING {PERMISSION_COLUMNS}"
    )))
    .bind(status.as_str())
    .bind(now)
    .bind(limit)
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().map(permission).collect())
}

/// The WHERE clause and binds shared by both lists.
struct Where {
    clauses: Vec<String>,
    binds: Vec<String>,
}

fn filters(req: &ListRequest, status_column: &str) -> Where {
    let mut w = Where {
        clauses: vec![],
        binds: vec![],
    };
    let mut add = |clause: &str, value: String| {
        w.binds.push(value);
        w.clauses.push(format!("{clause} = ${}", w.binds.len()));
    };
    if let Some(a) = &req.agent_id {
        add("agent_id", a.clone());
    }
    if let Some(s) = &req.session_id {
        add("session_id", s.clone());
    }
    match req.status.as_deref() {
        Some("all") => {}
        Some(s) => add(status_column, s.to_string()),
        None => add(status_column, "pending".into()),
    }
    w
}

impl Where {
    /// Only rows of `workspace`, for a caller confined to one.
    fn only_in(&mut self, workspace: Option<&str>) {
        if let Some(ws) = workspace {
            self.binds.push(ws.to_string());
            self.clauses.push(format!("workspace = ${}", self.binds.len()));
        }
    }

    fn sql(&self) -> String {
        match self.clauses.is_empty() {
            true => String::new(),
            false => format!("WHERE {}", self.clauses.join(" AND ")),
        }
    }
}

pub async fn list_permissions(
    conn: &mut PgConnection,
    req: &ListRequest,
    limit: i64,
    workspace: Option<&str>,
) -> Result<Vec<Permission>> {
    let mut w = filters(req, "status");
    w.only_in(workspace);
    let sql = format!(
        "SELECT {PERMISSION_COLUMNS} FROM permission_requests {} ORDER BY requested_at, request_id LIMIT {limit}",
        w.sql()
    );
    let mut q = sqlx::query_as::<_, PermissionRow>(sqlx::AssertSqlSafe(sql));
    for b in w.binds {
        q = q.bind(b);
    }
    Ok(q.fetch_all(conn).await?.into_iter().map(permission).collect())
}

const QUESTION_COLUMNS: &str =
    "question_id, agent_id, session_id, question, options, status, answer, asked_at, answered_at, expires_at";

/// A `questions` row as selected by [`QUESTION_COLUMNS`].
#[derive(sqlx::FromRow)]
struct QuestionRow {
    question_id: String,
    agent_id: String,
    session_id: String,
    question: String,
    options: Json<Vec<String>>,
    status: TextEnum<QuestionStatus>,
    answer: Option<String>,
    asked_at: i64,
    answered_at: Option<i64>,
    expires_at: Option<i64>,
}

fn question(r: QuestionRow) -> Question {
    Question {
        question_id: r.question_id,
        agent_id: r.agent_id,
        session_id: r.session_id,
        question: r.question,
        options: r.options.0,
        status: r.status.0,
        answer: r.answer,
        asked_at: r.asked_at,
        answered_at: r.answered_at,
        expires_at: r.expires_at,
    }
}

pub async fn insert_question(conn: &mut PgConnection, q: &Question) -> Result<Option<Question>> {
    let row: Option<QuestionRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "INSERT INTO questions ({QUESTION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, 'pending', NULL, $6, NULL, $7)
         ON CONFLICT (question_id) DO NOTHING RETURNING {QUESTION_COLUMNS}"
    )))
    .bind(&q.question_id)
    .bind(&q.agent_id)
    .bind(&q.session_id)
    .bind(&q.question)
    .bind(serde_json::json!(q.options))
    .bind(q.asked_at)
    .bind(q.expires_at)
    .fetch_optional(conn)
    .await?;
    Ok(row.map(question))
}

pub async fn get_question(conn: &mut PgConnection, id: &str) -> Result<Option<Question>> {
    let row: Option<QuestionRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {QUESTION_COLUMNS} FROM questions WHERE question_id = $1"
    )))
    .bind(id)
    .fetch_optional(conn)
    .await?;
    Ok(row.map(question))
}

pub async fn answer_question(conn: &mut PgConnection, id: &str, answer: &str, now: i64) -> Result<Option<Question>> {
    let row: Option<QuestionRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "UPDATE questions SET status = 'answered', answer = $2, answered_at = $3
         WHERE question_id = $1 AND status = 'pending' RETURNING {QUESTION_COLUMNS}"
    )))
    .bind(id)
    .bind(answer)
    .bind(now)
    .fetch_optional(conn)
    .await?;
    Ok(row.map(question))
}

pub async fn expire_questions(conn: &mut PgConnection, answer: &str, now: i64, limit: i64) -> Result<Vec<Question>> {
    let rows: Vec<QuestionRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "UPDATE questions SET status = 'expired', answer = $1, answered_at = $2
         WHERE question_id IN (
             SELECT question_id FROM questions
             WHERE status = 'pending' AND expires_at <= $2
             ORDER BY expires_at LIMIT $3 FOR UPDATE SKIP LOCKED)
         RETURNING {QUESTION_COLUMNS}"
    )))
    .bind(answer)
    .bind(now)
    .bind(limit)
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().map(question).collect())
}

pub async fn list_questions(
    conn: &mut PgConnection,
    req: &ListRequest,
    limit: i64,
    workspace: Option<&str>,
) -> Result<Vec<Question>> {
    let mut w = filters(req, "status");
    w.only_in(workspace);
    let sql = format!(
        "SELECT {QUESTION_COLUMNS} FROM questions {} ORDER BY asked_at, question_id LIMIT {limit}",
        w.sql()
    );
    let mut q = sqlx::query_as::<_, QuestionRow>(sqlx::AssertSqlSafe(sql));
    for b in w.binds {
        q = q.bind(b);
    }
    Ok(q.fetch_all(conn).await?.into_iter().map(question).collect())
}

/// Bounded growth ([`relay_bus::retention`]): decided requests and answered or expired
/// questions resolved before `$1`, at most `$2` at a time.
pub const RESOLVED: [&str; 2] = [
    "DELETE FROM permission_requests WHERE request_id IN (
         SELECT request_id FROM permission_requests
         WHERE status <> 'pending' AND decided_at < $1 ORDER BY decided_at LIMIT $2)",
    "DELETE FROM questions WHERE question_id IN (
         SELECT question_id FROM questions
         WHERE status <> 'pending' AND answered_at < $1 ORDER BY answered_at LIMIT $2)",
];

/// An event for the outbox, in the transaction of the change it reports.
pub async fn insert_event(
    conn: &mut PgConnection,
    session_id: &str,
    event_type: &str,
    ts: i64,
    payload: &Value,
) -> Result<()> {
    // The session's workspace, as its requests recorded it.
    sqlx::query(
        "INSERT INTO permission_events (event_id, session_id, type, ts, payload, traceparent, workspace)
         VALUES ($1, $2, $3, $4, $5, $6, coalesce(
             (SELECT workspace FROM permission_requests WHERE session_id = $2 LIMIT 1),
             (SELECT workspace FROM questions WHERE session_id = $2 LIMIT 1), 'default'))",
    )
    .bind(uuid::Uuid::now_v7().to_string())
    .bind(session_id)
    .bind(event_type)
    .bind(ts)
    .bind(payload)
    .bind(relay_bus::trace::current_traceparent())
    .execute(conn)
    .await?;
    Ok(())
}

/// Records the workspace of a request or question just inserted (the caller's).
pub async fn set_workspace(conn: &mut PgConnection, question: bool, id: &str, workspace: &str) -> Result<()> {
    let sql = match question {
        false => "UPDATE permission_requests SET workspace = $2 WHERE request_id = $1",
        true => "UPDATE questions SET workspace = $2 WHERE question_id = $1",
    };
    sqlx::query(sql).bind(id).bind(workspace).execute(conn).await?;
    Ok(())
}

/// The workspace of the request or question `id`, if it exists.
pub async fn workspace_of(conn: &mut PgConnection, question: bool, id: &str) -> Result<Option<String>> {
    let sql = match question {
        false => "SELECT workspace FROM permission_requests WHERE request_id = $1",
        true => "SELECT workspace FROM questions WHERE question_id = $1",
    };
    Ok(sqlx::query_scalar(sql).bind(id).fetch_optional(conn).await?)
}
