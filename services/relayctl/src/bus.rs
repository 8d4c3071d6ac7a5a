//! Calling the mesh: as whom, and from where in the event log.

use crate::error::{CtlError, Result};
use relay_client::Client;
use relay_contracts::{Caller, RequestContext, events};
use std::future::Future;

/// Runs `call` as relayctl, a person at the operator's terminal, in `workspace`.
pub async fn as_operator<T>(workspace: &str, call: impl Future<Output = T>) -> T {
    let ctx = RequestContext::new(Caller::Operator("relayctl".into()), workspace);
    relay_bus::context::act_as(ctx, call).await
}

/// Runs `call` as `admin:relayctl` in `workspace`: relayctl holds the admin identity.
pub async fn as_admin<T>(workspace: &str, call: impl Future<Output = T>) -> T {
    let ctx = RequestContext::new(Caller::Admin("relayctl".into()), workspace);
    relay_bus::context::act_as(ctx, call).await
}

/// Where following the log starts: after `--from-seq`, or at the head (live only).
pub async fn start_seq(c: &Client, from_seq: Option<i64>) -> Result<i64> {
    match from_seq {
        Some(seq) if seq < 0 => Err(CtlError::Invalid("--from-seq must not be negative".into())),
        Some(seq) => Ok(seq),
        None => Ok(c
            .event_since(&events::SinceRequest {
                seq: 0,
                limit: Some(1),
                ..Default::default()
            })
            .await?
            .head_seq),
    }
}
