//! The operations every surface (REST, gRPC, MCP, A2A, AG-UI, the console) reaches the services
//! through: a bus call, with the caller's role checked here once against the subject's
//! declaration, and the few operations more than one surface makes.
//!
//! - [`sessions`]: create a session (spawning its agent), send it a person's message.
//! - [`events`]: a page of the event log.

pub(crate) mod events;
pub(crate) mod sessions;

use crate::{ApiError, AppState};
use relay_contracts::permission::{DecideRequest, DecideResponse};
use relay_contracts::session::{GetResponse, Session, SessionRef};
use relay_contracts::{Rpc, rpc};

/// One bus call as the caller: refused here unless the caller's role may call the subject.
pub(crate) async fn call<R: Rpc>(s: &AppState, req: &R::Request) -> Result<R::Response, ApiError> {
    crate::auth::check_role(R::SUBJECT)?;
    Ok(relay_bus::client::call::<R>(&s.nats, req, s.timeout()).await?)
}

pub(crate) async fn find_session(s: &AppState, id: String) -> Result<Session, ApiError> {
    let r: GetResponse = call::<rpc::SessionGet>(s, &SessionRef { session_id: id.clone() }).await?;
    r.session
        .ok_or_else(|| ApiError::NotFound(format!("session {id} not found")))
}

/// A person's decision on a permission request, as the caller (what the MCP tool, the AG-UI
/// resume and an A2A answer make).
pub(crate) async fn decide_permission(
    s: &AppState,
    request_id: String,
    approved: bool,
    reason: Option<String>,
) -> Result<DecideResponse, ApiError> {
    let req = DecideRequest { request_id, reason };
    if approved {
        call::<rpc::PermissionApprove>(s, &req).await
    } else {
        call::<rpc::PermissionDeny>(s, &req).await
    }
}
