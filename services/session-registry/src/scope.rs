//! Workspace isolation in the registry. A caller confined to a workspace (a key through the
//! gateway, an agent) sees only that workspace's sessions, with their agents, turns and
//! messages: another workspace's session is `not_found`, exactly as an unknown one. Lists,
//! counts and search filter in SQL (query.rs); every other subject goes through
//! `relay_bus::scope::scoped`, which checks the sessions and agents its request names.

use crate::Registry;
use crate::error::{RegistryError, Result};
use relay_contracts::{RequestContext, WireError};
use sqlx::PgConnection;

/// Whether the caller may see `session_id` (true also when it does not exist: the handler then
/// answers for an unknown session as it always does).
pub async fn sees_session(conn: &mut PgConnection, ctx: &RequestContext, session_id: &str) -> Result<bool> {
    let Some(scope) = ctx.scope() else {
        return Ok(true);
    };
    let workspace = crate::store::session_workspace(conn, session_id).await?;
    Ok(workspace.is_none_or(|w| w == scope))
}

impl relay_bus::scope::Scope for Registry {
    async fn workspace_of(&self, field: &str, id: &str) -> std::result::Result<Option<String>, WireError> {
        let mut conn = self.db.acquire().await.map_err(RegistryError::Db)?;
        let found = match field {
            "sessionId" => crate::store::session_workspace(&mut conn, id).await?,
            "agentId" => crate::store::agent_workspace(&mut conn, id).await?,
            _ => None,
        };
        Ok(found)
    }
}
