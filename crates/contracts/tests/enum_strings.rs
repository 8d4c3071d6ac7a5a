//! One spelling per variant: every contract enum's `as_str` (derived by strum) is the name serde
//! writes on the wire, so logs, SQL text columns and NATS subjects never drift from the JSON.

use relay_contracts::ErrorCode;
use relay_contracts::{automation, capabilities, consensus, delivery, keys, messaging, permission, prompts, session};
use serde::Serialize;
use strum::IntoEnumIterator;

fn spelled_as_serde_does<T>(as_str: fn(T) -> &'static str) -> usize
where
    T: IntoEnumIterator + Serialize + Copy + std::fmt::Debug,
{
    let mut n = 0;
    for v in T::iter() {
        let wire = serde_json::to_value(v).unwrap();
        assert_eq!(wire, serde_json::Value::from(as_str(v)), "{v:?}");
        n += 1;
    }
    n
}

#[test]
fn every_enums_string_is_its_serde_name() {
    let variants = [
        spelled_as_serde_does(automation::WebhookDeliveryStatus::as_str),
        spelled_as_serde_does(automation::ScheduleStatus::as_str),
        spelled_as_serde_does(capabilities::AttachmentKind::as_str),
        spelled_as_serde_does(capabilities::DeliveryMode::as_str),
        spelled_as_serde_does(consensus::ProposalStatus::as_str),
        spelled_as_serde_does(delivery::DeliveryStatus::as_str),
        spelled_as_serde_does(delivery::ReceiptStatus::as_str),
        spelled_as_serde_does(keys::KeyRole::as_str),
        spelled_as_serde_does(messaging::Priority::as_str),
        spelled_as_serde_does(permission::Decision::as_str),
        spelled_as_serde_does(permission::Risk::as_str),
        spelled_as_serde_does(prompts::PromptKind::as_str),
        spelled_as_serde_does(session::SessionStatus::as_str),
        spelled_as_serde_does(session::AgentStatus::as_str),
        spelled_as_serde_does(ErrorCode::as_str),
    ];
    assert!(variants.iter().all(|n| *n > 1), "{variants:?}");
}

#[test]
fn roles_and_lifecycle_operations_keep_their_names() {
    use relay_contracts::capabilities::LifecycleOp;
    use relay_contracts::context::Role;
    let roles: Vec<&str> = Role::iter().map(Role::as_str).collect();
    assert_eq!(roles, ["operator", "viewer", "service", "harness", "admin"]);
    let ops: Vec<&str> = LifecycleOp::iter().map(LifecycleOp::as_str).collect();
    assert_eq!(
        ops,
        [
            "lifecycle.release",
            "lifecycle.pause",
            "lifecycle.resume",
            "lifecycle.fork",
            "lifecycle.snapshot"
        ]
    );
}
