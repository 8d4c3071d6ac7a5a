//! Tenancy: the workspaces and the gateway's API keys (`workspace.*`, `key.*`). A library that
//! a service hosts, by data ownership: its tables (`registry_workspaces`, `registry_api_keys`)
//! are the session registry's, which reads a session's workspace policy beside them and knows
//! which agents are live; the registry registers these handlers on its micro service ([`serve`]).
//!
//! # Layout
//! - [`workspaces`]: create, get, list, set a delivery policy, delete (revoking its keys).
//! - [`keys`]: create, list, revoke, get, verify (what the gateway asks of each bearer token).
//! - [`error`]: [`TenancyError`], mapped once onto the wire.

mod error;
mod keys;
mod workspaces;

pub use error::TenancyError;

use relay_bus::service::{ServiceError, ServiceHost};
use relay_contracts::rpc;
use sqlx::{PgConnection, PgPool};
use std::future::Future;

/// What the handlers work with: the host's database and NATS connection.
#[derive(Clone)]
pub struct Tenancy {
    pub db: PgPool,
    pub nats: async_nats::Client,
}

/// The service that hosts tenancy: it gives the handlers their [`Tenancy`], and answers what
/// only it knows.
pub trait Host: Clone + Send + Sync + 'static {
    fn tenancy(&self) -> &Tenancy;

    /// How many agents of `workspace` are live, read in the transaction that deletes it (a
    /// workspace with live agents is not deleted).
    fn live_agents(
        &self,
        conn: &mut PgConnection,
        workspace: &str,
    ) -> impl Future<Output = Result<i64, sqlx::Error>> + Send;
}

/// Registers the `workspace.*` and `key.*` endpoints on the host's micro service.
pub async fn serve<S: Host>(host: &mut ServiceHost<S>) -> Result<(), ServiceError> {
    host.serve::<rpc::WorkspaceCreate>(workspaces::create::<S>).await?;
    host.serve::<rpc::WorkspaceGet>(workspaces::get::<S>).await?;
    host.serve::<rpc::WorkspaceList>(workspaces::list::<S>).await?;
    host.serve::<rpc::WorkspaceSetDeliveryPolicy>(workspaces::set_delivery_policy::<S>)
        .await?;
    host.serve::<rpc::WorkspaceDelete>(workspaces::delete::<S>).await?;
    host.serve::<rpc::KeyCreate>(keys::create::<S>).await?;
    host.serve::<rpc::KeyList>(keys::list::<S>).await?;
    host.serve::<rpc::KeyRevoke>(keys::revoke::<S>).await?;
    host.serve::<rpc::KeyVerify>(keys::verify::<S>).await?;
    host.serve::<rpc::KeyGet>(keys::get::<S>).await?;
    Ok(())
}
