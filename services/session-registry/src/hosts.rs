//! Agent hosts (`host.*`) are hosted here ([`relay_hosts`]): an agent's host and whether it
//! is offline are part of the agent, changed under its session's lock, so the hosts' handlers
//! and sweep run on the registry's agents and sessions.

use crate::Registry;
use crate::agents::{dispose, lock_attached, save_changed};
use crate::error::RegistryError;
use crate::store::{self, Change};
use relay_contracts::WireError;
use relay_contracts::session::{Agent, EventPayload, Session};
use relay_hosts::{Hosts, HostsError};
use sqlx::PgConnection;
use sqlx::types::Json;

/// The registry's failures, passed on as it would answer them.
fn keeper(e: RegistryError) -> HostsError {
    match e {
        RegistryError::Db(e) => HostsError::Db(e),
        e => HostsError::Upstream(WireError::from(e)),
    }
}

impl relay_hosts::Keeper for Registry {
    type Change = Change;

    fn hosts(&self) -> &Hosts {
        &self.hosts
    }

    async fn begin(&self) -> Result<Change, HostsError> {
        Change::begin(self).await.map_err(keeper)
    }

    async fn agents(conn: &mut PgConnection, agent_ids: &[String]) -> Result<Vec<Agent>, HostsError> {
        let found: Vec<Json<Agent>> = sqlx::query_scalar("SELECT doc FROM registry_agents WHERE agent_id = ANY($1)")
            .bind(agent_ids)
            .fetch_all(conn)
            .await?;
        Ok(found.into_iter().map(|Json(a)| a).collect())
    }

    async fn agents_on(conn: &mut PgConnection, host: &str) -> Result<Vec<String>, HostsError> {
        Ok(sqlx::query_scalar(
            "SELECT agent_id FROM registry_agents
             WHERE doc->>'hostId' = $1 AND doc->>'status' <> 'disposed' ORDER BY agent_id",
        )
        .bind(host)
        .fetch_all(conn)
        .await?)
    }

    async fn agents_in_workspace(
        conn: &mut PgConnection,
        agent_ids: &[&str],
        workspace: &str,
    ) -> Result<Vec<String>, HostsError> {
        store::agents_in_workspace(conn, agent_ids, workspace)
            .await
            .map_err(keeper)
    }

    async fn session_workspace(conn: &mut PgConnection, session_id: &str) -> Result<Option<String>, HostsError> {
        store::session_workspace(conn, session_id).await.map_err(keeper)
    }
}

impl relay_hosts::Change for Change {
    fn conn(&mut self) -> &mut PgConnection {
        Change::conn(self)
    }

    async fn lock_attached(&mut self, agent_id: &str) -> Result<Option<(Session, Agent)>, HostsError> {
        match lock_attached(self, agent_id).await {
            Ok(locked) => Ok(Some(locked)),
            // Released meanwhile.
            Err(RegistryError::Conflict(_)) => Ok(None),
            Err(e) => Err(keeper(e)),
        }
    }

    async fn save(&mut self, session: &mut Session, agent: &mut Agent, now: i64) -> Result<(), HostsError> {
        save_changed(self, session, agent, now).await.map_err(keeper)
    }

    async fn dispose(&mut self, session: &mut Session, agent: &mut Agent) -> Result<(), HostsError> {
        dispose(self, session, agent).await.map_err(keeper)
    }

    async fn emit<P: EventPayload + Send>(&mut self, session_id: &str, payload: P) -> Result<(), HostsError> {
        Change::emit(self, session_id, payload).await.map_err(keeper)
    }

    async fn commit(self) -> Result<(), HostsError> {
        Change::commit(self).await.map_err(keeper)
    }
}
