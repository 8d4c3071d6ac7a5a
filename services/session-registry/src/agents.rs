//! Attached agents: attach, release, capability discovery and declaration, config resolution.

use crate::Registry;
use crate::error::{RegistryError, Result};
use crate::posting::{self, Post};
use crate::store::{self, Change, new_id, now_ms};
use relay_contracts::RequestContext;
use relay_contracts::capabilities::{AgentSessionCapabilities, LifecycleOp};
use relay_contracts::session::AgentStatus;
use relay_contracts::session::{events::*, *};
use serde_json::json;

/// Rejects capabilities serde accepted but the seed forbids, listing every reason.
fn validate_capabilities(caps: &AgentSessionCapabilities) -> Result<()> {
    caps.validate().map_err(|problems| RegistryError::InvalidWith {
        message: format!("invalid capabilities: {}", problems.join("; ")),
        details: json!({ "problems": problems }),
    })
}

/// What an agent needs to be able to do for an operation; `capability_unsupported` otherwise.
pub(crate) fn require(agent: &Agent, op: LifecycleOp) -> Result<()> {
    let caps = agent.effective_capabilities();
    if caps.supports(op) {
        return Ok(());
    }
    Err(RegistryError::Capability {
        agent_id: agent.agent_id.clone(),
        capability: op.as_str().into(),
        reason: "the agent session did not declare it".into(),
    })
}

/// The handle an attaching agent gets in `workspace` (under [`store::lock_handles`]): the one
/// asked for if valid and free, or the adapter's name, then `-2`, `-3`, … until one is free.
async fn choose_handle(
    conn: &mut sqlx::PgConnection,
    workspace: &str,
    asked: Option<&str>,
    adapter_name: &str,
) -> Result<String> {
    if let Some(asked) = asked {
        let Some(h) = handle_of(asked) else {
            return Err(RegistryError::Invalid(format!(
                "handle {asked:?} is not valid: 1 to {MAX_HANDLE_CHARS} letters, digits, '-' or '_', starting with a letter or digit"
            )));
        };
        if store::agent_by_handle(conn, workspace, &h).await?.is_some() {
            return Err(RegistryError::Conflict(format!(
                "handle @{h} is taken by a live agent of this workspace"
            )));
        }
        return Ok(h);
    }
    let slug: String = adapter_name
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '-' })
        .skip_while(|c| !c.is_ascii_alphanumeric())
        .take(MAX_HANDLE_CHARS - 4)
        .collect();
    let base = if slug.is_empty() { "agent".to_string() } else { slug };
    let taken = store::handles_like(conn, workspace, &base).await?;
    if !taken.contains(&base) {
        return Ok(base);
    }
    let free = (2..)
        .map(|n| format!("{base}-{n}"))
        .find(|h| !taken.contains(h))
        .unwrap_or_default();
    Ok(free)
}

/// Attaches an agent to a locked, active session and records `agent.added`. A new lead demotes
/// the previous one to member.
pub(crate) async fn attach_agent(
    reg: &Registry,
    change: &mut Change,
    session: &mut Session,
    a: AttachRequest,
    agent_id: Option<String>,
) -> Result<Agent> {
    if session.status != SessionStatus::Active {
        return Err(RegistryError::Conflict(format!(
            "cannot attach an agent to session {}: it is {}{}",
            session.session_id,
            session.status.as_str(),
            if session.status == SessionStatus::Closed {
                "; resume it first"
            } else {
                ""
            }
        )));
    }
    if let Some(caps) = &a.capabilities {
        validate_capabilities(caps)?;
    }
    let resolved = resolve(reg, &a.agent)?;
    let workspace = store::session_workspace(change.conn(), &session.session_id)
        .await?
        .unwrap_or_else(|| relay_contracts::context::DEFAULT_WORKSPACE.to_string());
    store::lock_handles(change.conn(), &workspace).await?;
    let handle = choose_handle(change.conn(), &workspace, a.handle.as_deref(), &resolved.adapter_name).await?;
    let mut agents = store::session_agents(change.conn(), &session.session_id).await?;
    if let Some(lead) = &a.spawned_by
        && !agents.iter().any(|x| &x.agent_id == lead && x.is_attached())
    {
        return Err(RegistryError::Invalid(format!(
            "spawnedBy {lead}: no attached agent of session {} has that id",
            session.session_id
        )));
    }
    let has_lead = agents.iter().any(|x| x.is_attached() && x.role == AgentRole::Lead);
    let role = a
        .role
        .unwrap_or(if has_lead { AgentRole::Member } else { AgentRole::Lead });
    if role == AgentRole::Lead {
        for old in agents
            .iter_mut()
            .filter(|x| x.is_attached() && x.role == AgentRole::Lead)
        {
            old.role = AgentRole::Member;
            change.save_agent(old).await?;
        }
    }
    if let Some(id) = &agent_id
        && store::find_agent(change.conn(), id).await.is_ok()
    {
        return Err(RegistryError::Conflict(format!("agent {id} is already attached")));
    }
    let now = now_ms();
    let adapter_session_id = a
        .adapter_session_id
        .or_else(|| {
            a.agent
                .extra
                .get("adapterSessionId")
                .and_then(|v| v.as_str())
                .map(String::from)
        })
        .unwrap_or_else(new_id);
    let agent = Agent {
        agent_id: agent_id.unwrap_or_else(new_id),
        session_id: session.session_id.clone(),
        adapter_id: a
            .agent
            .adapter_id
            .clone()
            .unwrap_or_else(|| resolved.adapter_name.clone()),
        adapter_name: resolved.adapter_name,
        adapter_session_id: Some(adapter_session_id.clone()),
        client_id: None,
        compression_mode: None,
        created_at: now,
        cwd: a.agent.cwd.clone(),
        harness_id: a.harness_id,
        last_activity_at: now,
        model: resolved.model,
        persona_id: a.agent.persona_id.clone(),
        profile_id: a
            .agent
            .extra
            .get("profileId")
            .and_then(|v| v.as_str())
            .map(String::from),
        provider_config_id: resolved.provider_config_id,
        role,
        status: AgentRecordStatus::Active,
        capabilities: Some(a.capabilities.unwrap_or_else(AgentSessionCapabilities::minimum)),
        agent_capabilities: a.agent_capabilities,
        handle: Some(handle),
        spawned_by: a.spawned_by,
        host_id: None,
        offline_since: None,
        placement: a.placement,
        reported_status: None,
        reported_status_at: None,
    };
    change.insert_agent(&agent).await?;
    if role == AgentRole::Lead {
        session.lead_agent_id = Some(agent.agent_id.clone());
        session.adapter_id = Some(agent.adapter_id.clone());
        session.adapter_name = Some(agent.adapter_name.clone());
        session.adapter_session_id = Some(adapter_session_id.clone());
    }
    session.last_activity_at = now;
    store::save_session(change.conn(), session).await?;
    change
        .emit(
            &session.session_id,
            AgentAdded {
                session_id: session.session_id.clone(),
                agent_id: agent.agent_id.clone(),
                adapter_id: agent.adapter_id.clone(),
                adapter_name: agent.adapter_name.clone(),
                adapter_session_id,
                cwd: agent.cwd.clone(),
                model: agent.model.clone(),
                role: Some(role),
            },
        )
        .await?;
    Ok(agent)
}

pub async fn attach(reg: Registry, ctx: RequestContext, mut req: AttachRequest) -> Result<AttachResponse> {
    let mut change = Change::begin(&reg).await?;
    let mut session = store::lock_live(change.conn(), &req.session_id).await?;
    let initial_message = req.initial_message.take();
    // A harness with its own identity attaches the agent it was minted for.
    let agent = attach_agent(&reg, &mut change, &mut session, req, ctx.agent).await?;
    let (mut message_id, mut turn_id) = (None, None);
    if let Some(content) = initial_message {
        let sent = posting::post(
            &mut change,
            &mut session,
            Post {
                content: Some(content),
                targets: vec![agent.clone()],
                ..Post::default()
            },
        )
        .await?;
        message_id = Some(sent.message_id);
        turn_id = Some(sent.turn_id);
    }
    change.commit().await?;
    Ok(AttachResponse {
        adapter_session_id: agent.adapter_session_id.unwrap_or_default(),
        handle: agent.handle,
        agent_id: agent.agent_id,
        role: agent.role,
        message_id,
        turn_id,
    })
}

/// Releases an agent session. Needs `lifecycle.release`: an agent that cannot release is never
/// reported as released.
pub async fn release(reg: Registry, _ctx: RequestContext, req: ReleaseRequest) -> Result<SuccessResponse> {
    let mut change = Change::begin(&reg).await?;
    let mut session = store::lock_live(change.conn(), &req.session_id).await?;
    let agents = store::session_agents(change.conn(), &session.session_id).await?;
    let Some(mut agent) = agents.iter().find(|a| a.agent_id == req.agent_id).cloned() else {
        return Err(RegistryError::NotFound {
            what: "agent",
            id: format!("{} in session {}", req.agent_id, req.session_id),
        });
    };
    if !agent.is_attached() {
        return Ok(OK);
    }
    require(&agent, LifecycleOp::Release)?;
    dispose(&mut change, &mut session, &mut agent).await?;
    change.commit().await?;
    Ok(OK)
}

/// Ends an attached agent (its handle is free again, its waiting deliveries fail):
/// `session.agent.removed`.
pub(crate) async fn dispose(change: &mut Change, session: &mut Session, agent: &mut Agent) -> Result<()> {
    agent.status = AgentRecordStatus::Disposed;
    agent.last_activity_at = now_ms();
    change.save_agent(agent).await?;
    if session.lead_agent_id.as_deref() == Some(agent.agent_id.as_str()) {
        session.lead_agent_id = None;
    }
    session.last_activity_at = now_ms();
    store::save_session(change.conn(), session).await?;
    let removed = AgentRemoved {
        session_id: session.session_id.clone(),
        agent_id: agent.agent_id.clone(),
    };
    change.emit(&session.session_id, removed).await
}

/// `agent.list`: the caller's workspace's agents (every workspace for the mesh's services).
pub async fn list(reg: Registry, ctx: RequestContext, req: AgentListRequest) -> Result<AgentListResponse> {
    let (live_only, reported) = match req.status.as_deref() {
        None | Some("live") => (true, None),
        Some("all") => (false, None),
        Some(other) => match serde_json::from_value::<AgentStatus>(json!(other)) {
            Ok(status) => (true, Some(status.as_str())),
            Err(_) => {
                return Err(RegistryError::Invalid(format!(
                    "status {other:?}: live, all, or a status agents report (starting, active, idle, waiting, blocked, paused, releasing, released, offline, failed)"
                )));
            }
        },
    };
    let limit = req.limit.unwrap_or(reg.settings.default_page_size);
    if !(1..=reg.settings.max_page_size).contains(&limit) || req.offset.is_some_and(|o| o < 0) {
        return Err(RegistryError::Invalid(format!(
            "limit must be 1..={} and offset at least 0",
            reg.settings.max_page_size
        )));
    }
    let mut conn = reg.db.acquire().await?;
    let filter = store::AgentFilter {
        workspace: ctx.scope(),
        live_only,
        session_id: req.session_id.as_deref(),
        reported,
    };
    let (agents, total) = store::list_agents(&mut conn, &filter, limit, req.offset.unwrap_or(0)).await?;
    Ok(AgentListResponse { agents, total })
}

/// `agent.get`: by handle (`@bob` or `bob`: a live agent of the caller's workspace), else by id.
/// Handles are shorter than the ids the mesh makes, so a name is never both.
pub async fn get(reg: Registry, ctx: RequestContext, req: AgentGetRequest) -> Result<Agent> {
    let mut conn = reg.db.acquire().await?;
    let only_handle = req.agent.starts_with('@');
    if let Some(h) = handle_of(&req.agent)
        && let Some(a) = store::agent_by_handle(&mut conn, &ctx.workspace, &h).await?
    {
        return store::with_reported_status(&mut conn, a).await;
    }
    let unknown = || RegistryError::NotFound {
        what: if only_handle { "handle" } else { "agent" },
        id: req.agent.clone(),
    };
    if only_handle {
        return Err(unknown());
    }
    let workspace = store::agent_workspace(&mut conn, &req.agent).await?;
    if workspace.is_none() || ctx.scope().is_some_and(|own| workspace.as_deref() != Some(own)) {
        return Err(unknown());
    }
    let agent = store::find_agent(&mut conn, &req.agent).await?;
    store::with_reported_status(&mut conn, agent).await
}

/// Capability discovery (AG-UI style): what the agent declared, as of now.
pub async fn capabilities(reg: Registry, _ctx: RequestContext, req: AgentRef) -> Result<CapabilitiesResponse> {
    let mut conn = reg.db.acquire().await?;
    let agent = store::find_agent(&mut conn, &req.agent_id).await?;
    Ok(CapabilitiesResponse {
        capabilities: agent.effective_capabilities(),
        agent_id: agent.agent_id,
        session_id: agent.session_id,
        agent_capabilities: agent.agent_capabilities,
    })
}

/// A harness re-declares what a session can do (capabilities change with connection state).
/// An attached agent and its locked session, the agent read again under the lock, for a change
/// to the agent's record; `conflict` once it was released.
pub(crate) async fn lock_attached(change: &mut Change, agent_id: &str) -> Result<(Session, Agent)> {
    let session_id = store::find_agent(change.conn(), agent_id).await?.session_id;
    let session = store::lock_live(change.conn(), &session_id).await?;
    let agent = store::find_agent(change.conn(), agent_id).await?;
    if !agent.is_attached() {
        return Err(RegistryError::Conflict(format!(
            "agent {} was released",
            agent.agent_id
        )));
    }
    Ok((session, agent))
}

/// Stores a changed agent record (from [`lock_attached`]): the agent, its session's activity,
/// and `session.updated` naming `agents`.
pub(crate) async fn save_changed(
    change: &mut Change,
    session: &mut Session,
    agent: &mut Agent,
    now: i64,
) -> Result<()> {
    agent.last_activity_at = now;
    change.save_agent(agent).await?;
    session.last_activity_at = now;
    store::save_session(change.conn(), session).await?;
    let updated = Updated {
        session_id: session.session_id.clone(),
        changed_properties: vec!["agents".into()],
    };
    change.emit(&session.session_id, updated).await
}

/// `session.agent.setTools`, from coordination's `action.expose`: the agent's actions in its
/// AG-UI `tools.items`. It must be attached, in the caller's workspace, and declare
/// `actions.expose`.
pub async fn set_tools(
    reg: Registry,
    ctx: RequestContext,
    req: relay_contracts::actions::SetToolsRequest,
) -> Result<Agent> {
    let mut change = Change::begin(&reg).await?;
    if store::agent_workspace(change.conn(), &req.agent_id).await?.as_deref() != Some(ctx.workspace.as_str()) {
        return Err(RegistryError::agent_not_found(&req.agent_id));
    }
    let (mut session, mut agent) = lock_attached(&mut change, &req.agent_id).await?;
    if agent.effective_capabilities().actions.and_then(|a| a.expose) != Some(true) {
        return Err(RegistryError::Capability {
            agent_id: agent.agent_id.clone(),
            capability: "actions.expose".into(),
            reason: "the agent did not declare it".into(),
        });
    }
    let mut agui = agent.agent_capabilities.clone().unwrap_or_default();
    agui.tools
        .get_or_insert_with(Default::default)
        .insert("items".into(), serde_json::Value::Array(req.items));
    agent.agent_capabilities = Some(agui);
    save_changed(&mut change, &mut session, &mut agent, now_ms()).await?;
    change.commit().await?;
    Ok(agent)
}

pub async fn declare_capabilities(
    reg: Registry,
    _ctx: RequestContext,
    req: DeclareCapabilitiesRequest,
) -> Result<CapabilitiesResponse> {
    if req.capabilities.is_none() && req.agent_capabilities.is_none() {
        return Err(RegistryError::Invalid(
            "give capabilities, agentCapabilities or both".into(),
        ));
    }
    if let Some(caps) = &req.capabilities {
        validate_capabilities(caps)?;
    }
    let mut change = Change::begin(&reg).await?;
    let (mut session, mut agent) = lock_attached(&mut change, &req.agent_id).await?;
    if let Some(caps) = req.capabilities {
        agent.capabilities = Some(caps);
    }
    if let Some(agui) = req.agent_capabilities {
        agent.agent_capabilities = Some(agui);
    }
    save_changed(&mut change, &mut session, &mut agent, now_ms()).await?;
    change.commit().await?;
    Ok(CapabilitiesResponse {
        capabilities: agent.effective_capabilities(),
        agent_id: agent.agent_id,
        session_id: session.session_id,
        agent_capabilities: agent.agent_capabilities,
    })
}

/// Resolves a selection to a concrete adapter. `adapter` needs adapterName; `canonical-model`
/// needs a model whose prefix is configured in `registry.model_adapters`; `persona` needs a
/// personaId; any other kind names its adapter itself or by model.
pub(crate) fn resolve(reg: &Registry, sel: &AgentSelection) -> Result<ResolveAgentConfigResponse> {
    let by_model = |model: &str| {
        reg.settings
            .model_adapters
            .iter()
            .filter(|(prefix, _)| model.starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(_, adapter)| adapter.clone())
    };
    let adapter_name = match sel.kind.as_str() {
        "" => {
            return Err(RegistryError::Invalid("agent selection kind must not be empty".into()));
        }
        "adapter" => sel
            .adapter_name
            .clone()
            .ok_or_else(|| RegistryError::Invalid("a selection of kind `adapter` needs adapterName".into()))?,
        "canonical-model" => {
            let model = sel
                .model
                .as_deref()
                .ok_or_else(|| RegistryError::Invalid("a selection of kind `canonical-model` needs model".into()))?;
            by_model(model).ok_or_else(|| {
                RegistryError::Invalid(format!(
                    "no adapter is configured for model {model} (registry.model_adapters)"
                ))
            })?
        }
        kind => {
            if kind == "persona" && sel.persona_id.is_none() {
                return Err(RegistryError::Invalid(
                    "a selection of kind `persona` needs personaId".into(),
                ));
            }
            sel.adapter_name
                .clone()
                .or_else(|| sel.model.as_deref().and_then(by_model))
                .unwrap_or_else(|| kind.to_string())
        }
    };
    Ok(ResolveAgentConfigResponse {
        adapter_name,
        model: sel.model.clone(),
        provider_config_id: sel.provider_config_id.clone(),
        allowed_tools: sel.allowed_tools.clone(),
        disallowed_tools: sel.disallowed_tools.clone(),
        allowed_directories: sel.allowed_directories.clone(),
        reasoning_effort: sel.reasoning_effort,
        system_prompt: sel.system_prompt.clone(),
    })
}

pub async fn resolve_agent_config(
    reg: Registry,
    _ctx: RequestContext,
    req: ResolveAgentConfigRequest,
) -> Result<ResolveAgentConfigResponse> {
    resolve(&reg, &req.selection)
}
