//! The request context on the wire: set on every outgoing call and publish in one place
//! ([`inject`], used by [`crate::client`]), read once per incoming request ([`extract`], used by
//! [`crate::service`]).
//!
//! An outgoing call says who makes it: inside [`act_as`] (the gateway acting for an operator)
//! that context; otherwise this process ([`set_identity`], a service names itself when it
//! connects), in the workspace of the request being served, if any.

use async_nats::HeaderMap;
use relay_contracts::context::{CALLER_HEADER, WORKSPACE_HEADER};
use relay_contracts::{Caller, RequestContext};
use std::future::Future;
use std::sync::RwLock;

static IDENTITY: RwLock<Option<Caller>> = RwLock::new(None);

tokio::task_local! {
    static OUTGOING: RequestContext;
}

/// Names this process as the caller of its calls (a harness names its agent once attached).
pub fn set_identity(caller: Caller) {
    *IDENTITY.write().unwrap_or_else(|e| e.into_inner()) = Some(caller);
}

/// Names this process unless it already has a name.
pub fn set_default_identity(caller: Caller) {
    IDENTITY
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert(caller);
}

pub fn identity() -> Caller {
    IDENTITY
        .read()
        .unwrap_or_else(|e| e.into_inner())
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
}

pub(crate) fn extract(headers: Option<&HeaderMap>) -> RequestContext {
    let get = |name: &str| headers.and_then(|h| h.get(name)).map(|v| v.as_str());
    RequestContext::from_headers(get(CALLER_HEADER), get(WORKSPACE_HEADER))
}
