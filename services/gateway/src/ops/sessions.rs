//! Creating a session (with its agent spawned) and sending it a person's message: what REST
//! and the MCP tools both do.

use super::call;
use crate::{ApiError, AppState};
use relay_contracts::capabilities::DeliveryMode;
use relay_contracts::hosts::SpawnRequest;
use relay_contracts::rpc;
use relay_contracts::session::{
    CloseRequest, CreateRequest, DeliveryRequest, SendMessageRequest, SendMessageResponse, SessionIdResponse, handle_of,
};
use serde::{Deserialize, Serialize};

/// A `cli` is a name the agent spawners are configured with (claude, codex, gemini,
/// claude-tui, …); the spawner says which it knows. Here only its shape is checked.
fn valid_cli(cli: &str) -> bool {
    !cli.is_empty()
        && cli.len() <= 64
        && cli
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

/// Seed 003 `POST /api/v1/sessions`; `sessionId`, `title` are relay extensions.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateSession {
    /// The spawned agent's handle (`@name` or `name`); a free default from the cli's name when
    /// absent. `409` when a live agent of the workspace has it.
    #[schema(pattern = "^@?[A-Za-z0-9][A-Za-z0-9_-]{0,23}$")]
    pub agent: Option<String>,
    /// An agent name the spawners are configured with.
    #[schema(pattern = "^[a-z0-9_-]{1,64}$")]
    pub cli: Option<String>,
    pub task: Option<String>,
    pub cwd: Option<String>,
    pub title: Option<String>,
    pub session_id: Option<String>,
    /// Which agent hosts may run the spawned agent (labels, a named host); none: the least
    /// loaded host that runs `cli`. `503` names why no host fits.
    pub placement: Option<relay_contracts::hosts::Placement>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Created {
    pub session_id: String,
    pub agent_name: Option<String>,
    /// `starting` while a spawned agent comes up, else the session's status.
    pub status: String,
    pub agent_id: Option<String>,
    /// The host the spawned agent runs on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_id: Option<String>,
}

/// Seed 003 `POST /sessions`: a session, and with a `cli` its agent spawned on a host (closed
/// again with the reason when the spawn fails, so no half-made session is left).
pub(crate) async fn create(s: &AppState, req: CreateSession) -> Result<Created, ApiError> {
    if let Some(cli) = &req.cli
        && !valid_cli(cli)
    {
        return Err(ApiError::Invalid(
            "cli must be an agent name the spawners know, such as claude, codex, gemini or claude-tui (lowercase letters, digits, - and _)".into(),
        ));
    }
    if req.task.is_some() && req.cli.is_none() {
        return Err(ApiError::Invalid("task needs a cli to run it".into()));
    }
    if let Some(problems) = req
        .placement
        .as_ref()
        .map(relay_contracts::hosts::Placement::problems)
        .filter(|p| !p.is_empty())
    {
        return Err(ApiError::Invalid(problems.join("; ")));
    }
    if let Some(agent) = &req.agent
        && handle_of(agent).is_none()
    {
        return Err(ApiError::Invalid(format!(
            "agent {agent:?} is the spawned agent's handle: 1 to {} letters, digits, '-' or '_'",
            relay_contracts::session::MAX_HANDLE_CHARS
        )));
    }
    let create = CreateRequest {
        session_id: req.session_id.clone(),
        title: req.title.clone(),
        target_working_directory: req.cwd.clone(),
        ..Default::default()
    };
    let created: SessionIdResponse = call::<rpc::SessionCreate>(s, &create).await?;
    let session_id = created.session_id;
    let Some(cli) = req.cli else {
        return Ok(Created {
            session_id,
            agent_name: req.agent,
            status: "active".into(),
            agent_id: None,
            host_id: None,
        });
    };
    let spawn = SpawnRequest {
        session_id: session_id.clone(),
        agent_name: req.agent.clone(),
        cli,
        task: req.task,
        cwd: req.cwd,
        placement: req.placement,
    };
    // The spawner answers once the agent has attached, which takes longer than a lookup.
    let timeout = std::time::Duration::from_millis(s.settings.spawn_timeout_ms);
    let spawned = relay_bus::client::call::<rpc::AgentSpawn>(&s.nats, &spawn, timeout).await;
    match spawned.map_err(ApiError::from) {
        Ok(spawned) => Ok(Created {
            session_id,
            agent_name: req.agent,
            status: "starting".into(),
            agent_id: Some(spawned.agent_id),
            host_id: spawned.host_id,
        }),
        Err(e) => {
            // No half-made session left behind: it is closed with the reason.
            let close = CloseRequest {
                session_id,
                reason: Some(format!("agent spawn failed: {e}")),
            };
            let _ = call::<rpc::SessionClose>(s, &close).await;
            Err(e)
        }
    }
}

/// Seed 003 `POST /api/v1/sessions/:id/messages`; `mode`, `agentIds` and `messageId` are relay
/// extensions (the delivery mode, the target agents, an idempotency key).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SendMessage {
    pub message: String,
    pub mode: Option<DeliveryMode>,
    /// When a target agent is busy with a running turn: `enqueue` (default), `reject` (409
    /// naming the turn), `interrupt` (cancel the turn, then deliver) or `rollback` (as
    /// interrupt, and the turn's messages are marked superseded).
    #[schema(pattern = "^(enqueue|reject|interrupt|rollback)$")]
    pub on_busy: Option<String>,
    pub agent_ids: Option<Vec<String>>,
    pub message_id: Option<String>,
    /// Hold the message until this Unix time in ms, then send it (a one-time schedule).
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 253402300799000_i64)]
    pub deliver_at: Option<f64>,
    /// Seed 001: urgent and high messages go before normal and low ones waiting for an agent.
    pub priority: Option<relay_contracts::messaging::Priority>,
    /// Seed 001 (RFC 3339): a delivery still waiting then fails with reason `deadline`.
    #[schema(
        max_length = 64,
        pattern = r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
    )]
    pub deadline: Option<String>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Sent {
    pub success: bool,
    pub message_id: String,
    /// Absent while a `deliverAt` message is held.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    pub delivery_ids: Option<Vec<String>>,
    /// With `deliverAt`: the schedule holding it (`GET /schedules/{id}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule_id: Option<String>,
}

/// Seed 003 `POST /sessions/:id/messages`: a person's message to the session's agents.
pub(crate) async fn send(s: &AppState, id: String, req: SendMessage) -> Result<Sent, ApiError> {
    if req
        .deliver_at
        .is_some_and(|at| at.fract() != 0.0 || !(0.0..=253_402_300_799_000.0).contains(&at))
    {
        return Err(ApiError::Invalid("deliverAt: a Unix time in whole ms".into()));
    }
    let send = SendMessageRequest {
        agent_ids: req.agent_ids.map(relay_contracts::session::AgentTargets::Ids),
        delivery: req.mode.map(|mode| DeliveryRequest { mode }),
        delivery_mode: req.on_busy,
        message_id: req.message_id,
        // A JSON integer may come as 1.0e12; the schema says it is whole.
        deliver_at: req.deliver_at.map(|at| at as i64),
        priority: req.priority,
        deadline: req.deadline,
        ..SendMessageRequest::text(id, req.message)
    };
    let r: SendMessageResponse = call::<rpc::SessionSendMessage>(s, &send).await?;
    Ok(Sent {
        success: true,
        message_id: r.message_id,
        turn_id: (!r.turn_id.is_empty()).then_some(r.turn_id),
        delivery_ids: r.delivery_ids,
        schedule_id: r.schedule_id,
    })
}
