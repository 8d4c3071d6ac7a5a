//! Seed 002 compression: `session.compress` asks each live agent to compact its context the
//! way its CLI does (`/compact` for Claude Code and Codex, `/compress` for Gemini CLI) — a
//! message like any other, so it waits for the agent's turn — and records `session.compressed`
//! (the cost aggregator resets the session's context window on it) and `session.squash`.
//! `session.requestCompression` only asks: it emits `session.compressionRequested`.

use crate::Registry;
use crate::error::{RegistryError, Result};
use crate::lifecycle::{check_id, check_text};
use crate::posting::{Post, post};
use crate::store::{self, Change};
use relay_contracts::RequestContext;
use relay_contracts::cost::{ContextWindowRequest, ContextWindowResponse};
use relay_contracts::session::events::{Compressed, CompressionRequested, Squash};
use relay_contracts::session::*;
use serde_json::{Value, json};
use std::time::Duration;

const MAX_STEPS: usize = 20;

/// The compaction command of a CLI, by its adapter name.
fn compaction_command(adapter: &str) -> Option<&'static str> {
    let adapter = adapter.to_ascii_lowercase();
    if adapter.starts_with("claude") || adapter.starts_with("codex") {
        Some("/compact")
    } else if adapter.starts_with("gemini") {
        Some("/compress")
    } else {
        None
    }
}

/// The context window's tokens as the cost aggregator counts them; 0 when it cannot say.
async fn tokens_now(reg: &Registry, session_id: &str) -> i64 {
    let req = ContextWindowRequest {
        session_id: session_id.to_string(),
    };
    let state: std::result::Result<ContextWindowResponse, _> = relay_bus::client::call::<
        relay_contracts::rpc::SessionGetContextWindowState,
    >(&reg.nats, &req, Duration::from_secs(3))
    .await;
    state.ok().and_then(|r| r.state).map_or(0, |s| s.current_tokens)
}

pub async fn compress(reg: Registry, _ctx: RequestContext, req: CompressRequest) -> Result<CompressResponse> {
    check_id("sessionId", &req.session_id)?;
    let tokens_before = tokens_now(&reg, &req.session_id).await;
    let mut change = Change::begin(&reg).await?;
    let mut session = store::lock_live(change.conn(), &req.session_id).await?;
    // The session is found before the rest is checked: an unknown session answers `not_found`
    // whatever the pipeline, as another workspace's does (`scoped`), so the two never differ.
    if req.pipeline.is_empty() || req.pipeline.len() > MAX_STEPS {
        return Err(RegistryError::Invalid(format!("pipeline: 1 to {MAX_STEPS} steps")));
    }
    for (i, step) in req.pipeline.iter().enumerate() {
        check_text(&format!("pipeline[{i}].actionId"), &step.action_id, 128)?;
    }
    if session.status != SessionStatus::Active {
        return Err(RegistryError::Conflict(format!(
            "session {} is {}; only an active session can be compressed",
            session.session_id,
            session.status.as_str()
        )));
    }
    let compressed: Vec<String> = store::messages_of(change.conn(), &session.session_id, None)
        .await?
        .into_iter()
        .map(|m| m.message_id)
        .collect();
    let agents: Vec<Agent> = store::session_agents(change.conn(), &session.session_id)
        .await?
        .into_iter()
        .filter(Agent::is_attached)
        .collect();
    // One message per command, to the agents whose CLI takes it.
    let mut asked = Vec::new();
    for command in ["/compact", "/compress"] {
        let targets: Vec<Agent> = agents
            .iter()
            .filter(|a| compaction_command(&a.adapter_name) == Some(command))
            .cloned()
            .collect();
        if targets.is_empty() {
            continue;
        }
        let sent = post(
            &mut change,
            &mut session,
            Post {
                content: Some(MessageContent::Text(command.into())),
                targets: targets.clone(),
                source: Some(Source::System),
                ..Default::default()
            },
        )
        .await?;
        for a in targets {
            asked.push(json!({
                "agentId": a.agent_id, "adapterName": a.adapter_name, "command": command, "messageId": sent.message_id,
            }));
        }
    }
    let skipped: Vec<Value> = agents
        .iter()
        .filter(|a| compaction_command(&a.adapter_name).is_none())
        .map(|a| json!({ "agentId": a.agent_id, "adapterName": a.adapter_name, "reason": "its CLI has no compaction command" }))
        .collect();
    let pipeline: Vec<Value> = req
        .pipeline
        .iter()
        .map(|s| serde_json::to_value(s).unwrap_or(Value::Null))
        .collect();
    let mut context = serde_json::Map::new();
    context.insert("pipeline".into(), Value::Array(pipeline.clone()));
    context.insert("agents".into(), Value::Array(asked));
    context.insert("skipped".into(), Value::Array(skipped));
    context.insert("compressedMessages".into(), json!(compressed.len()));
    let event_id = store::new_id();
    change
        .emit_as(
            event_id.clone(),
            &session.session_id,
            Compressed {
                event_id: event_id.clone(),
                session_id: session.session_id.clone(),
                tokens_before,
                tokens_after: None,
                pipeline,
            },
        )
        .await?;
    change
        .emit(
            &session.session_id,
            Squash {
                session_id: session.session_id.clone(),
                summary_json: Value::Object(context.clone()).to_string(),
                compressed_message_ids: Some(compressed),
                tokens_before: Some(tokens_before),
                tokens_after: None,
            },
        )
        .await?;
    change.commit().await?;
    Ok(CompressResponse {
        context_json: context,
        event_id,
        tokens_before,
        tokens_after: None,
    })
}

pub async fn request(reg: Registry, _ctx: RequestContext, req: RequestCompressionRequest) -> Result<SuccessResponse> {
    check_id("sessionId", &req.session_id)?;
    check_text("reason", &req.reason, 1000)?;
    if let Some(x) = &req.extension_id {
        check_id("extensionId", x)?;
    }
    let mut change = Change::begin(&reg).await?;
    store::lock_live(change.conn(), &req.session_id).await?;
    change
        .emit(
            &req.session_id,
            CompressionRequested {
                session_id: req.session_id.clone(),
                reason: req.reason,
                source: Some(req.source.unwrap_or(Source::User)),
                extension_id: req.extension_id,
            },
        )
        .await?;
    change.commit().await?;
    Ok(SuccessResponse { success: true })
}
