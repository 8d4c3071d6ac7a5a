//! Session lifecycle: create, update, close, resume, archive, purge, fork, merge, abandon.
//!
//! States: active ⇄ closed → archived → purged (tombstone). Asking for the state a session is
//! already in succeeds without a second event, so a retried request is harmless; every other
//! illegal transition is a `conflict` that says what to do instead.

use crate::Registry;
use crate::error::{RegistryError, Result};
use crate::store::{self, Change, new_id, now_ms};
use relay_contracts::audit::AuditEntry;
use relay_contracts::session::{events::*, *};
use relay_contracts::{Caller, RequestContext};

pub(crate) fn check_id(field: &str, id: &str) -> Result<()> {
    relay_contracts::id_problem(field, id).map_or(Ok(()), |m| Err(RegistryError::Invalid(m)))
}

pub(crate) fn check_text(field: &str, text: &str, most: usize) -> Result<()> {
    relay_contracts::text_problem(field, text, most).map_or(Ok(()), |m| Err(RegistryError::Invalid(m)))
}

pub(crate) fn new_session(session_id: String, now: i64) -> Session {
    Session {
        session_id,
        status: SessionStatus::Active,
        title: None,
        adapter_id: None,
        adapter_name: None,
        adapter_session_id: None,
        agents: Vec::new(),
        approval_policy_override: None,
        branch_kind: None,
        client_account_id: None,
        client_id: None,
        created_at: now,
        execution_target_id: None,
        fork_point_message_id: None,
        fork_transforms: None,
        is_imported: None,
        is_orchestrated: None,
        last_activity_at: now,
        last_client_identity_observation: None,
        lead_agent_id: None,
        parent_session_id: None,
        root_session_id: None,
        spawning_tool_call_id: None,
        summary: None,
        summary_updated_at: None,
        target_working_directory: None,
        origin_window_id: None,
        preview: None,
    }
}

/// Inserts `session` and records `created`; `conflict` if the id is taken.
pub(crate) async fn insert_new(change: &mut Change, session: &Session) -> Result<()> {
    let workspace = change.workspace.clone();
    if !store::insert_session(change.conn(), session, &workspace).await? {
        return Err(RegistryError::Conflict(format!(
            "session {} already exists",
            session.session_id
        )));
    }
    change.emit(&session.session_id, created_event(session)).await
}

/// Locks a session, creating it (and recording `created`) when it does not exist yet.
/// The session, locked, and whether this call made it.
pub(crate) async fn lock_or_create(change: &mut Change, id: &str) -> Result<(Session, bool)> {
    // One statement for a session that exists (every send but a session's first).
    if let Some(stored) = change.lock(id).await? {
        return Ok((store::live(id, Some(stored))?, false));
    }
    let session = new_session(id.to_string(), now_ms());
    // Two first messages racing for a new session: the loser's insert waits for the winner
    // to commit, inserts nothing, and both then lock the one row below.
    let workspace = change.workspace.clone();
    if store::insert_session(change.conn(), &session, &workspace).await? {
        change.emit(id, created_event(&session)).await?;
        return Ok((session, true));
    }
    Ok((store::lock_live(change.conn(), id).await?, false))
}

pub(crate) fn created_event(s: &Session) -> Created {
    Created {
        session_id: s.session_id.clone(),
        created_at: s.created_at,
        branch_kind: s.branch_kind,
        parent_session_id: s.parent_session_id.clone(),
        origin_window_id: s.origin_window_id.clone(),
    }
}

pub async fn create(reg: Registry, _ctx: RequestContext, req: CreateRequest) -> Result<SessionIdResponse> {
    let id = req.session_id.unwrap_or_else(new_id);
    check_id("sessionId", &id)?;
    let mut change = Change::begin(&reg).await?;
    let mut session = new_session(id.clone(), now_ms());
    if let Some(parent_id) = &req.parent_session_id {
        // Locked, so a concurrent purge of the parent cannot miss this child.
        let parent = store::lock_live(change.conn(), parent_id).await?;
        session.root_session_id = Some(parent.root_session_id.unwrap_or(parent.session_id));
        if let Some(point) = &req.fork_point_message_id {
            crate::posting::require_in_conversation(change.conn(), parent_id, point).await?;
        }
    } else if req.fork_point_message_id.is_some() {
        return Err(RegistryError::Invalid(
            "forkPointMessageId needs parentSessionId".into(),
        ));
    }
    session.title = req.title;
    session.parent_session_id = req.parent_session_id;
    session.branch_kind = req.branch_kind;
    session.execution_target_id = req.execution_target_id;
    session.fork_point_message_id = req.fork_point_message_id;
    session.fork_transforms = req.fork_transforms;
    session.origin_window_id = req.origin_window_id;
    session.spawning_tool_call_id = req.spawning_tool_call_id;
    session.target_working_directory = req.target_working_directory;
    insert_new(&mut change, &session).await?;
    change.commit().await?;
    Ok(SessionIdResponse { session_id: id })
}

pub async fn update(reg: Registry, ctx: RequestContext, req: UpdateRequest) -> Result<SuccessResponse> {
    // Approval policies are an admin's (a person's admin key, or the mesh's own identities).
    if req.approval_policy_override.is_some()
        && matches!(ctx.caller, Caller::Operator(_) | Caller::Viewer(_) | Caller::Agent(_))
    {
        return Err(RegistryError::Forbidden(
            "changing a session's approval policy needs an admin key".into(),
        ));
    }
    // The documented id pattern: not blank (null clears it).
    if let Some(Some(target)) = &req.execution_target_id
        && target.trim().is_empty()
    {
        return Err(RegistryError::Invalid(
            "executionTargetId may not be blank; null clears it".into(),
        ));
    }
    let mut change = Change::begin(&reg).await?;
    let mut s = store::lock_live(change.conn(), &req.session_id).await?;
    if s.status == SessionStatus::Archived {
        return Err(RegistryError::Conflict(format!(
            "session {} is archived and read-only",
            s.session_id
        )));
    }
    let mut changed = Vec::new();
    if let Some(v) = req.approval_policy_override
        && v != s.approval_policy_override
    {
        s.approval_policy_override = v;
        changed.push("approvalPolicyOverride".to_string());
    }
    if let Some(v) = req.execution_target_id
        && v != s.execution_target_id
    {
        s.execution_target_id = v;
        changed.push("executionTargetId".to_string());
    }
    if let Some(v) = req.title
        && Some(&v) != s.title.as_ref()
    {
        s.title = Some(v);
        changed.push("title".to_string());
    }
    if let Some(v) = req.summary
        && Some(&v) != s.summary.as_ref()
    {
        s.summary = Some(v);
        s.summary_updated_at = Some(now_ms());
        changed.push("summary".to_string());
    }
    if !changed.is_empty() {
        s.last_activity_at = now_ms();
        store::save_session(change.conn(), &s).await?;
        if changed.iter().any(|c| c == "approvalPolicyOverride") {
            // A policy change: audited with the change, in its transaction.
            let detail = serde_json::json!({"approvalPolicyOverride": s.approval_policy_override});
            let entry = AuditEntry::new(&ctx, "session.update", &s.session_id, Some(detail));
            change.emit(&s.session_id, entry).await?;
        }
        change
            .emit(
                &s.session_id,
                Updated {
                    session_id: s.session_id.clone(),
                    changed_properties: changed,
                },
            )
            .await?;
    }
    change.commit().await?;
    Ok(OK)
}

/// Moves a session from one of `from` to `to` and records `event`; does nothing (and emits
/// nothing) if it is already in `to`; `conflict` with `refuse(current)` from any other state.
async fn transition<P: EventPayload>(
    reg: &Registry,
    id: &str,
    from: &[SessionStatus],
    to: SessionStatus,
    refuse: impl Fn(SessionStatus) -> String,
    event: P,
) -> Result<SuccessResponse> {
    let mut change = Change::begin(reg).await?;
    let mut s = store::lock_live(change.conn(), id).await?;
    if s.status == to {
        return Ok(OK);
    }
    if !from.contains(&s.status) {
        return Err(RegistryError::Conflict(refuse(s.status)));
    }
    s.status = to;
    s.last_activity_at = now_ms();
    store::save_session(change.conn(), &s).await?;
    change.emit(id, event).await?;
    change.commit().await?;
    Ok(OK)
}

/// Closes an active session; a child session (a fork, a subagent's) then reports to its parent
/// with seed 002 `session.childCompleted`: why it ended and what it said last.
pub async fn close(reg: Registry, _ctx: RequestContext, req: CloseRequest) -> Result<SuccessResponse> {
    let id = req.session_id.as_str();
    let mut change = Change::begin(&reg).await?;
    let mut s = store::lock_live(change.conn(), id).await?;
    if s.status == SessionStatus::Closed {
        return Ok(OK);
    }
    if !matches!(s.status, SessionStatus::Active | SessionStatus::Discovered) {
        return Err(RegistryError::Conflict(format!(
            "session {id} is {}; only an active session can be closed",
            s.status.as_str()
        )));
    }
    s.status = SessionStatus::Closed;
    s.last_activity_at = now_ms();
    store::save_session(change.conn(), &s).await?;
    change
        .emit(
            id,
            Closed {
                session_id: id.to_string(),
                reason: req.reason.clone(),
            },
        )
        .await?;
    if let Some(parent) = &s.parent_session_id {
        let last = store::messages_of(change.conn(), id, None)
            .await?
            .into_iter()
            .rev()
            .find(|m| m.role == MessageRole::Assistant);
        let result = serde_json::json!({
            "reason": req.reason,
            "summary": s.summary.clone().or_else(|| last.as_ref().map(|m| m.content_text.clone())),
            "lastMessageId": last.map(|m| m.message_id),
        });
        change
            .emit(
                parent,
                ChildCompleted {
                    child_session_id: id.to_string(),
                    parent_session_id: parent.clone(),
                    result,
                },
            )
            .await?;
    }
    change.commit().await?;
    Ok(OK)
}

pub async fn resume(reg: Registry, _ctx: RequestContext, req: SessionRef) -> Result<SuccessResponse> {
    let id = req.session_id.as_str();
    let refuse = |st: SessionStatus| {
        format!(
            "session {id} is {}; archived sessions cannot be resumed (fork it to continue)",
            st.as_str()
        )
    };
    let event = Resumed {
        session_id: id.to_string(),
    };
    transition(
        &reg,
        id,
        &[SessionStatus::Closed, SessionStatus::Discovered],
        SessionStatus::Active,
        refuse,
        event,
    )
    .await
}

pub async fn archive(reg: Registry, _ctx: RequestContext, req: SessionRef) -> Result<SuccessResponse> {
    let id = req.session_id.as_str();
    let refuse = |st: SessionStatus| format!("session {id} is {}; close it before archiving", st.as_str());
    let event = Archived {
        session_id: id.to_string(),
    };
    transition(
        &reg,
        id,
        &[SessionStatus::Closed],
        SessionStatus::Archived,
        refuse,
        event,
    )
    .await
}

pub async fn purge(reg: Registry, _ctx: RequestContext, req: SessionRef) -> Result<PurgeResponse> {
    let mut change = Change::begin(&reg).await?;
    let id = &req.session_id;
    let s = match store::lock_session(change.conn(), id).await? {
        None => return Err(RegistryError::session_not_found(id)),
        // Already purged: the retry of a purge that succeeded.
        Some(store::Stored::Purged) => {
            return Ok(PurgeResponse {
                success: true,
                events_deleted: Some(0),
                error: None,
            });
        }
        Some(store::Stored::Live(s)) => s,
    };
    if s.status != SessionStatus::Archived {
        return Err(RegistryError::Conflict(format!(
            "session {id} is {}; purge requires an archived session (close, then archive, then purge)",
            s.status.as_str()
        )));
    }
    let children = store::child_ids(change.conn(), id).await?;
    if !children.is_empty() {
        return Err(RegistryError::Conflict(format!(
            "session {id} has {} child session(s) whose history starts in it ({}); purge them first",
            children.len(),
            children.join(", ")
        )));
    }
    // The event log first: if it cannot delete, the session stays archived and the caller may
    // retry, rather than being told it is purged while its events live on. The session's
    // outbox rows are locked first, so the forwarder cannot re-send one into the log meanwhile.
    let unforwarded = store::lock_session_events(change.conn(), id).await?;
    let events_deleted = match reg.settings.purge_event_log {
        // Forwarded registry events were counted by the log; count the rest once.
        true => purge_event_log(&reg, id).await? + unforwarded,
        false => store::count_session_events(change.conn(), id).await?,
    };
    let through_seq = crate::handoff::watermark(change.conn()).await?;
    purge_deliveries(&reg, change.conn(), id, through_seq).await?;
    store::purge(change.conn(), id).await?;
    change.emit(id, Purged { session_id: id.clone() }).await?;
    change.commit().await?;
    Ok(PurgeResponse {
        success: true,
        events_deleted: Some(events_deleted),
        error: None,
    })
}

/// The delivery runner forgets the session's deliveries and ignores its hand-off entries up to
/// `through_seq` from now on (the registry drops those it had not handed over yet);
/// `unavailable` while the runner cannot answer, so the purge is retried.
pub(crate) async fn purge_deliveries(
    reg: &Registry,
    conn: &mut sqlx::PgConnection,
    session_id: &str,
    through_seq: i64,
) -> Result<()> {
    use relay_contracts::{delivery::PurgeDeliveriesRequest, rpc::DeliveryPurge};
    crate::handoff::forget_session(conn, session_id, through_seq).await?;
    if !reg.relay.enabled() {
        return Ok(());
    }
    let req = PurgeDeliveriesRequest {
        session_id: session_id.to_string(),
        through_seq,
    };
    let timeout = std::time::Duration::from_secs(30);
    relay_bus::client::call::<DeliveryPurge>(&reg.nats, &req, timeout)
        .await
        .map_err(RegistryError::Upstream)?;
    Ok(())
}

async fn purge_event_log(reg: &Registry, session_id: &str) -> Result<i64> {
    use relay_contracts::{events::PurgeSessionRequest, rpc::EventPurgeSession};
    let req = PurgeSessionRequest {
        session_id: session_id.to_string(),
    };
    let timeout = std::time::Duration::from_secs(30);
    let reply = relay_bus::client::call::<EventPurgeSession>(&reg.nats, &req, timeout)
        .await
        .map_err(RegistryError::Upstream)?;
    Ok(reply.events_deleted)
}

pub async fn fork(reg: Registry, ctx: RequestContext, req: ForkRequest) -> Result<SessionIdResponse> {
    let child_id = req.existing_session_id.clone().unwrap_or_else(new_id);
    check_id("existingSessionId", &child_id)?;
    let mut change = Change::begin(&reg).await?;
    // Locked so the fork point cannot move while we read it.
    let source = store::lock_live(change.conn(), &req.source_session_id).await?;
    let fork_point = match &req.from_message_id {
        Some(m) => {
            crate::posting::require_in_conversation(change.conn(), &source.session_id, m).await?;
            Some(m.clone())
        }
        None => match store::last_message_id(change.conn(), &source.session_id).await? {
            Some(m) => Some(m),
            // An empty source inherits its own fork point, so the child still sees the ancestors.
            None => source.fork_point_message_id.clone(),
        },
    };
    let now = now_ms();
    let mut child = new_session(child_id.clone(), now);
    child.parent_session_id = Some(source.session_id.clone());
    child.root_session_id = Some(
        source
            .root_session_id
            .clone()
            .unwrap_or_else(|| source.session_id.clone()),
    );
    child.branch_kind = Some(req.branch_kind.map_or(BranchKind::Fork, Into::into));
    child.fork_point_message_id = fork_point.clone();
    child.fork_transforms = req.transforms;
    child.title = req.name.or(source.title.clone());
    child.target_working_directory = req.target_working_directory.or(source.target_working_directory.clone());
    child.execution_target_id = source.execution_target_id.clone();
    child.approval_policy_override = source.approval_policy_override;
    let kind = child.branch_kind.unwrap_or(BranchKind::Fork);
    // Seed 002 `session.forking`: before the change, in the same commit.
    change
        .emit(
            &source.session_id,
            Forking {
                child_session_id: child_id.clone(),
                parent_session_id: source.session_id.clone(),
                reason: format!("{} of {}", kind_name(kind), source.session_id),
            },
        )
        .await?;
    insert_new(&mut change, &child).await?;
    change
        .emit(
            &source.session_id,
            Forked {
                session_id: child_id.clone(),
                child_session_id: child_id.clone(),
                parent_session_id: source.session_id.clone(),
                fork_point: fork_point.clone(),
            },
        )
        .await?;
    change
        .emit(
            &source.session_id,
            BranchCreated {
                session_id: child_id.clone(),
                child_session_id: child_id.clone(),
                parent_session_id: source.session_id.clone(),
                kind,
                fork_point_message_id: fork_point,
                transforms: child.fork_transforms.clone(),
            },
        )
        .await?;
    let workspace = change.workspace.clone();
    change.commit().await?;
    // A fork copies a conversation: who took a copy, of what, is the audit trail's.
    let detail = serde_json::json!({ "sourceSessionId": source.session_id });
    relay_bus::audit::record(&reg.nats, &workspace, &ctx, "session.fork", &child_id, Some(detail));
    Ok(SessionIdResponse { session_id: child_id })
}

/// Locks parent and child (in id order, so two merges cannot deadlock) and checks that the
/// child is an open branch of the parent.
async fn lock_branch(change: &mut Change, parent_id: &str, child_id: &str) -> Result<(Session, Session)> {
    if parent_id == child_id {
        // Found first: an unknown session answers `not_found` here too, as another
        // workspace's does (`scoped`), so the two never differ.
        store::lock_live(change.conn(), parent_id).await?;
        return Err(RegistryError::Invalid(
            "childSessionId and parentSessionId are the same session".into(),
        ));
    }
    let (parent, child) = if parent_id < child_id {
        let p = store::lock_live(change.conn(), parent_id).await?;
        (p, store::lock_live(change.conn(), child_id).await?)
    } else {
        let c = store::lock_live(change.conn(), child_id).await?;
        (store::lock_live(change.conn(), parent_id).await?, c)
    };
    if child.parent_session_id.as_deref() != Some(parent_id) {
        return Err(RegistryError::Conflict(format!(
            "session {child_id} is not a child of {parent_id}"
        )));
    }
    if let Some(state) = store::branch_state(change.conn(), child_id).await? {
        return Err(RegistryError::Conflict(format!(
            "session {child_id} was already {state}"
        )));
    }
    Ok((parent, child))
}

/// Closes a finished branch (if still open) and marks how it ended.
async fn end_branch(change: &mut Change, mut child: Session, state: &str, handoff: Option<&str>) -> Result<()> {
    let was_open = child.status == SessionStatus::Active || child.status == SessionStatus::Discovered;
    if was_open {
        child.status = SessionStatus::Closed;
    }
    if let Some(h) = handoff {
        child.summary = Some(h.to_string());
        child.summary_updated_at = Some(now_ms());
    }
    child.last_activity_at = now_ms();
    store::save_session(change.conn(), &child).await?;
    store::set_branch_state(change.conn(), &child.session_id, state).await?;
    if was_open {
        let reason = Some(format!("branch {state}"));
        change
            .emit(
                &child.session_id,
                Closed {
                    session_id: child.session_id.clone(),
                    reason,
                },
            )
            .await?;
    }
    Ok(())
}

pub async fn merge(reg: Registry, _ctx: RequestContext, req: MergeRequest) -> Result<MergeResponse> {
    let mut change = Change::begin(&reg).await?;
    let (mut parent, child) = lock_branch(&mut change, &req.parent_session_id, &req.child_session_id).await?;
    if parent.status == SessionStatus::Archived {
        return Err(RegistryError::Conflict(format!(
            "parent session {} is archived and read-only",
            parent.session_id
        )));
    }
    change
        .emit(
            &parent.session_id,
            Merging {
                child_session_id: req.child_session_id.clone(),
                parent_session_id: parent.session_id.clone(),
            },
        )
        .await?;
    // The handoff is the caller's summary, else what the branch said last.
    let last = store::messages_of(change.conn(), &child.session_id, None)
        .await?
        .into_iter()
        .rev()
        .find(|m| m.role == MessageRole::Assistant);
    let handoff = match req.summary {
        Some(s) => s,
        None => last.as_ref().map(|m| m.content_text.clone()).unwrap_or_default(),
    };
    end_branch(&mut change, child, "merged", Some(&handoff)).await?;
    parent.last_activity_at = now_ms();
    store::save_session(change.conn(), &parent).await?;
    change
        .emit(
            &parent.session_id,
            Merged {
                child_session_id: req.child_session_id.clone(),
                parent_session_id: parent.session_id.clone(),
                handoff: handoff.clone(),
            },
        )
        .await?;
    change
        .emit(
            &parent.session_id,
            BranchMerged {
                session_id: parent.session_id.clone(),
                child_session_id: req.child_session_id.clone(),
                parent_session_id: parent.session_id.clone(),
                result_json: Some(serde_json::json!({ "handoff": handoff }).to_string()),
                result_message_id: last.map(|m| m.message_id),
            },
        )
        .await?;
    change.commit().await?;
    Ok(MergeResponse {
        success: true,
        handoff: Some(handoff),
    })
}

pub async fn abandon(reg: Registry, _ctx: RequestContext, req: AbandonRequest) -> Result<SuccessResponse> {
    let mut change = Change::begin(&reg).await?;
    let (_, child) = lock_branch(&mut change, &req.parent_session_id, &req.child_session_id).await?;
    end_branch(&mut change, child, "abandoned", None).await?;
    change
        .emit(
            &req.child_session_id,
            Abandoned {
                session_id: req.child_session_id.clone(),
                parent_session_id: Some(req.parent_session_id.clone()),
            },
        )
        .await?;
    change.commit().await?;
    Ok(OK)
}

fn kind_name(kind: BranchKind) -> &'static str {
    match kind {
        BranchKind::Aside => "aside",
        BranchKind::Branch => "branch",
        BranchKind::Compress => "compress",
        BranchKind::Coordinator => "coordinator",
        BranchKind::Fork => "fork",
        BranchKind::Rewrite => "rewrite",
        BranchKind::Subagent => "subagent",
    }
}
