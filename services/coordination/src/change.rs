//! One change to coordination's tables: a transaction plus the events it reports, written to
//! the outbox (`coordination_events`) in that transaction and forwarded to the event log once
//! it commits, so the log never reports a change that was rolled back.

use crate::Coordination;
use crate::error::Result;
use relay_contracts::session::EventPayload;
use sqlx::{PgConnection, Postgres, Transaction};
use std::sync::Arc;
use tokio::sync::Notify;

pub struct Change {
    tx: Transaction<'static, Postgres>,
    outbox: Arc<Notify>,
    emitted: bool,
}

impl Change {
    pub async fn begin(c: &Coordination) -> Result<Self> {
        Ok(Change {
            tx: c.db.begin().await?,
            outbox: c.outbox.clone(),
            emitted: false,
        })
    }

    pub fn conn(&mut self) -> &mut PgConnection {
        &mut self.tx
    }

    /// Records `payload` on `stream` (a session, a channel `#ops`, `consensus:<id>`) in
    /// `workspace`.
    pub async fn emit<P: EventPayload>(&mut self, workspace: &str, stream: &str, payload: P) -> Result<()> {
        crate::OUTBOX.write(&mut self.tx, workspace, stream, &payload).await?;
        self.emitted = true;
        Ok(())
    }

    pub async fn commit(self) -> Result<()> {
        self.tx.commit().await?;
        if self.emitted {
            self.outbox.notify_one();
        }
        Ok(())
    }
}
