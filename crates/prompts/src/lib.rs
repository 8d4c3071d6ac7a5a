//! Personas and profiles of a workspace (`prompt.*`): the system prompts a session's agents
//! are given. A library that a service hosts, by data ownership: its table (`registry_prompts`)
//! is the session registry's, whose `session.resolveSystemPrompt` puts an agent's profile and
//! persona together with [`find`]; the registry registers these handlers ([`serve`]).
//!
//! # Layout
//! - [`handlers`]: put, get, list, delete.
//! - [`store`]: the table's SQL, [`find`].
//! - [`error`]: [`PromptsError`], mapped once onto the wire.

mod error;
mod handlers;
mod store;

pub use error::PromptsError;
pub use store::find;

use relay_bus::service::{ServiceError, ServiceHost};
use relay_contracts::rpc;
use sqlx::PgPool;

/// The service that hosts the prompts: it gives the handlers its database.
pub trait Host: Clone + Send + Sync + 'static {
    fn prompts_db(&self) -> &PgPool;
}

/// Registers the `prompt.*` endpoints on the host's micro service.
pub async fn serve<S: Host>(host: &mut ServiceHost<S>) -> Result<(), ServiceError> {
    host.serve::<rpc::PromptPut>(handlers::put::<S>).await?;
    host.serve::<rpc::PromptGet>(handlers::get::<S>).await?;
    host.serve::<rpc::PromptList>(handlers::list::<S>).await?;
    host.serve::<rpc::PromptDelete>(handlers::delete::<S>).await?;
    Ok(())
}
