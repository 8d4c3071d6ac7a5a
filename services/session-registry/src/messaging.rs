//! Relay messaging (`message.*`, `channel.*`) is hosted here ([`relay_messaging`]): a message
//! becomes one message with one delivery in each recipient's session, in the transaction that
//! stores it, so its handlers run on the registry's agents, sessions and send path.

use crate::Registry;
use crate::error::RegistryError;
use crate::posting::{Post, post};
use crate::store::{self, Change};
use relay_contracts::WireError;
use relay_contracts::session::{Agent, EventPayload, Session};
use relay_messaging::{Delivery, Messaging, MessagingError};
use sqlx::PgConnection;

/// The registry's failures, passed on as it would answer them.
fn host(e: RegistryError) -> MessagingError {
    match e {
        RegistryError::Db(e) => MessagingError::Db(e),
        e => MessagingError::Host(WireError::from(e)),
    }
}

impl relay_messaging::Host for Registry {
    type Change = Change;

    fn messaging(&self) -> &Messaging {
        &self.messaging
    }

    async fn begin(&self) -> Result<Change, MessagingError> {
        Change::begin(self).await.map_err(host)
    }

    async fn agent(conn: &mut PgConnection, agent_id: &str) -> Result<Agent, MessagingError> {
        match store::find_agent(conn, agent_id).await {
            Err(RegistryError::NotFound { .. }) => Err(MessagingError::agent_not_found(agent_id)),
            found => found.map_err(host),
        }
    }

    async fn agent_by_handle(
        conn: &mut PgConnection,
        workspace: &str,
        handle: &str,
    ) -> Result<Option<Agent>, MessagingError> {
        store::agent_by_handle(conn, workspace, handle).await.map_err(host)
    }

    async fn agent_workspace(conn: &mut PgConnection, agent_id: &str) -> Result<Option<String>, MessagingError> {
        store::agent_workspace(conn, agent_id).await.map_err(host)
    }
}

impl relay_messaging::Change for Change {
    fn conn(&mut self) -> &mut PgConnection {
        Change::conn(self)
    }

    async fn lock_session(&mut self, session_id: &str) -> Result<Session, MessagingError> {
        Change::lock_live(self, session_id).await.map_err(host)
    }

    async fn post(&mut self, session: &mut Session, to: &Agent, d: Delivery) -> Result<String, MessagingError> {
        let posted = post(
            self,
            session,
            Post {
                content: Some(d.content),
                targets: vec![to.clone()],
                delivery_mode: d.delivery_mode,
                source: Some(d.source),
                relay: Some(d.relay),
                priority: d.priority,
                deadline: d.deadline,
                ..Default::default()
            },
        )
        .await
        .map_err(host)?;
        Ok(posted
            .delivery_ids
            .and_then(|d| d.into_iter().next())
            .unwrap_or_default())
    }

    async fn emit<P: EventPayload + Send>(&mut self, session_id: &str, payload: P) -> Result<(), MessagingError> {
        Change::emit(self, session_id, payload).await.map_err(host)
    }

    async fn emit_in<P: EventPayload + Send>(
        &mut self,
        workspace: &str,
        stream: &str,
        payload: P,
    ) -> Result<(), MessagingError> {
        Change::emit_in(self, workspace, stream, payload).await.map_err(host)
    }

    fn hold(&mut self, turn: relay_messaging::Turn) {
        self.held = Some(turn);
    }

    async fn commit(self) -> Result<(), MessagingError> {
        Change::commit(self).await.map_err(host)
    }
}
