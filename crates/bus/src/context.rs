//! The request context on the wire: set on every outgoing call and publish in one place
//! ([`inject`], used by [`crate::client`]), read once per incoming request ([`extract`], used by
//! [`crate::service`]).
//!
//! An outgoing call says who makes it: inside [`act_as`] (the gateway acting for an operator)
//! that context; otherwise this process ([`set_identity`], a service names itself when it
//! connects), in the workspace of the request being served, if any.

use async_nats::HeaderMap;
use relay_contracts::context::{CALLER_HEADER, ORIGIN_HEADER, WORKSPACE_HEADER};
use relay_contracts::{Caller, RequestContext};
use std::future::Future;
use std::sync::RwLock;

static IDENTITY: RwLock<Option<Caller>> = RwLock::new(None);
/// (workspace, agentId) when this process is a harness with its own NATS identity.
static HARNESS: RwLock<Option<(String, String)>> = RwLock::new(None);

tokio::task_local! {
    static OUTGOING: RequestContext;
}

/// Names this process as the caller of its calls (a harness names its agent once attached).
pub fn set_identity(caller: Caller) {
    *IDENTITY.write().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(caller);
}

/// This process is the harness of `agent_id` in `workspace`, by its credentials: it calls as
/// that agent, on the harness form of each subject (`harness.<workspace>.<agentId>.<subject>`),
/// the only subjects its NATS identity may publish on.
pub fn set_harness(workspace: &str, agent_id: &str) {
    *HARNESS.write().unwrap_or_else(std::sync::PoisonError::into_inner) =
        Some((workspace.to_string(), agent_id.to_string()));
    set_identity(Caller::Agent(Some(agent_id.to_string())));
}

/// (workspace, agentId) of this process, if it is a harness with its own identity.
pub fn harness() -> Option<(String, String)> {
    HARNESS
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}

/// The subject a call to `subject` goes out on from this process.
pub fn outgoing_subject(subject: &str) -> String {
    match harness() {
        Some((workspace, agent)) => relay_contracts::access::harness_subject(&workspace, &agent, subject),
        None => subject.to_string(),
    }
}

/// Names this process unless it already has a name.
pub fn set_default_identity(caller: Caller) {
    IDENTITY
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get_or_insert(caller);
}

pub fn identity() -> Caller {
    IDENTITY
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
        .unwrap_or_default()
}

/// Runs `fut` with its calls made as `ctx`.
pub async fn act_as<F: Future>(ctx: RequestContext, fut: F) -> F::Output {
    OUTGOING.scope(ctx, fut).await
}

/// The context the next call from this task carries.
pub fn outgoing() -> RequestContext {
    OUTGOING
        .try_with(Clone::clone)
        .unwrap_or_else(|_| RequestContext::new(identity(), relay_contracts::context::DEFAULT_WORKSPACE))
}

/// Serves one request: calls made while handling it come from this process, in its workspace.
pub(crate) async fn serving<F: Future>(incoming: &RequestContext, fut: F) -> F::Output {
    act_as(RequestContext::new(identity(), incoming.workspace.clone()), fut).await
}

pub(crate) fn inject(headers: &mut HeaderMap) {
    let ctx = outgoing();
    headers.insert(CALLER_HEADER, ctx.caller.to_string().as_str());
    headers.insert(WORKSPACE_HEADER, ctx.workspace.as_str());
    if let Some(origin) = &ctx.origin {
        headers.insert(ORIGIN_HEADER, origin.as_str());
    }
}

pub(crate) fn extract(headers: Option<&HeaderMap>) -> RequestContext {
    let get = |name: &str| headers.and_then(|h| h.get(name)).map(async_nats::HeaderValue::as_str);
    RequestContext::from_headers(get(CALLER_HEADER), get(WORKSPACE_HEADER), get(ORIGIN_HEADER))
}
