//! The request context (who calls, in which workspace) travels with every call in NATS
//! headers, set in one place and handed to every handler; calls a handler makes carry its
//! workspace on, made as the service itself.

mod common;
use futures::StreamExt;
use relay_bus::service::ServiceHost;
use relay_client::contracts::context::{CALLER_HEADER, WORKSPACE_HEADER};
use relay_client::contracts::rpc::Role;
use relay_client::contracts::session::CreateRequest;
use relay_client::contracts::{Caller, RequestContext, Rpc, WireError};
use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Debug, Default, Serialize, Deserialize)]
struct Empty {}

/// What a handler was told about its call, and what the handler it called was told.
#[derive(Debug, Serialize, Deserialize)]
struct Seen {
    caller: String,
    workspace: String,
    inner: Option<Box<Seen>>,
}

/// Two subjects of a service made up for this test, declared the way the mesh's are.
struct Outer;
impl Rpc for Outer {
    const SUBJECT: &'static str = "test.context.outer";
    const SERVICE: &'static str = "context-test";
    const ROLES: &'static [Role] = &[Role::Operator];
    const WORKSPACE_SCOPED: bool = true;
    const DOC: &'static str = "Says who called, and asks Inner the same.";
    const MIN_TIMEOUT_SECS: u64 = 0;
    type Request = Empty;
    type Response = Seen;
}
struct Inner;
impl Rpc for Inner {
    const SUBJECT: &'static str = "test.context.inner";
    const SERVICE: &'static str = "context-test";
    const ROLES: &'static [Role] = &[Role::Service];
    const WORKSPACE_SCOPED: bool = true;
    const DOC: &'static str = "Says who called.";
    const MIN_TIMEOUT_SECS: u64 = 0;
    type Request = Empty;
    type Response = Seen;
}

async fn outer(nats: async_nats::Client, ctx: RequestContext, _: Empty) -> Result<Seen, WireError> {
    let inner = relay_bus::client::call::<Inner>(&nats, &Empty {}, Duration::from_secs(5)).await?;
    Ok(Seen {
        caller: ctx.caller.to_string(),
        workspace: ctx.workspace,
        inner: Some(Box::new(inner)),
    })
}

async fn inner(_: async_nats::Client, ctx: RequestContext, _: Empty) -> Result<Seen, WireError> {
    Ok(Seen {
        caller: ctx.caller.to_string(),
        workspace: ctx.workspace,
        inner: None,
    })
}

#[tokio::test]
async fn a_handler_is_told_its_caller_and_workspace_and_its_own_calls_carry_the_workspace_on() {
    let nats_server = relay_testkit::Nats::start().await;
    let nats = nats_server.client().await;
    relay_bus::context::set_identity(Caller::Service("context-test".into()));
    let mut host = ServiceHost::start(nats.clone(), "context-test", "0.0.0", "test", nats.clone())
        .await
        .unwrap();
    host.serve::<Outer>(outer).await.unwrap();
    host.serve::<Inner>(inner).await.unwrap();
    host.open().await.unwrap();

    let operator = RequestContext::new(Caller::Operator("k1".into()), "w1");
    let seen = relay_bus::context::act_as(
        operator,
        relay_bus::client::call::<Outer>(&nats, &Empty {}, Duration::from_secs(5)),
    )
    .await
    .unwrap();
    assert_eq!((seen.caller.as_str(), seen.workspace.as_str()), ("operator:k1", "w1"));
    let inner = seen.inner.unwrap();
    assert_eq!(
        (inner.caller.as_str(), inner.workspace.as_str()),
        ("service:context-test", "w1"),
        "the handler's own call is made as its service, in the caller's workspace"
    );

    // A raw request with no headers is anonymous, in the default workspace.
    let reply = nats.request(Outer::SUBJECT, "{}".into()).await.unwrap();
    let seen: Seen = serde_json::from_slice(&reply.payload).unwrap();
    assert_eq!(
        (seen.caller.as_str(), seen.workspace.as_str()),
        ("anonymous", "default")
    );
}

/// The services name themselves on what they send: the registry forwarding its events to the
/// log is `service:session-registry`, in the workspace of the call that made them.
#[tokio::test]
async fn services_send_their_own_identity_on_the_wire() {
    let mesh = common::mesh(1).await;
    let nats = mesh.client.nats();
    let mut appends = nats.subscribe("event.append").await.unwrap();
    nats.flush().await.unwrap();
    mesh.client.session_create(&CreateRequest::default()).await.unwrap();
    let msg = tokio::time::timeout(Duration::from_secs(10), appends.next())
        .await
        .expect("the registry forwards session.created")
        .unwrap();
    let headers = msg.headers.expect("headers");
    assert_eq!(headers.get(CALLER_HEADER).unwrap().as_str(), "service:session-registry");
    assert_eq!(headers.get(WORKSPACE_HEADER).unwrap().as_str(), "default");
}

/// A caller that waits for a service must not find it before its endpoints: the micro service
/// registers (and answers `$SRV.PING`) only at `open`, with every endpoint declared by then, and
/// says how many, so an instance counted serving answers on every subject at once (a registry
/// that answered PING before its 70 endpoints were added let a test's first call fail with
/// "no service answers").
#[tokio::test]
async fn a_service_counts_as_serving_only_once_every_endpoint_it_declared_answers() {
    let nats_server = relay_testkit::Nats::start().await;
    let nats = nats_server.client().await;
    let mut host = ServiceHost::start(nats.clone(), "ready-test", "0.0.0", "test", nats.clone())
        .await
        .unwrap();
    host.serve::<Outer>(outer).await.unwrap();
    host.serve::<Inner>(inner).await.unwrap();
    assert!(
        relay_testkit::micro_replies(&nats, "PING", "ready-test", 0)
            .await
            .is_empty(),
        "declared but not open: nobody is told it is there"
    );
    let unserved = nats.request(Inner::SUBJECT, "{}".into()).await;
    assert!(unserved.is_err(), "no endpoint before open");

    host.open().await.unwrap();
    let ids = relay_testkit::instances(&nats, "ready-test", 1).await;
    assert_eq!(ids.len(), 1, "open: counted serving");
    // Both subjects answer at once, the last one declared too.
    relay_bus::client::call::<Inner>(&nats, &Empty {}, Duration::from_secs(1))
        .await
        .unwrap();
    let info = relay_testkit::micro_replies(&nats, "INFO", "ready-test", 1).await;
    assert_eq!(
        info[0]["metadata"][relay_bus::service::ENDPOINTS_METADATA],
        "2",
        "{info:?}"
    );
    assert_eq!(info[0]["endpoints"].as_array().map(Vec::len), Some(2), "{info:?}");
}
