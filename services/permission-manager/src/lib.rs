//! Permission manager (seed 003 §2.3–2.4): permission requests and questions from harnesses,
//! decided by policies in order or kept pending in Postgres until a human approves, denies or
//! answers. Decisions go back to the harness that asked (`agent.<id>.permission|question`)
//! and into the event log as `permission.*` / `question.*` events.

mod error;
pub mod policy;
mod store;

pub use error::PermissionError;

use error::Result;
use policy::{Action, Policies, PolicyRule};
use relay_bus::outbox::{self, Outbox};
use relay_bus::scope::scoped;
use relay_bus::service::{ServiceError, ServiceHost};
use relay_bus::settings::{DatabaseSettings, NatsSettings, TelemetrySettings};
use relay_contracts::RequestContext;
use relay_contracts::audit::AUDIT_RECORDED;
use relay_contracts::permission::events::{
    PermissionRequested, PermissionResolved, QuestionRequested, QuestionResolved,
};
use relay_contracts::permission::*;
use relay_contracts::rpc;
use relay_contracts::session::{ApprovalPolicy, EventPayload, SessionRef};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sqlx::PgPool;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

pub const SERVICE_NAME: &str = "permission-manager";

const OUTBOX: Outbox = Outbox {
    table: "permission_events",
    type_prefix: "",
    verbatim: &[],
    lock_key: 0x7265_6c61_7970_6d65, // "relaypme"
    prune: true,
};
/// Longest id, tool name or command accepted; a description or question may be longer.
const MAX_FIELD: usize = 4096;
const MAX_TEXT: usize = 64 * 1024;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    pub nats: NatsSettings,
    pub database: DatabaseSettings,
    pub telemetry: TelemetrySettings,
    pub permissions: PermissionSettings,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct PermissionSettings {
    /// Rules tried in order; the seed's defaults ([`policy::defaults`]) when not configured.
    pub policies: Option<Vec<PolicyRule>>,
    /// Risk of a request no rule matches (it then needs a human).
    pub default_risk: Risk,
    /// A pending request or question is decided by the expiry action after this long; 0 = never.
    pub expire_after_ms: u64,
    /// `approved` or `denied` (default): what an expired permission request becomes.
    pub expiry_decision: Decision,
    /// What the harness is told when a question expires (typed as the answer).
    pub expired_answer: String,
    pub expiry_interval_ms: u64,
    /// How long to wait for the harness to take a decision.
    pub notify_timeout_ms: u64,
    /// How long to wait for the registry's session (approvalPolicyOverride).
    pub session_timeout_ms: u64,
    pub default_list_limit: i64,
    pub max_list_limit: i64,
    /// Forward `permission.*` / `question.*` events to the event log.
    pub forward_events: bool,
    /// How long a decided request or an answered (or expired) question stays listable after it
    /// was resolved; then it is deleted (its events stay in the log).
    pub keep_resolved_ms: i64,
}

impl Default for PermissionSettings {
    fn default() -> Self {
        PermissionSettings {
            policies: None,
            default_risk: Risk::Medium,
            expire_after_ms: 0,
            expiry_decision: Decision::Denied,
            expired_answer: String::new(),
            expiry_interval_ms: 1000,
            notify_timeout_ms: 2000,
            session_timeout_ms: 2000,
            default_list_limit: 100,
            max_list_limit: 1000,
            forward_events: true,
            keep_resolved_ms: 7 * 24 * 3_600_000,
        }
    }
}

/// Handler state.
#[derive(Clone)]
pub struct Manager {
    db: PgPool,
    nats: async_nats::Client,
    policies: Arc<Policies>,
    settings: Arc<PermissionSettings>,
    outbox: Arc<Notify>,
}

impl relay_bus::scope::Scope for Manager {
    async fn workspace_of(
        &self,
        field: &str,
        id: &str,
    ) -> std::result::Result<Option<String>, relay_contracts::WireError> {
        let question = match field {
            "requestId" => false,
            "questionId" => true,
            _ => return Ok(None),
        };
        let mut conn = self.db.acquire().await.map_err(PermissionError::Db)?;
        Ok(store::workspace_of(&mut conn, question, id).await?)
    }

    fn noun(&self, kind: &str) -> String {
        match kind {
            "requestId" => "permission request".into(),
            other => other.trim_end_matches("Id").into(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Policy(#[from] policy::PolicyError),
    #[error("expiry_decision must be approved or denied")]
    ExpiryDecision,
}

impl Manager {
    /// Compiles the policies, starts the outbox forwarder and the expiry sweeper.
    pub fn start(
        db: PgPool,
        nats: async_nats::Client,
        settings: PermissionSettings,
    ) -> std::result::Result<Self, StartError> {
        if settings.expiry_decision == Decision::Pending {
            return Err(StartError::ExpiryDecision);
        }
        let rules = settings.policies.clone().unwrap_or_else(policy::defaults);
        let policies = Policies::compile(rules, settings.default_risk)?;
        let outbox = outbox::start(OUTBOX, &db, &nats, settings.forward_events);
        let m = Manager {
            db,
            nats,
            policies: Arc::new(policies),
            settings: Arc::new(settings),
            outbox,
        };
        if m.settings.expire_after_ms > 0 {
            tokio::spawn(expire(m.clone()));
        }
        let keep = Duration::from_millis(m.settings.keep_resolved_ms.max(0) as u64);
        let resolved = store::RESOLVED.map(String::from).to_vec();
        relay_bus::retention::spawn(&m.db, "resolved requests and questions", keep, resolved);
        Ok(m)
    }

    fn expires_at(&self, now: i64) -> Option<i64> {
        (self.settings.expire_after_ms > 0).then(|| now + self.settings.expire_after_ms as i64)
    }

    /// After a commit: forward the events and publish them live on their type's subject.
    async fn committed(&self, events: Vec<(&'static str, Value)>) {
        self.outbox.notify_one();
        for (event_type, payload) in events {
            if let Err(e) = relay_bus::client::publish(&self.nats, event_type.to_string(), &payload).await {
                tracing::warn!(error = %e, event_type, "cannot publish event live (the event log still gets it)");
            }
        }
    }

    /// The session's approvalPolicyOverride; `Err` when the registry cannot say.
    async fn session_override(&self, session_id: &str) -> std::result::Result<Option<ApprovalPolicy>, String> {
        let req = SessionRef {
            session_id: session_id.to_string(),
        };
        let timeout = Duration::from_millis(self.settings.session_timeout_ms);
        match relay_bus::client::call::<rpc::SessionGet>(&self.nats, &req, timeout).await {
            Ok(r) => Ok(r.session.and_then(|s| s.approval_policy_override)),
            Err(e) => Err(e.to_string()),
        }
    }

    /// Sends a decision or answer to the harness that asked; whether it took it.
    async fn notify<T: Serialize>(&self, subject: String, body: &T) -> bool {
        let timeout = Duration::from_millis(self.settings.notify_timeout_ms);
        match relay_bus::client::request::<_, Value>(&self.nats, &subject, body, timeout).await {
            Ok(_) => true,
            Err(e) => {
                tracing::info!(error = %e, subject, "the harness did not take the decision; it stays stored");
                false
            }
        }
    }

    fn limit(&self, asked: Option<i64>) -> Result<i64> {
        match asked {
            None => Ok(self.settings.default_list_limit),
            Some(n) if n >= 1 && n <= self.settings.max_list_limit => Ok(n),
            Some(n) => Err(PermissionError::Invalid(format!(
                "limit must be between 1 and {}, got {n}",
                self.settings.max_list_limit
            ))),
        }
    }
}

pub async fn serve(nats: async_nats::Client, m: Manager) -> std::result::Result<ServiceHost<Manager>, ServiceError> {
    let mut host = ServiceHost::start(
        nats,
        SERVICE_NAME,
        env!("CARGO_PKG_VERSION"),
        "Permission requests and questions (permission.*, question.*)",
        m,
    )
    .await?;
    host.serve::<rpc::PermissionRequest>(request).await?;
    // A caller confined to a workspace reaches its own requests and questions only.
    host.serve::<rpc::PermissionGet>(scoped(get)).await?;
    host.serve::<rpc::PermissionList>(list).await?;
    host.serve::<rpc::PermissionApprove>(scoped(approve)).await?;
    host.serve::<rpc::PermissionDeny>(scoped(deny)).await?;
    host.serve::<rpc::QuestionAsk>(ask).await?;
    host.serve::<rpc::QuestionGet>(scoped(question_get)).await?;
    host.serve::<rpc::QuestionList>(question_list).await?;
    host.serve::<rpc::QuestionAnswer>(scoped(answer)).await?;
    Ok(host)
}

fn check(field: &str, value: &str, max: usize) -> Result<()> {
    if value.trim().is_empty() {
        return Err(PermissionError::Invalid(format!("{field} must not be empty")));
    }
    if value.len() > max {
        return Err(PermissionError::Invalid(format!("{field} is longer than {max} bytes")));
    }
    if value.contains('\0') {
        return Err(PermissionError::Invalid(format!("{field} must not contain NUL")));
    }
    Ok(())
}

fn check_optional(field: &str, value: &Option<String>, max: usize) -> Result<()> {
    value.as_deref().map_or(Ok(()), |v| check(field, v, max))
}

fn new_id(given: &Option<String>) -> Result<String> {
    match given {
        Some(id) => check("id", id, 200).map(|_| id.clone()),
        None => Ok(uuid::Uuid::now_v7().to_string()),
    }
}

fn not_found(what: &'static str, id: &str) -> PermissionError {
    PermissionError::NotFound {
        what,
        id: id.to_string(),
    }
}

fn reply(p: &Permission) -> PermissionDecision {
    PermissionDecision {
        request_id: p.request_id.clone(),
        decision: p.status,
        reason: p.reason.clone(),
        risk_level: Some(p.risk_level),
        decided_by: p.decided_by.clone(),
    }
}

/// An event's type and payload, from its typed form (`relay_contracts::permission::events`).
fn event<P: EventPayload>(payload: P) -> (&'static str, Value) {
    (P::TYPE, serde_json::to_value(payload).unwrap_or_default())
}

/// `permission.request`: decided by the policies now, or stored pending for a human.
pub async fn request(m: Manager, ctx: RequestContext, req: PermissionRequest) -> Result<PermissionDecision> {
    check("agentId", &req.agent_id, MAX_FIELD)?;
    check("sessionId", &req.session_id, MAX_FIELD)?;
    check("tool", &req.tool, MAX_FIELD)?;
    check_optional("command", &req.command, MAX_TEXT)?;
    check_optional("filePath", &req.file_path, MAX_FIELD)?;
    if req.description.len() > MAX_TEXT || req.description.contains('\0') {
        return Err(PermissionError::Invalid(format!(
            "description must be at most {MAX_TEXT} bytes without NUL"
        )));
    }
    let request_id = new_id(&req.request_id)?;
    // Asked again (a harness retrying): the same request, decided or not.
    if let Some(p) = store::get_permission(&mut *m.db.acquire().await?, &request_id).await? {
        let workspace = store::workspace_of(&mut *m.db.acquire().await?, false, &request_id).await?;
        // Ids are global: one another workspace holds is not found here, as its requests are
        // everywhere (a conflict would say whose it is not).
        if ctx.scope().is_some_and(|own| workspace.as_deref() != Some(own)) {
            return Err(not_found("permission request", &request_id));
        }
        return same_request(&req, p);
    }
    let mut verdict = match m.session_override(&req.session_id).await {
        Ok(o) => m.policies.evaluate(&req, o),
        Err(e) => {
            let mut v = m.policies.evaluate(&req, None);
            // Unknown override: it could be `reject`, so nothing is approved without a human.
            if v.action == Action::AutoApprove {
                tracing::warn!(error = %e, "session's approval policy unknown; asking a human instead of auto-approving");
                v.action = Action::RequireHuman;
                v.decided_by = format!("{} (session policy unknown)", v.decided_by);
            }
            v
        }
    };
    let now = relay_bus::now_ms();
    let (status, decided_at, expires_at) = match verdict.action {
        Action::AutoApprove => (Decision::Approved, Some(now), None),
        Action::AutoDeny => (Decision::Denied, Some(now), None),
        Action::RequireHuman => (Decision::Pending, None, m.expires_at(now)),
    };
    let p = Permission {
        request_id,
        agent_id: req.agent_id.clone(),
        session_id: req.session_id.clone(),
        tool: req.tool.clone(),
        command: req.command.clone(),
        file_path: req.file_path.clone(),
        description: req.description.clone(),
        risk_level: verdict.risk,
        status,
        decided_by: (status != Decision::Pending).then(|| std::mem::take(&mut verdict.decided_by)),
        reason: None,
        requested_at: now,
        decided_at,
        expires_at,
    };
    let mut tx = m.db.begin().await?;
    let Some(p) = store::insert_permission(&mut tx, &p).await? else {
        // Raced with the same id from another replica.
        drop(tx);
        let stored = store::get_permission(&mut *m.db.acquire().await?, &p.request_id).await?;
        return same_request(
            &req,
            stored.ok_or_else(|| not_found("permission request", &p.request_id))?,
        );
    };
    // It belongs to the workspace it was asked in (an agent's is in its identity).
    store::set_workspace(&mut tx, false, &p.request_id, &ctx.workspace).await?;
    let event = match p.status {
        Decision::Pending => event(PermissionRequested::from(&p)),
        _ => event(PermissionResolved::from(&p)),
    };
    store::insert_event(&mut tx, &p.session_id, event.0, now, &event.1).await?;
    tx.commit().await?;
    tracing::info!(
        request_id = p.request_id,
        agent_id = p.agent_id,
        tool = p.tool,
        decision = p.status.as_str(),
        risk = p.risk_level.as_str(),
        "permission request"
    );
    m.committed(vec![event]).await;
    Ok(reply(&p))
}

fn same_request(req: &PermissionRequest, p: Permission) -> Result<PermissionDecision> {
    if p.agent_id != req.agent_id || p.tool != req.tool {
        return Err(PermissionError::Conflict(format!(
            "request id {} is already used by another request",
            p.request_id
        )));
    }
    Ok(reply(&p))
}

pub async fn get(m: Manager, _ctx: RequestContext, req: GetPermissionRequest) -> Result<Permission> {
    store::get_permission(&mut *m.db.acquire().await?, &req.request_id)
        .await?
        .ok_or_else(|| not_found("permission request", &req.request_id))
}

fn check_status(status: &Option<String>, allowed: &[&str]) -> Result<()> {
    match status.as_deref() {
        Some(s) if !allowed.contains(&s) => Err(PermissionError::Invalid(format!(
            "status must be one of {}, got {s:?}",
            allowed.join(", ")
        ))),
        _ => Ok(()),
    }
}

pub async fn list(m: Manager, ctx: RequestContext, req: ListRequest) -> Result<PermissionList> {
    check_status(&req.status, &["pending", "approved", "denied", "all"])?;
    let limit = m.limit(req.limit)?;
    let permissions = store::list_permissions(&mut *m.db.acquire().await?, &req, limit, ctx.scope()).await?;
    Ok(PermissionList { permissions })
}

pub async fn approve(m: Manager, ctx: RequestContext, req: DecideRequest) -> Result<DecideResponse> {
    decide(m, ctx, req, Decision::Approved).await
}

pub async fn deny(m: Manager, ctx: RequestContext, req: DecideRequest) -> Result<DecideResponse> {
    decide(m, ctx, req, Decision::Denied).await
}

/// A human's decision: only a pending request can take one.
async fn decide(m: Manager, ctx: RequestContext, req: DecideRequest, decision: Decision) -> Result<DecideResponse> {
    check("requestId", &req.request_id, MAX_FIELD)?;
    check_optional("reason", &req.reason, MAX_TEXT)?;
    let now = relay_bus::now_ms();
    let mut tx = m.db.begin().await?;
    let decided =
        store::decide_permission(&mut tx, &req.request_id, decision, "human", req.reason.as_deref(), now).await?;
    let Some(p) = decided else {
        let p = store::get_permission(&mut tx, &req.request_id).await?;
        return Err(match p {
            None => not_found("permission request", &req.request_id),
            Some(p) => PermissionError::Conflict(format!(
                "permission request {} is already {} (by {})",
                p.request_id,
                p.status.as_str(),
                p.decided_by.as_deref().unwrap_or("unknown")
            )),
        });
    };
    let resolved = event(PermissionResolved::from(&p));
    store::insert_event(&mut tx, &p.session_id, resolved.0, now, &resolved.1).await?;
    let action = match decision {
        Decision::Approved => "permission.approve",
        _ => "permission.deny",
    };
    let audit = relay_bus::audit::entry(
        &ctx,
        action,
        &p.request_id,
        Some(json!({"agentId": p.agent_id, "tool": p.tool, "command": p.command, "reason": p.reason})),
    );
    store::insert_event(&mut tx, &p.session_id, AUDIT_RECORDED, now, &audit).await?;
    tx.commit().await?;
    tracing::info!(
        request_id = p.request_id,
        agent_id = p.agent_id,
        decision = decision.as_str(),
        "permission decided by a human"
    );
    m.committed(vec![resolved]).await;
    let harness_notified = m.notify(rpc::agent::permission(&p.agent_id), &reply(&p)).await;
    Ok(DecideResponse {
        success: true,
        permission: p,
        harness_notified,
    })
}

/// `question.ask`: stored pending; the answer comes from a human (`question.answer`).
pub async fn ask(m: Manager, ctx: RequestContext, req: QuestionRequest) -> Result<QuestionReply> {
    check("agentId", &req.agent_id, MAX_FIELD)?;
    check("sessionId", &req.session_id, MAX_FIELD)?;
    check("question", &req.question, MAX_TEXT)?;
    for o in &req.options {
        check("option", o, MAX_FIELD)?;
    }
    let question_id = new_id(&req.question_id)?;
    let now = relay_bus::now_ms();
    let q = Question {
        question_id,
        agent_id: req.agent_id.clone(),
        session_id: req.session_id.clone(),
        question: req.question.clone(),
        options: req.options.clone(),
        status: QuestionStatus::Pending,
        answer: None,
        asked_at: now,
        answered_at: None,
        expires_at: m.expires_at(now),
    };
    let mut tx = m.db.begin().await?;
    let Some(q) = store::insert_question(&mut tx, &q).await? else {
        // Asked again: the stored question, answered or not.
        let stored = store::get_question(&mut tx, &q.question_id).await?;
        let q = stored.ok_or_else(|| not_found("question", &q.question_id))?;
        let workspace = store::workspace_of(&mut tx, true, &q.question_id).await?;
        if ctx.scope().is_some_and(|own| workspace.as_deref() != Some(own)) {
            return Err(not_found("question", &q.question_id));
        }
        if q.agent_id != req.agent_id {
            return Err(PermissionError::Conflict(format!(
                "question id {} is already used by another agent",
                q.question_id
            )));
        }
        return Ok(QuestionReply {
            question_id: q.question_id,
            answer: q.answer,
        });
    };
    store::set_workspace(&mut tx, true, &q.question_id, &ctx.workspace).await?;
    let asked = event(QuestionRequested::from(&q));
    store::insert_event(&mut tx, &q.session_id, asked.0, now, &asked.1).await?;
    tx.commit().await?;
    tracing::info!(question_id = q.question_id, agent_id = q.agent_id, "question asked");
    m.committed(vec![asked]).await;
    Ok(QuestionReply {
        question_id: q.question_id,
        answer: None,
    })
}

pub async fn question_get(m: Manager, _ctx: RequestContext, req: GetQuestionRequest) -> Result<Question> {
    store::get_question(&mut *m.db.acquire().await?, &req.question_id)
        .await?
        .ok_or_else(|| not_found("question", &req.question_id))
}

pub async fn question_list(m: Manager, ctx: RequestContext, req: ListRequest) -> Result<QuestionList> {
    check_status(&req.status, &["pending", "answered", "expired", "all"])?;
    let limit = m.limit(req.limit)?;
    let questions = store::list_questions(&mut *m.db.acquire().await?, &req, limit, ctx.scope()).await?;
    Ok(QuestionList { questions })
}

pub async fn answer(m: Manager, ctx: RequestContext, req: AnswerRequest) -> Result<AnswerResponse> {
    check("questionId", &req.question_id, MAX_FIELD)?;
    if req.answer.len() > MAX_TEXT || req.answer.contains('\0') {
        return Err(PermissionError::Invalid(format!(
            "answer must be at most {MAX_TEXT} bytes without NUL"
        )));
    }
    let now = relay_bus::now_ms();
    let mut tx = m.db.begin().await?;
    let Some(q) = store::answer_question(&mut tx, &req.question_id, &req.answer, now).await? else {
        let q = store::get_question(&mut tx, &req.question_id).await?;
        return Err(match q {
            None => not_found("question", &req.question_id),
            Some(q) => PermissionError::Conflict(
                format!("question {} is already {:?}", q.question_id, q.status).to_lowercase(),
            ),
        });
    };
    let answered = event(QuestionResolved::from(&q));
    store::insert_event(&mut tx, &q.session_id, answered.0, now, &answered.1).await?;
    let audit = relay_bus::audit::entry(
        &ctx,
        "question.answer",
        &q.question_id,
        Some(json!({"agentId": q.agent_id, "answer": q.answer})),
    );
    store::insert_event(&mut tx, &q.session_id, AUDIT_RECORDED, now, &audit).await?;
    tx.commit().await?;
    tracing::info!(question_id = q.question_id, agent_id = q.agent_id, "question answered");
    m.committed(vec![answered]).await;
    let body = QuestionAnswer {
        question_id: q.question_id.clone(),
        answer: req.answer,
    };
    let harness_notified = m.notify(rpc::agent::question(&q.agent_id), &body).await;
    Ok(AnswerResponse {
        success: true,
        question: q,
        harness_notified,
    })
}

/// Decides pending requests and questions past their expiry, a batch at a time.
async fn expire(m: Manager) {
    let interval = Duration::from_millis(m.settings.expiry_interval_ms.max(10));
    loop {
        tokio::time::sleep(interval).await;
        if let Err(e) = expire_once(&m).await {
            tracing::warn!(error = %e, "cannot expire stale permission requests yet");
        }
    }
}

async fn expire_once(m: &Manager) -> Result<()> {
    let now = relay_bus::now_ms();
    let mut tx = m.db.begin().await?;
    let permissions = store::expire_permissions(&mut tx, m.settings.expiry_decision, now, 100).await?;
    let questions = store::expire_questions(&mut tx, &m.settings.expired_answer, now, 100).await?;
    if permissions.is_empty() && questions.is_empty() {
        return Ok(());
    }
    let mut events = Vec::new();
    for p in &permissions {
        let resolved = event(PermissionResolved::from(p));
        store::insert_event(&mut tx, &p.session_id, resolved.0, now, &resolved.1).await?;
        events.push(resolved);
    }
    for q in &questions {
        let answered = event(QuestionResolved::from(q));
        store::insert_event(&mut tx, &q.session_id, answered.0, now, &answered.1).await?;
        events.push(answered);
    }
    tx.commit().await?;
    tracing::info!(
        permissions = permissions.len(),
        questions = questions.len(),
        "expired stale requests"
    );
    m.committed(events).await;
    for p in &permissions {
        m.notify(rpc::agent::permission(&p.agent_id), &reply(p)).await;
    }
    for q in &questions {
        let body = QuestionAnswer {
            question_id: q.question_id.clone(),
            answer: q.answer.clone().unwrap_or_default(),
        };
        m.notify(rpc::agent::question(&q.agent_id), &body).await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example file documents the built-in policies: they must be the same list.
    #[test]
    fn the_example_config_file_holds_the_default_policies_and_settings() {
        let loaded: Settings = relay_bus::settings::load_example().unwrap();
        let p = loaded.permissions;
        assert_eq!(p.policies, Some(policy::defaults()));
        let d = PermissionSettings::default();
        assert_eq!(
            (p.default_risk, p.expiry_decision, p.expire_after_ms),
            (d.default_risk, d.expiry_decision, d.expire_after_ms)
        );
        assert_eq!(
            (p.notify_timeout_ms, p.max_list_limit),
            (d.notify_timeout_ms, d.max_list_limit)
        );
    }
}
