//! Schedules and webhooks act for whoever made them. A person's key can be revoked: from then
//! on what it started stops (its schedules pause, its webhooks are disabled), checked with the
//! registry, which owns keys, each time they would act.

use crate::Automation;
use relay_contracts::keys::{KeyRef, is_key_id};
use relay_contracts::{Caller, ErrorCode, WireError, rpc};
use std::time::Duration;

/// `Ok` while `created_by` may still act: a service, an agent, or a key not revoked;
/// `unauthorized` for a revoked or deleted key; the registry's error when it cannot tell now
/// (retryable: the run is tried again).
pub async fn stands(a: &Automation, created_by: &str) -> Result<(), WireError> {
    let key_id = match Caller::parse(created_by) {
        Caller::Admin(id) | Caller::Operator(id) | Caller::Viewer(id) if is_key_id(&id) => id,
        _ => return Ok(()),
    };
    let req = KeyRef { key_id: key_id.clone() };
    let revoked = match relay_bus::client::call::<rpc::KeyGet>(&a.nats, &req, Duration::from_secs(5)).await {
        Ok(key) => key.revoked_at.is_some(),
        Err(e) if e.code() == ErrorCode::NotFound => true,
        Err(e) => return Err(e),
    };
    match revoked {
        true => Err(WireError::new(
            ErrorCode::Unauthorized,
            format!("key {key_id}, which created this, was revoked"),
        )),
        false => Ok(()),
    }
}
