//! Who is behind a session and what its agents run on (seed 002): `session.observeClient`
//! records the client and the canonical account it resolved to (`session.clientAccount.changed`
//! when that account changes); `session.agent.swap` changes an agent's model or working
//! directory (`session.connectorSwap.editRequested`, for a UI to offer a history edit).

use crate::Registry;
use crate::error::{RegistryError, Result};
use crate::lifecycle::{check_id, check_text};
use crate::store::{self, Change, now_ms};
use relay_contracts::RequestContext;
use relay_contracts::session::events::{ClientAccountChanged, ConnectorSwapEditRequested};
use relay_contracts::session::*;
use serde_json::{Value, json};

pub async fn observe(reg: Registry, _ctx: RequestContext, req: ObserveClientRequest) -> Result<ObserveClientResponse> {
    check_id("sessionId", &req.session_id)?;
    check_text("clientId", &req.client_id, 256)?;
    check_text("clientAccountId", &req.client_account_id, 256)?;
    check_text("kind", &req.kind, 64)?;
    check_text("source", &req.source, 64)?;
    let mut change = Change::begin(&reg).await?;
    let mut s = store::lock_live(change.conn(), &req.session_id).await?;
    let observed_at = now_ms();
    let observation = json!({
        "clientId": req.client_id, "kind": req.kind, "observedAt": observed_at,
        "payload": req.payload.map_or_else(|| json!({}), Value::Object), "source": req.source,
    });
    let previous = s.client_account_id.clone();
    let changed = previous.as_deref() != Some(req.client_account_id.as_str());
    s.client_id = Some(req.client_id.clone());
    s.client_account_id = Some(req.client_account_id.clone());
    s.last_client_identity_observation = Some(observation.clone());
    store::save_session(change.conn(), &s).await?;
    if changed {
        change
            .emit(
                &s.session_id,
                ClientAccountChanged {
                    session_id: s.session_id.clone(),
                    client_id: req.client_id,
                    client_account_id: req.client_account_id,
                    previous_client_account_id: previous.clone(),
                    last_client_identity_observation: observation,
                    observed_at,
                    source: req.source,
                },
            )
            .await?;
    }
    change.commit().await?;
    Ok(ObserveClientResponse {
        changed,
        previous_client_account_id: previous,
    })
}

pub async fn swap(reg: Registry, _ctx: RequestContext, req: SwapAgentRequest) -> Result<SuccessResponse> {
    check_id("sessionId", &req.session_id)?;
    if let Some(m) = &req.model {
        check_text("model", m, 256)?;
    }
    if let Some(c) = &req.cwd {
        check_text("cwd", c, 4096)?;
    }
    let mut change = Change::begin(&reg).await?;
    store::lock_live(change.conn(), &req.session_id).await?;
    let mut agent = store::find_agent(change.conn(), &req.agent_id).await?;
    if agent.session_id != req.session_id {
        return Err(RegistryError::agent_not_found(&req.agent_id));
    }
    let (previous_model, previous_cwd) = (agent.model.clone(), agent.cwd.clone());
    if req.model.as_ref().is_none_or(|m| Some(m) == previous_model.as_ref())
        && req.cwd.as_ref().is_none_or(|c| Some(c) == previous_cwd.as_ref())
    {
        return Ok(SuccessResponse { success: true });
    }
    if let Some(m) = &req.model {
        agent.model = Some(m.clone());
    }
    if let Some(c) = &req.cwd {
        agent.cwd = Some(c.clone());
    }
    change.save_agent(&agent).await?;
    change
        .emit(
            &req.session_id,
            ConnectorSwapEditRequested {
                session_id: req.session_id.clone(),
                agent_id: agent.agent_id.clone(),
                previous_model,
                new_model: agent.model.clone(),
                previous_cwd,
                new_cwd: agent.cwd.clone(),
            },
        )
        .await?;
    change.commit().await?;
    Ok(SuccessResponse { success: true })
}
