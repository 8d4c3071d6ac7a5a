//! What a person's key or an agent may write into the log: events of types a caller may write
//! ([`relay_contracts::events::written_by_services_only`] are the services' own), about sessions
//! and agents of its own workspace. The registry owns sessions and agents, so it is asked, as
//! the caller: what it would not show the caller (another workspace's, or unknown) may not be
//! named. A forged `status.active` or `usage.updated` about another tenant's agent would hold
//! its deliveries or spend its budget.
//!
//! An id's workspace never changes, so each id the caller may name is remembered.

use crate::error::{IngestError, Result};
use relay_contracts::events::{NewEvent, written_by_services_only};
use relay_contracts::session::{AgentGetRequest, SessionRef};
use relay_contracts::{ErrorCode, RequestContext, rpc};
use std::collections::{BTreeSet, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Ids remembered at most; the set starts over beyond it.
const MAX_KNOWN: usize = 100_000;
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Clone)]
pub struct Owners {
    nats: async_nats::Client,
    /// `(workspace, id)` pairs the registry showed to a caller of that workspace.
    known: Arc<Mutex<HashSet<(String, String)>>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Session,
    Agent,
}

impl Owners {
    pub fn new(nats: async_nats::Client) -> Owners {
        Owners {
            nats,
            known: Arc::default(),
        }
    }

    /// `forbidden` for a type only services write, `not_found` for a session or agent the caller
    /// cannot see — as for an id that never existed. Services (unscoped) write anything.
    pub async fn check(&self, ctx: &RequestContext, events: &[NewEvent]) -> Result<()> {
        let Some(workspace) = ctx.scope() else {
            return Ok(());
        };
        if let Some(e) = events.iter().find(|e| written_by_services_only(&e.event_type)) {
            return Err(IngestError::Forbidden(format!(
                "{} events are written by the mesh's services only",
                e.event_type
            )));
        }
        let named = named(ctx, events);
        // An agent's events are about itself: any session they name is its own.
        if let Some(agent) = &ctx.agent {
            for (_, id) in named.iter().filter(|(k, _)| *k == Kind::Session) {
                relay_bus::agents::check_own_session(&self.nats, "event.append", agent, id)
                    .await
                    .map_err(IngestError::Upstream)?;
            }
        }
        for (kind, id) in named {
            if self.is_known(workspace, &id) {
                continue;
            }
            if !self.visible(ctx, kind, &id).await? {
                let what = match kind {
                    Kind::Session => "session",
                    Kind::Agent => "agent",
                };
                return Err(IngestError::NotFound(format!("{what} {id} not found")));
            }
            let mut known = self.known.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if known.len() >= MAX_KNOWN {
                known.clear();
            }
            known.insert((workspace.to_string(), id));
        }
        Ok(())
    }

    fn is_known(&self, workspace: &str, id: &str) -> bool {
        self.known
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains(&(workspace.to_string(), id.to_string()))
    }

    /// Whether the registry shows `id` to this caller.
    async fn visible(&self, ctx: &RequestContext, kind: Kind, id: &str) -> Result<bool> {
        let asked = relay_bus::context::act_as(ctx.clone(), async {
            match kind {
                Kind::Session => {
                    let req = SessionRef { session_id: id.into() };
                    relay_bus::client::call::<rpc::SessionGet>(&self.nats, &req, LOOKUP_TIMEOUT)
                        .await
                        .map(|r| r.session.is_some())
                }
                Kind::Agent => {
                    let req = AgentGetRequest { agent: id.into() };
                    relay_bus::client::call::<rpc::AgentGet>(&self.nats, &req, LOOKUP_TIMEOUT)
                        .await
                        .map(|_| true)
                }
            }
        })
        .await;
        match asked {
            Ok(seen) => Ok(seen),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(false),
            Err(e) => Err(IngestError::Upstream(e)),
        }
    }
}

/// The sessions and agents the events name, at the top level or as payload fields
/// (`sessionId`, `parentSessionId`, `agentId`, …); a harness's own agent is not asked about.
fn named(ctx: &RequestContext, events: &[NewEvent]) -> BTreeSet<(Kind, String)> {
    let mut out = BTreeSet::new();
    for e in events {
        out.extend(e.session_id.iter().map(|id| (Kind::Session, id.clone())));
        out.extend(e.agent_id.iter().map(|id| (Kind::Agent, id.clone())));
        if let Some(fields) = e.payload.as_object() {
            for (field, value) in fields {
                let Some(id) = value.as_str().filter(|id| !id.is_empty()) else {
                    continue;
                };
                match relay_bus::scope::kind(field).as_str() {
                    "sessionId" => out.insert((Kind::Session, id.to_string())),
                    "agentId" => out.insert((Kind::Agent, id.to_string())),
                    _ => false,
                };
            }
        }
    }
    if let Some(own) = &ctx.agent {
        out.remove(&(Kind::Agent, own.clone()));
    }
    out
}
