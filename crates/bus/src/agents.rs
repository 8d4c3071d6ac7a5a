//! Which session an agent is bound to, asked of the registry (`agent.get`) once per agent: an
//! agent's session never changes, so the answer is kept for the life of the process.
//!
//! What an agent reports about itself — its events, usage, permission requests, questions, a
//! request for compression — may name only its own session: another agent's session of the same
//! workspace is not the reporter's to speak for ([`check_own_session`]).

use relay_contracts::session::AgentGetRequest;
use relay_contracts::{ErrorCode, WireError, rpc};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// Agents remembered at most; the map starts over beyond it.
const MAX_KNOWN: usize = 100_000;

fn known() -> &'static Mutex<HashMap<String, String>> {
    static KNOWN: OnceLock<Mutex<HashMap<String, String>>> = OnceLock::new();
    KNOWN.get_or_init(Default::default)
}

/// The session `agent_id` is bound to; `None` for an agent the registry does not know yet (a
/// harness before it attached).
pub async fn session_of(nats: &async_nats::Client, agent_id: &str) -> Result<Option<String>, WireError> {
    if let Some(s) = known()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(agent_id)
    {
        return Ok(Some(s.clone()));
    }
    let req = AgentGetRequest {
        agent: agent_id.to_string(),
    };
    match crate::client::call::<rpc::AgentGet>(nats, &req, Duration::from_secs(5)).await {
        Ok(agent) => {
            let mut known = known().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if known.len() >= MAX_KNOWN {
                known.clear();
            }
            known.insert(agent_id.to_string(), agent.session_id.clone());
            Ok(Some(agent.session_id))
        }
        Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// `forbidden` when agent `agent_id` names a session other than its own in a report about itself.
pub async fn check_own_session(
    nats: &async_nats::Client,
    subject: &str,
    agent_id: &str,
    named: &str,
) -> Result<(), WireError> {
    match session_of(nats, agent_id).await? {
        Some(own) if own != named => Err(WireError::new(
            ErrorCode::Forbidden,
            format!("{subject}: agent {agent_id} reports only about its own session, not {named}"),
        )
        .with_details(serde_json::json!({ "field": "sessionId" }))),
        _ => Ok(()),
    }
}
