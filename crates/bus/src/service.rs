//! A NATS micro service whose endpoints are plain async functions.
//!
//! Each endpoint subscribes in the service's queue group, so any number of replicas share the
//! load. Each request's context (caller, workspace) is read from its headers and handed to the
//! handler; calls the handler makes carry it on. A request body is decoded into the handler's request type (a bad body becomes
//! `invalid_request` naming the problem), the handler runs inside a span whose parent is the
//! caller's `traceparent`, and its result is encoded as the reply: the response object, or the
//! wire error with the micro error headers set.

use crate::{context, trace};
use async_nats::service::{NATS_SERVICE_ERROR, NATS_SERVICE_ERROR_CODE, ServiceExt};
use async_nats::{Client, HeaderMap};
use bytes::Bytes;
use futures::{FutureExt, StreamExt};
use relay_contracts::access;
use relay_contracts::{ErrorCode, MAX_ID_CHARS, RequestContext, Rpc, WireError};
use serde::de::DeserializeOwned;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use tracing::Instrument;

/// Requests one replica works on at once; past it, new requests are refused with `unavailable`
/// (callers retry, or another replica of the queue group takes them).
pub const MAX_IN_FLIGHT: u32 = 1024;

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("cannot register micro service: {0}")]
    Register(String),
    #[error("cannot add endpoint {subject}: {reason}")]
    Endpoint { subject: String, reason: String },
}

pub struct ServiceHost<S> {
    client: Client,
    about: About,
    /// The micro service, once [`ServiceHost::open`] registered it.
    service: Option<async_nats::service::Service>,
    /// Endpoints declared before [`ServiceHost::open`], added there in one go.
    pending: Vec<Pending>,
    state: S,
    inflight: Arc<Semaphore>,
    readers: Vec<tokio::task::JoinHandle<()>>,
    /// Background work to wind down on shutdown ([`ServiceHost::on_shutdown`]).
    drains: Vec<futures::future::BoxFuture<'static, ()>>,
}

struct About {
    name: String,
    version: String,
    description: String,
}

/// An endpoint to add: its name, its subject and what reads its requests.
struct Pending {
    name: String,
    subject: String,
    read: Box<dyn FnOnce(async_nats::service::endpoint::Endpoint) -> tokio::task::JoinHandle<()> + Send>,
}

/// The metadata key of a service's `$SRV.PING`/`INFO` replies that gives how many endpoints it
/// serves: an instance whose `INFO` lists that many serves every subject it will (it answers
/// `PING` from the moment it registers, before its endpoints are added).
pub const ENDPOINTS_METADATA: &str = "endpoints";

/// A handler of `R`: `async fn(state, context, R::Request) -> Result<R::Response, E>`.
pub trait Handler<R: Rpc, S>: Clone + Send + Sync + 'static {
    type Error: Into<WireError>;
    fn call(
        &self,
        state: S,
        ctx: RequestContext,
        req: R::Request,
    ) -> impl Future<Output = Result<R::Response, Self::Error>> + Send;
}

impl<R, S, F, Fut, E> Handler<R, S> for F
where
    R: Rpc,
    F: Fn(S, RequestContext, R::Request) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<R::Response, E>> + Send,
    E: Into<WireError>,
{
    type Error = E;
    fn call(
        &self,
        state: S,
        ctx: RequestContext,
        req: R::Request,
    ) -> impl Future<Output = Result<R::Response, E>> + Send {
        self(state, ctx, req)
    }
}

impl<S: Clone + Send + Sync + 'static> ServiceHost<S> {
    /// A micro service `name` whose handlers share `state`. It registers (and `nats micro ls`
    /// lists it) at [`ServiceHost::open`], with every endpoint declared by then.
    pub async fn start(
        client: Client,
        name: &str,
        version: &str,
        description: &str,
        state: S,
    ) -> Result<Self, ServiceError> {
        Ok(ServiceHost {
            client,
            about: About {
                name: name.to_string(),
                version: version.to_string(),
                description: description.to_string(),
            },
            service: None,
            pending: Vec::new(),
            state,
            inflight: Arc::new(Semaphore::new(MAX_IN_FLIGHT as usize)),
            readers: Vec::new(),
            drains: Vec::new(),
        })
    }

    /// Registers the micro service and adds the endpoints declared so far, one after the other
    /// with nothing in between. Its `PING`/`INFO` metadata says how many ([`ENDPOINTS_METADATA`]),
    /// so whoever waits for it can tell "registered" from "serving everything". Endpoints
    /// declared later are added at once.
    pub async fn open(&mut self) -> Result<(), ServiceError> {
        if self.service.is_some() {
            return Ok(());
        }
        let metadata = [(ENDPOINTS_METADATA.to_string(), self.pending.len().to_string())].into();
        let service = self
            .client
            .service_builder()
            .description(&self.about.description)
            .metadata(metadata)
            .start(&self.about.name, &self.about.version)
            .await
            .map_err(|e| ServiceError::Register(e.to_string()))?;
        self.service = Some(service);
        for pending in std::mem::take(&mut self.pending) {
            self.add(pending).await?;
        }
        Ok(())
    }

    async fn add(&mut self, pending: Pending) -> Result<(), ServiceError> {
        let Some(service) = &self.service else {
            self.pending.push(pending);
            return Ok(());
        };
        let requests = service
            .endpoint_builder()
            .name(&pending.name)
            .add(pending.subject.clone())
            .await
            .map_err(|e| ServiceError::Endpoint {
                subject: pending.subject,
                reason: e.to_string(),
            })?;
        self.readers.push((pending.read)(requests));
        Ok(())
    }

    /// Runs `drain` on shutdown, beside the requests in flight and within the same grace: how a
    /// service's background work (leases, loops) stops taking work and hands back what it holds.
    pub fn on_shutdown(&mut self, drain: impl Future<Output = ()> + Send + 'static) {
        self.drains.push(drain.boxed());
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Serves `R` with `handler(state, context, request)`:
    ///
    /// ```no_run
    /// # async fn demo(host: &mut relay_bus::service::ServiceHost<()>) {
    /// use relay_contracts::{RequestContext, rpc::SessionFork, session::*};
    /// async fn fork(_: (), _: RequestContext, _: ForkRequest) -> Result<SessionIdResponse, relay_bus::WireError> {
    ///     unimplemented!()
    /// }
    /// host.serve::<SessionFork>(fork).await.unwrap();
    /// # }
    /// ```
    ///
    /// A handler whose request or reply type is not the contract's does not compile:
    ///
    /// ```compile_fail
    /// # async fn demo(host: &mut relay_bus::service::ServiceHost<()>) {
    /// use relay_contracts::{RequestContext, rpc::SessionFork, session::*};
    /// async fn fork(_: (), _: RequestContext, _: SessionRef) -> Result<SessionIdResponse, relay_bus::WireError> {
    ///     unimplemented!()
    /// }
    /// host.serve::<SessionFork>(fork).await.unwrap(); // SessionFork takes a ForkRequest
    /// # }
    /// ```
    pub async fn serve<R: Rpc>(&mut self, handler: impl Handler<R, S>) -> Result<(), ServiceError> {
        let subject = R::SUBJECT;
        // Micro endpoint names may not contain dots.
        let name = subject.replace('.', "-");
        self.endpoint::<R, _>(&name, subject.to_string(), handler.clone())
            .await?;
        // Harnesses call on `harness.<workspace>.<agentId>.<subject>`, which only the harness
        // of that agent may publish on: the subject says who calls.
        if R::ROLES.contains(&relay_contracts::rpc::Role::Harness) {
            self.endpoint::<R, _>(&format!("h-{name}"), access::harness_wildcard(subject), handler)
                .await?;
        }
        Ok(())
    }

    /// Serves `R` on `subject` instead of its declared one: a subject with this instance's own
    /// token (`agent.spawnOn.<hostId>`), for requests meant for it alone.
    pub async fn serve_on<R: Rpc>(&mut self, subject: String, handler: impl Handler<R, S>) -> Result<(), ServiceError> {
        // Micro endpoint names are letters, digits, '-' and '_'.
        let name: String = subject
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '-' })
            .collect();
        self.endpoint::<R, _>(&name, subject, handler).await
    }

    async fn endpoint<R: Rpc, H: Handler<R, S>>(
        &mut self,
        name: &str,
        subject: String,
        handler: H,
    ) -> Result<(), ServiceError> {
        let inflight = self.inflight.clone();
        let state = self.state.clone();
        let max_payload = self.client.server_info().max_payload;
        let client = self.client.clone();
        let read = move |mut requests: async_nats::service::endpoint::Endpoint| {
            tokio::spawn(async move {
                while let Some(request) = requests.next().await {
                    // At the limit, a request is refused at once: waiting for a permit would leave
                    // it in the subscription's buffer, and a full buffer drops requests unanswered.
                    let permit = match inflight.clone().try_acquire_owned() {
                        Ok(permit) => permit,
                        Err(tokio::sync::TryAcquireError::NoPermits) => {
                            tokio::spawn(refuse_overloaded(request, R::SUBJECT));
                            continue;
                        }
                        Err(tokio::sync::TryAcquireError::Closed) => break,
                    };
                    let (state, handler, client) = (state.clone(), handler.clone(), client.clone());
                    tokio::spawn(async move {
                        serve_one::<R, _, _>(request, state, handler, &client, max_payload).await;
                        drop(permit);
                    });
                }
            })
        };
        self.add(Pending {
            name: name.to_string(),
            subject,
            read: Box::new(read),
        })
        .await
    }

    /// Serves until SIGINT or SIGTERM, then stops taking requests and lets those in flight
    /// finish (up to `grace`) so no caller that was accepted goes unanswered.
    pub async fn run_until_shutdown(mut self, grace: Duration) {
        if let Err(e) = self.open().await {
            tracing::error!(error = %e, "cannot register the micro service");
            return;
        }
        shutdown_signal().await;
        tracing::info!("shutting down: no new requests, finishing those in flight");
        if let Some(service) = self.service.take()
            && let Err(e) = service.stop().await
        {
            tracing::warn!(error = %e, "stopping the micro service");
        }
        for r in &self.readers {
            r.abort();
        }
        let requests = self.inflight.acquire_many(MAX_IN_FLIGHT);
        let drained = tokio::time::timeout(
            grace,
            futures::future::join(requests, futures::future::join_all(self.drains)),
        )
        .await;
        if drained.is_err() {
            tracing::warn!(?grace, "work still in flight at the end of the grace period");
        }
        // NATS may be down at this point; do not hang the exit on it.
        let _ = tokio::time::timeout(Duration::from_secs(5), self.client.flush()).await;
    }
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("install SIGTERM handler");
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}

async fn serve_one<R: Rpc, S, H: Handler<R, S>>(
    request: async_nats::service::Request,
    state: S,
    handler: H,
    client: &Client,
    max_payload: usize,
) {
    let subject = R::SUBJECT;
    let ctx = match access::parse_harness_subject(request.message.subject.as_str()) {
        Some((workspace, agent)) => RequestContext::harness(workspace, agent),
        None => context::extract(request.message.headers.as_ref()),
    };
    let span = tracing::info_span!(
        "rpc",
        subject,
        otel.name = subject,
        otel.kind = "server",
        caller = %ctx.caller,
        workspace = %ctx.workspace,
        error.code = tracing::field::Empty
    );
    trace::set_parent_from(&span, request.message.headers.as_ref());
    let result = async {
        let req = decode::<R::Request>(subject, &request.message.payload)?;
        if let Some(agent) = &ctx.agent
            && !NAMES_OTHER_AGENTS.contains(&R::SUBJECT)
        {
            check_own_agent(subject, agent, &request.message.payload)?;
        }
        if let Some(agent) = &ctx.agent
            && REPORTS_ON_OWN_SESSION.contains(&R::SUBJECT)
            && let Some(named) = named_session(&request.message.payload)
        {
            crate::agents::check_own_session(client, subject, agent, &named).await?;
        }
        // A panicking handler answers `internal` instead of leaving the caller to time out.
        let handled = context::serving(&ctx, handler.call(state, ctx.clone(), req));
        match std::panic::AssertUnwindSafe(handled).catch_unwind().await {
            Ok(result) => result.map_err(Into::into),
            Err(_) => Err(WireError::new(
                ErrorCode::Internal,
                format!("{subject} handler panicked"),
            )),
        }
    }
    .instrument(span.clone())
    .await;

    let encoded = result.and_then(|resp| {
        let body = serde_json::to_vec(&resp)
            .map_err(|e| WireError::new(ErrorCode::Internal, format!("cannot encode reply: {e}")))?;
        // NATS would refuse to carry it and the caller would only see a timeout.
        if body.len() > max_payload {
            return Err(WireError::new(
                ErrorCode::Internal,
                format!(
                    "reply of {} bytes exceeds the NATS max_payload of {max_payload} bytes",
                    body.len()
                ),
            ));
        }
        Ok(body)
    });
    let (body, headers) = match encoded {
        Ok(body) => (body, HeaderMap::new()),
        Err(err) => {
            span.record("error.code", err.code().as_str());
            let _enter = span.enter();
            if err.code() == ErrorCode::Internal || err.code() == ErrorCode::Unavailable {
                tracing::error!(subject, error = %err, "request failed");
            } else {
                tracing::debug!(subject, error = %err, "request rejected");
            }
            let err = fit_error(err, max_payload);
            (serde_json::to_vec(&err).unwrap_or_default(), error_headers(&err))
        }
    };
    if let Err(e) = request.respond_with_headers(Ok(Bytes::from(body)), headers).await {
        tracing::warn!(subject, error = %e, "could not send reply");
    }
}

/// The answer to a request over the in-flight limit: `unavailable`, which callers retry.
async fn refuse_overloaded(request: async_nats::service::Request, subject: &'static str) {
    let err = WireError::new(
        ErrorCode::Unavailable,
        format!("{subject}: this replica is handling its limit of {MAX_IN_FLIGHT} requests; retry shortly"),
    );
    tracing::debug!(subject, "over the in-flight limit: request refused");
    let body = serde_json::to_vec(&err).unwrap_or_default();
    let _ = request
        .respond_with_headers(Ok(Bytes::from(body)), error_headers(&err))
        .await;
}

/// An empty body means `{}` so that `nats req session.getStatusCounts ''` works.
fn decode<Req: DeserializeOwned>(subject: &str, payload: &[u8]) -> Result<Req, WireError> {
    let payload = if payload.iter().all(u8::is_ascii_whitespace) {
        b"{}".as_slice()
    } else {
        payload
    };
    check_ids(subject, payload)?;
    serde_json::from_slice(payload).map_err(|e| {
        let kind = match e.classify() {
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof => "malformed JSON",
            _ => "request does not match the contract",
        };
        WireError::new(ErrorCode::InvalidRequest, format!("{subject}: {kind}: {e}"))
            .with_details(serde_json::json!({ "line": e.line(), "column": e.column() }))
    })
}

/// Every id a request names (a top-level field `…Id`, or each of a `…Ids` list) is at most
/// [`MAX_ID_CHARS`] characters: ids end up in keys, subjects and Postgres NOTIFY payloads, which have
/// limits of their own, so a longer one is refused here, for every subject at once.
fn check_ids(subject: &str, payload: &[u8]) -> Result<(), WireError> {
    use serde::de::IgnoredAny;
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum IdValue {
        One(String),
        Many(Vec<IdValue>),
        Other(IgnoredAny),
    }
    impl IdValue {
        fn too_long(&self) -> bool {
            match self {
                IdValue::One(s) => relay_contracts::id_too_long(s),
                IdValue::Many(v) => v.iter().any(IdValue::too_long),
                IdValue::Other(_) => false,
            }
        }
    }
    // Only fields named like ids are kept; the rest is skipped without being built.
    struct Ids(Vec<(String, IdValue)>);
    impl<'de> serde::Deserialize<'de> for Ids {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> serde::de::Visitor<'de> for V {
                type Value = Ids;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Ids, A::Error> {
                    let mut ids = Vec::new();
                    while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                        if key.ends_with("Id") || key.ends_with("Ids") {
                            ids.push((key.into_owned(), map.next_value::<IdValue>()?));
                        } else {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                    Ok(Ids(ids))
                }
            }
            d.deserialize_map(V)
        }
    }
    let Ok(Ids(ids)) = serde_json::from_slice::<Ids>(payload) else {
        return Ok(()); // not an object: the contract decided already
    };
    match ids.iter().find(|(_, v)| v.too_long()) {
        None => Ok(()),
        Some((field, _)) => Err(WireError::new(
            ErrorCode::InvalidRequest,
            format!("{subject}: {field} is longer than {MAX_ID_CHARS} characters"),
        )
        .with_details(serde_json::json!({ "field": field, "maxLength": MAX_ID_CHARS }))),
    }
}

/// Subjects whose `agentId` is the agent acted on, not the caller: their handlers check that
/// the harness may act on it (a lead stopping the workers it spawned).
const NAMES_OTHER_AGENTS: &[&str] = &[<relay_contracts::rpc::AgentStop as Rpc>::SUBJECT];

/// Subjects by which an agent reports about itself: the `sessionId` a harness names there must
/// be its own agent's session (`event.append` checks each event's in event-ingest).
const REPORTS_ON_OWN_SESSION: &[&str] = &[
    <relay_contracts::rpc::SessionUsage as Rpc>::SUBJECT,
    <relay_contracts::rpc::SessionRequestCompression as Rpc>::SUBJECT,
    <relay_contracts::rpc::PermissionRequest as Rpc>::SUBJECT,
    <relay_contracts::rpc::QuestionAsk as Rpc>::SUBJECT,
];

/// The top-level `sessionId` of a request, if it names one.
fn named_session(payload: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Named {
        session_id: Option<String>,
    }
    serde_json::from_slice::<Named>(payload).ok()?.session_id
}

/// A harness acts only as its own agent: an `agentId` its request names must be its own.
fn check_own_agent(subject: &str, agent: &str, payload: &[u8]) -> Result<(), WireError> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Named {
        agent_id: Option<String>,
    }
    match serde_json::from_slice::<Named>(payload) {
        Ok(Named { agent_id: Some(named) }) if named != agent => Err(WireError::new(
            ErrorCode::Forbidden,
            format!("{subject}: agent {agent} cannot act as agent {named}"),
        )
        .with_details(serde_json::json!({ "field": "agentId" }))),
        _ => Ok(()),
    }
}

/// Keeps an error reply sendable: a huge message or details (e.g. every problem of a big
/// request, or a bad value echoed by serde) would exceed max_payload and leave the caller with a
/// timeout instead. Whatever answers on the bus outside a [`ServiceHost`] (the agent harness)
/// sends its errors through this too.
pub fn fit_error(mut err: WireError, max_payload: usize) -> WireError {
    const MAX_MESSAGE: usize = 2048;
    if err.error.message.len() > MAX_MESSAGE {
        let mut cut = MAX_MESSAGE;
        while !err.error.message.is_char_boundary(cut) {
            cut -= 1;
        }
        err.error.message.truncate(cut);
        err.error.message.push_str(" …(truncated)");
    }
    if serde_json::to_vec(&err).map_or(0, |b| b.len()) > max_payload / 2 {
        err.error.details = Some(serde_json::json!({ "truncated": true }));
    }
    err
}

/// The NATS micro error headers: `Nats-Service-Error` (message) and `-Code` (numeric status).
pub fn error_headers(err: &WireError) -> HeaderMap {
    let mut headers = HeaderMap::new();
    // Header values are single lines.
    let message: String = err
        .error
        .message
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    headers.insert(NATS_SERVICE_ERROR, message.as_str());
    headers.insert(NATS_SERVICE_ERROR_CODE, err.code().status().to_string().as_str());
    headers
}

#[cfg(test)]
mod id_tests {
    use super::*;

    #[test]
    fn ids_past_the_maximum_are_refused_by_name_and_other_fields_are_not_read() {
        let long = "a".repeat(MAX_ID_CHARS + 1);
        let body = serde_json::json!({"sessionId": long, "message": long});
        let err = check_ids("x", &serde_json::to_vec(&body).unwrap()).unwrap_err();
        assert!(err.error.message.contains("sessionId"), "{err}");
        let body = serde_json::json!({"agentIds": ["a", long]});
        assert!(check_ids("x", &serde_json::to_vec(&body).unwrap()).is_err());
        let body = serde_json::json!({"agentId": "a".repeat(MAX_ID_CHARS), "message": long, "agentIds": "all"});
        assert!(check_ids("x", &serde_json::to_vec(&body).unwrap()).is_ok());
        assert!(check_ids("x", b"[1, 2]").is_ok());
    }
}
