//! Agent control (seed 003 §2.3): pause holds an agent's deliveries, resume lets them go in
//! order, stop releases the agent session and cancels what it was never sent, input passes raw
//! terminal input to its harness, interrupt asks the harness to interrupt the CLI.

use crate::settle::Outcome;
use crate::{DeliveryError, Result, Runner};
use relay_contracts::RequestContext;
use relay_contracts::delivery::*;
use relay_contracts::rpc;
use relay_contracts::{ErrorCode, WireError};
use std::time::Duration;

const HARNESS_TIMEOUT: Duration = Duration::from_secs(5);

async fn set_paused(runner: &Runner, agent_id: &str, paused: bool) -> Result<AgentHold> {
    if agent_id.is_empty() {
        return Err(DeliveryError::Invalid("agentId must not be empty".into()));
    }
    let mut tx = runner.db.begin().await?;
    sqlx::query(
        "INSERT INTO delivery_agents (agent_id, paused, updated_at) VALUES ($1, $2, $3)
         ON CONFLICT (agent_id) DO UPDATE SET paused = EXCLUDED.paused, updated_at = EXCLUDED.updated_at",
    )
    .bind(agent_id)
    .bind(paused)
    .bind(relay_bus::now_ms())
    .execute(&mut *tx)
    .await?;
    let waiting: i64 =
        sqlx::query_scalar("SELECT count(*) FROM deliveries WHERE agent_id = $1 AND status IN ('pending', 'deferred')")
            .bind(agent_id)
            .fetch_one(&mut *tx)
            .await?;
    if !paused {
        crate::store::wake_agent(&mut *tx, agent_id).await?;
    }
    tx.commit().await?;
    tracing::info!(agent_id, paused, waiting, "agent delivery hold changed");
    Ok(AgentHold {
        agent_id: agent_id.to_string(),
        paused,
        waiting,
    })
}

pub(crate) async fn known_agent(runner: &Runner, agent_id: &str) -> Result<()> {
    let known: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM delivery_agents WHERE agent_id = $1 AND doc IS NOT NULL)
             OR EXISTS (SELECT 1 FROM deliveries WHERE agent_id = $1)",
    )
    .bind(agent_id)
    .fetch_one(&runner.db)
    .await?;
    if known {
        Ok(())
    } else {
        Err(DeliveryError::NotFound(format!("agent {agent_id}")))
    }
}

/// `agent.pause`: nothing more is delivered to the agent until `agent.resume`. A delivery
/// already handed over finishes.
pub async fn pause(runner: Runner, _ctx: RequestContext, req: AgentRef) -> Result<AgentHold> {
    known_agent(&runner, &req.agent_id).await?;
    set_paused(&runner, &req.agent_id, true).await
}

/// `agent.resume`: the deliveries held while paused go out, in order.
pub async fn resume(runner: Runner, _ctx: RequestContext, req: AgentRef) -> Result<AgentHold> {
    known_agent(&runner, &req.agent_id).await?;
    set_paused(&runner, &req.agent_id, false).await
}

/// Cancels the waiting deliveries matching `filter` (SQL on `deliveries`, `$1` bound to `arg`),
/// each with a `delivery.cancelled` event; returns how many.
pub async fn cancel_where(runner: &Runner, filter: &str, arg: &str, reason: &str) -> Result<i64> {
    let filter = format!("{filter} AND status IN ('pending', 'accepted', 'deferred')");
    let keys = crate::store::keys_where(&runner.db, &filter, arg).await?;
    let n = keys.len() as i64;
    let outcomes = keys
        .into_iter()
        .map(|key| Outcome {
            status: DeliveryStatus::Cancelled,
            available_at: relay_bus::now_ms(),
            reason: Some(reason.to_string()),
            retryable: None,
            metadata: None,
            event: "cancelled",
            attempts: key.attempts,
            owner: None,
            key,
        })
        .collect();
    runner.settler.settle(outcomes).await?;
    Ok(n)
}

/// `agent.stop`: asks the harness to release the agent session and cancels every delivery it
/// was not yet sent (each with a `delivery.cancelled` event, never a silent drop).
pub async fn stop(runner: Runner, ctx: RequestContext, req: StopAgentRequest) -> Result<StopAgentResponse> {
    known_agent(&runner, &req.agent_id).await?;
    if let Some(caller) = ctx.agent.as_deref().filter(|c| *c != req.agent_id) {
        let spawned: Option<String> =
            sqlx::query_scalar("SELECT doc->>'spawnedBy' FROM delivery_agents WHERE agent_id = $1")
                .bind(&req.agent_id)
                .fetch_optional(&runner.db)
                .await?
                .flatten();
        if spawned.as_deref() != Some(caller) {
            return Err(DeliveryError::Forbidden(format!(
                "agent {caller} may stop only itself and the agents it spawned, not {}",
                req.agent_id
            )));
        }
    }
    let workspace: Option<String> = sqlx::query_scalar("SELECT workspace FROM deliveries WHERE agent_id = $1 LIMIT 1")
        .bind(&req.agent_id)
        .fetch_optional(&runner.db)
        .await?;
    let reason = req.reason.clone().unwrap_or_else(|| "agent stopped".into());
    // Hold first, so nothing new is handed over while the harness shuts down.
    set_paused(&runner, &req.agent_id, true).await?;
    let release = ReleaseRequest {
        reason: Some(reason.clone()),
    };
    let subject = rpc::agent::release(&req.agent_id);
    let released =
        match relay_bus::client::request::<_, ReleaseResponse>(&runner.nats, &subject, &release, HARNESS_TIMEOUT).await
        {
            Ok(r) => r.released,
            Err(e) => {
                tracing::warn!(agent_id = %req.agent_id, error = %e, "harness did not answer the release");
                false
            }
        };
    let cancelled = cancel_where(
        &runner,
        "agent_id = $1",
        &req.agent_id,
        &format!("agent stopped: {reason}"),
    )
    .await?;
    let detail = serde_json::json!({"reason": reason, "released": released, "cancelled": cancelled});
    let workspace = workspace.unwrap_or_else(|| ctx.workspace.clone());
    relay_bus::audit::record(
        &runner.nats,
        &workspace,
        &ctx,
        "agent.stop",
        &req.agent_id,
        Some(detail),
    );
    Ok(StopAgentResponse { released, cancelled })
}

/// A request to the agent's harness; a harness that cannot be reached is named in the error.
async fn ask_harness<Req: serde::Serialize, Resp: serde::de::DeserializeOwned>(
    runner: &Runner,
    agent_id: &str,
    subject: &str,
    req: &Req,
) -> Result<Resp> {
    relay_bus::client::request(&runner.nats, subject, req, HARNESS_TIMEOUT)
        .await
        .map_err(|e| match e.code() {
            ErrorCode::Unavailable => DeliveryError::Upstream(WireError::new(
                ErrorCode::Unavailable,
                format!("the harness of agent {agent_id} cannot be reached: {}", e.error.message),
            )),
            _ => DeliveryError::Upstream(e),
        })
}

/// `agent.input`: raw input for the agent's terminal, passed to its harness as is.
pub async fn input(runner: Runner, _ctx: RequestContext, req: InputRequest) -> Result<InputResponse> {
    known_agent(&runner, &req.agent_id).await?;
    ask_harness(&runner, &req.agent_id, &rpc::agent::input(&req.agent_id), &req).await
}

/// `agent.interrupt`: the harness interrupts what the CLI is doing, the way that CLI expects.
pub async fn interrupt(runner: Runner, _ctx: RequestContext, req: InterruptRequest) -> Result<TurnState> {
    known_agent(&runner, &req.agent_id).await?;
    let control = TurnControl {
        interrupt: true,
        reason: req.reason,
    };
    ask_harness(&runner, &req.agent_id, &rpc::agent::turn(&req.agent_id), &control).await
}
