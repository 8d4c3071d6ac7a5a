//! Who sends a relay message: an agent only with its own NATS identity. A harness-SDK agent
//! connected with the admin's credentials (the only ones `make up` names) attaches and receives,
//! but its `message.send` says "agent" on a plain subject: it would go out from `anonymous`,
//! which nobody can answer, so the registry refuses it and says how to get agent credentials.
//! With credentials minted for the agent, the same SDK sends as the agent and is answered.
//!
//! One test in its own binary: the SDK names the process's caller (and a harness identity routes
//! every call of the process), as it does in a harness.

mod common;
use relay_contracts::ErrorCode;
use relay_contracts::delivery::{MessageContext, Receipt, ReceiptStatus};
use relay_contracts::messaging::{SendRequest, To};
use relay_contracts::rpc;
use relay_contracts::session::{AgentSelection, Message};
use relay_harness::{AgentSession, AttachOptions, Binding, receipt};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

struct Quiet;

impl AgentSession for Quiet {
    async fn receive_message(&self, _message: Message, ctx: MessageContext) -> Receipt {
        receipt(ReceiptStatus::Delivered, &ctx.id)
    }

    async fn release(&self, _reason: Option<String>) {}
}

fn options(session: &str, handle: &str) -> AttachOptions {
    let caps = json!({"messaging": {"receive": true, "send": true}, "delivery": {"modes": ["immediate"]},
                      "events": {"emits": ["status.changed"]}, "lifecycle": {"release": true}});
    AttachOptions::new(
        session,
        AgentSelection::adapter("sdk"),
        serde_json::from_value(caps).unwrap(),
    )
    .handle(handle)
}

async fn relay_messages(m: &common::Mesh) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM registry_relay_messages")
        .fetch_one(&m.db.pool().await)
        .await
        .unwrap()
}

fn dm(to: &str, text: &str) -> SendRequest {
    SendRequest {
        to: Some(To::One(to.into())),
        text: text.into(),
        ..SendRequest::default()
    }
}

#[tokio::test]
async fn an_sdk_agent_sends_only_with_its_own_identity_and_is_then_answerable() {
    let m = common::start(1).await;
    let session = common::create(&m).await;
    let caps = json!({"messaging": {"receive": true}, "delivery": {"modes": ["immediate"]},
                      "events": {"emits": []}, "lifecycle": {"release": true}});
    common::attach(&m, &session, "bob", caps).await;

    // The admin's credentials: attached and bound, but its relay message is refused, saying how
    // to get agent credentials, and nothing is stored.
    let lost = Binding::attach(m.client.clone(), options(&session, "lost"), Arc::new(Quiet))
        .await
        .expect("an agent without its identity still attaches and receives");
    let refused = relay_bus::client::call::<rpc::MessageSend>(
        lost.client(),
        &dm("@bob", "hello from lost"),
        Duration::from_secs(10),
    )
    .await
    .expect_err("sent as anonymous");
    assert_eq!(refused.code(), ErrorCode::Forbidden, "{refused}");
    let said = refused.error.message.clone();
    assert!(said.contains("relayctl auth harness"), "{said}");
    assert!(said.contains(&lost.agent_id), "names the agent: {said}");
    assert_eq!(relay_messages(&m).await, 0, "nothing stored");

    // Credentials minted for the agent (as `relayctl auth harness` and the spawner mint them):
    // the SDK attaches as that agent, its message is from it, and a person's reply reaches it.
    let found_id = uuid::Uuid::now_v7().to_string();
    let settings = relay_bus::settings::NatsSettings {
        url: m.nats.url.clone(),
        creds: m.nats.harness_creds(&found_id, "default"),
        ..Default::default()
    };
    let nats = relay_bus::connect_nats(&settings, "sdk-agent").await.unwrap();
    let found = Binding::attach(nats, options(&session, "found"), Arc::new(Quiet))
        .await
        .unwrap();
    assert_eq!(found.agent_id, found_id, "attached as the agent its credentials name");
    let sent = relay_bus::client::call::<rpc::MessageSend>(
        found.client(),
        &dm("@bob", "hello from found"),
        Duration::from_secs(10),
    )
    .await
    .unwrap();
    let stored = relay_testkit::call_as_key(
        &m.nats,
        "operator:k1",
        "default",
        "message.get",
        json!({"messageId": sent.message_id}),
    )
    .await;
    assert_eq!(stored["from"]["kind"], "agent", "{stored}");
    assert_eq!(stored["from"]["id"], found_id.as_str(), "{stored}");
    assert_eq!(stored["from"]["handle"], "found", "{stored}");
    let reply = relay_testkit::call_as_key(
        &m.nats,
        "operator:k1",
        "default",
        "message.send",
        json!({"threadId": sent.message_id, "text": "got it"}),
    )
    .await;
    let to: Vec<&str> = reply["recipients"]
        .as_array()
        .unwrap_or_else(|| panic!("{reply}"))
        .iter()
        .filter_map(|r| r["agentId"].as_str())
        .collect();
    assert!(to.contains(&found_id.as_str()), "the reply reaches the sender: {reply}");
    drop(lost);
}
