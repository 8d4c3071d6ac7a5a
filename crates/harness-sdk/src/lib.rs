//! The harness SDK: what an agent session implements (seed 001 `AgentSession`) and the
//! plumbing that binds it to the bus.
//!
//! [`Binding::attach`] attaches the session to a relay session with its declared capabilities,
//! then serves its subjects: `agent.<id>.deliver` (deliveries, one at a time, in order, each
//! delivery id surfaced once), `agent.<id>.input`, `agent.<id>.turn` and `agent.<id>.release`. [`EventSink`]
//! sends the session's events to the event log in order, batched, retried until stored.

mod events;

pub use events::{EventSink, delivery_trace, typed};

use futures::StreamExt;
use relay_contracts::actions::{ActionAnswer, ActionCall};
use relay_contracts::agent_events;
use relay_contracts::capabilities::AgentSessionCapabilities;
use relay_contracts::delivery::*;
use relay_contracts::session::{self, AgentSelection, AgentStatus, AttachRequest, CreateRequest, Message};
use relay_contracts::{ErrorCode, WireError, rpc};
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// Delivery ids remembered for deduplication.
const SEEN: usize = 100_000;

/// One agent session, as a harness implements it (seed 001).
pub trait AgentSession: Send + Sync + 'static {
    /// Surfaces the message at the boundary `ctx.mode` asks for (or queues it, when the session
    /// declared `delivery.queue`) and says what happened.
    fn receive_message(&self, message: Message, ctx: MessageContext) -> impl Future<Output = Receipt> + Send;

    /// Raw terminal input (`agent.input`); the error goes back to the caller as it is (e.g.
    /// `conflict` while the terminal shows a menu only a decision may answer).
    fn input(&self, data: String) -> impl Future<Output = Result<(), WireError>> + Send {
        let _ = data;
        async {
            Err(WireError::new(
                ErrorCode::CapabilityUnsupported,
                "this agent session takes no raw input",
            ))
        }
    }

    /// Whether the CLI is busy with a turn; with `control.interrupt`, interrupts it the way
    /// that CLI expects (`agent.<id>.turn`). A session that cannot tell says not busy.
    fn turn(&self, control: TurnControl) -> impl Future<Output = TurnState> + Send {
        let _ = control;
        async { TurnState::default() }
    }

    /// An action of this agent invoked by another participant (`action.invoke`, after the mesh
    /// checked the input against its schema); a session that exposes none keeps the default.
    fn invoke_action(&self, call: ActionCall) -> impl Future<Output = ActionAnswer> + Send {
        async move {
            ActionAnswer {
                output: None,
                error: Some(format!("this agent serves no action {:?}", call.action)),
            }
        }
    }

    /// Drops a delivery it accepted and still holds for its boundary (seed 001 `cancel`, from
    /// `delivery.cancel`); whether it did. A session that holds nothing keeps the default.
    fn cancel(&self, held: CancelHeld) -> impl Future<Output = bool> + Send {
        let _ = held;
        async { false }
    }

    /// Ends the session (seed 001 `release`).
    fn release(&self, reason: Option<String>) -> impl Future<Output = ()> + Send;
}

/// Where and how to attach: the `session.agent.attach` request itself (one attach spec for
/// the registry, the spawner and the SDK), or an agent already attached to bind to again.
#[derive(Debug, Clone)]
pub struct AttachOptions {
    /// What `session.agent.attach` is asked; its session is created when it does not exist.
    pub attach: AttachRequest,
    /// Bind to this already attached agent instead of attaching a new one: a harness restarted
    /// after a crash takes its agent's subjects back (and its undelivered messages with them).
    pub agent_id: Option<String>,
}

impl AttachOptions {
    /// A new agent of `agent` (e.g. `AgentSelection::adapter("claude")`) in `session_id`,
    /// declaring `capabilities`; a free handle from the adapter's name.
    pub fn new(session_id: impl Into<String>, agent: AgentSelection, capabilities: AgentSessionCapabilities) -> Self {
        let mut attach = AttachRequest::new(session_id.into(), agent);
        attach.capabilities = Some(capabilities);
        AttachOptions { attach, agent_id: None }
    }

    /// The handle to attach with (`@name`).
    pub fn handle(mut self, handle: impl Into<String>) -> Self {
        self.attach.handle = Some(handle.into());
        self
    }

    fn capabilities(&self) -> AgentSessionCapabilities {
        self.attach
            .capabilities
            .clone()
            .unwrap_or_else(AgentSessionCapabilities::minimum)
    }
}

/// A session bound to the bus. Dropping it stops serving.
pub struct Binding {
    pub agent_id: String,
    pub session_id: String,
    nats: async_nats::Client,
    events: EventSink,
    released: Arc<tokio::sync::Notify>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for Binding {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// A receipt for `id`.
pub fn receipt(status: ReceiptStatus, id: &str) -> Receipt {
    Receipt {
        status,
        delivery_id: Some(id.to_string()),
        available_at: None,
        reason: None,
        retryable: None,
        metadata: None,
    }
}

impl Binding {
    pub async fn attach<S: AgentSession>(
        nats: async_nats::Client,
        opts: AttachOptions,
        session: Arc<S>,
    ) -> Result<Binding, WireError> {
        let agent_id = match &opts.agent_id {
            Some(id) => id.clone(),
            None => attach_new(&nats, &opts).await?,
        };
        // Its relay messages are its own only on its harness subjects: with other credentials
        // (the admin's, a service's) the registry refuses them. The client given may be a test's
        // binding several agents, so this is said, not refused.
        if opts.capabilities().messaging.send == Some(true) && relay_bus::context::harness().is_none() {
            tracing::warn!(
                agent_id,
                "the agent declares messaging.send but this process has no agent identity: its relay messages \
                 will be refused (forbidden). Connect with credentials minted for it: `relayctl auth harness \
                 --dir <auth dir> --agent <agentId> > agent.creds`, then RELAY_NATS__CREDS_FILE=agent.creds"
            );
        }
        let events = EventSink::start(nats.clone(), opts.attach.session_id.clone(), agent_id.clone());
        let released = Arc::new(tokio::sync::Notify::new());
        // Its calls come from its agent from here on.
        relay_bus::context::set_identity(relay_bus::Caller::Agent(Some(agent_id.clone())));
        let deliveries = nats
            .subscribe(rpc::agent::deliver(&agent_id))
            .await
            .map_err(unavailable)?;
        let inputs = nats
            .subscribe(rpc::agent::input(&agent_id))
            .await
            .map_err(unavailable)?;
        let releases = nats
            .subscribe(rpc::agent::release(&agent_id))
            .await
            .map_err(unavailable)?;
        let invokes = nats
            .subscribe(rpc::agent::invoke(&agent_id))
            .await
            .map_err(unavailable)?;
        let turns = nats.subscribe(rpc::agent::turn(&agent_id)).await.map_err(unavailable)?;
        let cancels = nats
            .subscribe(rpc::agent::cancel(&agent_id))
            .await
            .map_err(unavailable)?;
        nats.flush().await.map_err(unavailable)?;
        let tasks = vec![
            tokio::spawn(serve_deliveries(
                nats.clone(),
                deliveries,
                session.clone(),
                events.clone(),
            )),
            tokio::spawn(serve_inputs(nats.clone(), inputs, session.clone())),
            tokio::spawn(serve_invokes(nats.clone(), invokes, session.clone())),
            tokio::spawn(serve_turns(nats.clone(), turns, session.clone())),
            tokio::spawn(serve_cancels(nats.clone(), cancels, session.clone())),
            tokio::spawn(serve_release(
                nats.clone(),
                releases,
                session,
                events.clone(),
                released.clone(),
                opts.capabilities().lifecycle.release,
            )),
        ];
        let session_id = opts.attach.session_id.clone();
        match opts.agent_id {
            Some(_) => events.send(&agent_events::SessionResumed { session_id }),
            None => events.send(&agent_events::SessionStarted { session_id }),
        }
        tracing::info!(agent_id, session_id = %opts.attach.session_id, "agent session attached");
        Ok(Binding {
            agent_id,
            session_id: opts.attach.session_id,
            nats,
            events,
            released,
            tasks,
        })
    }

    pub fn events(&self) -> EventSink {
        self.events.clone()
    }

    pub fn client(&self) -> &async_nats::Client {
        &self.nats
    }

    /// Resolves once the session was released over the bus (`agent.<id>.release`).
    pub async fn released(&self) {
        self.released.notified().await
    }

    /// The agent ended without being released (its process exited): the registry stops
    /// listing it as attached (`session.agent.release` with the reason).
    pub async fn ended(&self, reason: String) {
        let req = session::ReleaseRequest {
            session_id: self.session_id.clone(),
            agent_id: self.agent_id.clone(),
            reason: Some(reason),
        };
        if let Err(e) = relay_bus::client::call::<rpc::SessionAgentRelease>(&self.nats, &req, CALL_TIMEOUT).await {
            tracing::warn!(error = %e, "registry did not record the agent's end");
        }
    }

    /// Reports the outcome of a delivery the session accepted earlier (`delivery.report`),
    /// retrying while the runner cannot be reached.
    pub async fn report(
        &self,
        delivery_id: &str,
        status: ReceiptStatus,
        reason: Option<String>,
    ) -> Result<(), WireError> {
        report(&self.nats, delivery_id, status, reason).await
    }
}

/// Creates the relay session if needed and attaches a new agent to it; its id.
async fn attach_new(nats: &async_nats::Client, opts: &AttachOptions) -> Result<String, WireError> {
    let create = CreateRequest {
        session_id: Some(opts.attach.session_id.clone()),
        ..Default::default()
    };
    match relay_bus::client::call::<rpc::SessionCreate>(nats, &create, CALL_TIMEOUT).await {
        Ok(_) => {}
        Err(e) if e.code() == ErrorCode::Conflict => {} // it exists: attach to it
        Err(e) => return Err(e),
    }
    let attached = relay_bus::client::call::<rpc::SessionAgentAttach>(nats, &opts.attach, CALL_TIMEOUT).await?;
    Ok(attached.agent_id)
}

/// How long a report is retried while no runner takes it (runners restarting, NATS away).
/// Then it gives up with an error: the runner hands an `accepted` delivery never reported on
/// over again (`runner.accept_timeout_ms`), and the harness answers that with what it knows.
pub const REPORT_GIVE_UP: Duration = Duration::from_secs(120);
/// A runner answers a report in milliseconds; one killed while it held the request never
/// does, and the retry (harmless: a report is idempotent) should not wait long for it.
const REPORT_TIMEOUT: Duration = Duration::from_secs(3);

/// `delivery.report`, retried while no runner takes it, for at most [`REPORT_GIVE_UP`].
pub async fn report(
    nats: &async_nats::Client,
    delivery_id: &str,
    status: ReceiptStatus,
    reason: Option<String>,
) -> Result<(), WireError> {
    let req = Receipt {
        reason,
        ..receipt(status, delivery_id)
    };
    let started = std::time::Instant::now();
    let mut wait = Duration::from_millis(100);
    loop {
        match relay_bus::client::call::<rpc::DeliveryReport>(nats, &req, REPORT_TIMEOUT).await {
            Ok(_) => return Ok(()),
            Err(e) if e.error.retryable && started.elapsed() + wait < REPORT_GIVE_UP => {
                tracing::warn!(delivery_id, error = %e, "delivery report not taken yet, retrying");
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(2));
            }
            Err(e) if e.error.retryable => {
                return Err(WireError::new(
                    ErrorCode::Unavailable,
                    format!(
                        "delivery {delivery_id} report not taken after {} s ({e}); the runner hands it over again after its accept timeout",
                        started.elapsed().as_secs()
                    ),
                ));
            }
            Err(e) => return Err(e),
        }
    }
}

fn unavailable(e: impl std::fmt::Display) -> WireError {
    WireError::new(
        ErrorCode::Unavailable,
        format!("cannot serve the agent's subjects: {e}"),
    )
}

async fn reply<T: serde::Serialize>(nats: &async_nats::Client, msg: &async_nats::Message, body: &T) {
    if let Some(to) = &msg.reply {
        let payload = serde_json::to_vec(body).unwrap_or_default();
        if let Err(e) = nats.publish(to.clone(), payload.into()).await {
            tracing::warn!(error = %e, "cannot reply");
        }
    }
}

/// Bad requests get the wire error shape with the micro error headers, like every service, cut
/// to fit as theirs are: a bad field's value echoed whole (600 KB) would exceed max_payload,
/// and the caller would get no answer at all.
async fn reply_error(nats: &async_nats::Client, msg: &async_nats::Message, err: WireError) {
    if let Some(to) = &msg.reply {
        let err = relay_bus::service::fit_error(err, nats.server_info().max_payload);
        let headers = relay_bus::service::error_headers(&err);
        let payload = serde_json::to_vec(&err).unwrap_or_default();
        let _ = nats.publish_with_headers(to.clone(), headers, payload.into()).await;
    }
}

/// Deliveries one at a time, in arrival order. A delivery id seen before is answered with the
/// receipt it got then, without surfacing the message again.
async fn serve_deliveries<S: AgentSession>(
    nats: async_nats::Client,
    mut sub: async_nats::Subscriber,
    session: Arc<S>,
    events: EventSink,
) {
    let mut seen: HashMap<String, Receipt> = HashMap::new();
    let mut order: VecDeque<String> = VecDeque::new();
    while let Some(msg) = sub.next().await {
        let req: DeliverRequest = match serde_json::from_slice(&msg.payload) {
            Ok(r) => r,
            Err(e) => {
                let err = WireError::new(ErrorCode::InvalidRequest, format!("deliver: {e}"));
                reply_error(&nats, &msg, err).await;
                continue;
            }
        };
        let id = req.context.id.clone();
        if let Some(r) = seen.get(&id) {
            tracing::info!(delivery_id = %id, "delivery seen before; acknowledged, not surfaced again");
            reply(&nats, &msg, r).await;
            continue;
        }
        let message_id = req.message.message_id.clone();
        // The hand-over is part of the trace of the request that sent the message.
        let span = relay_bus::trace::message_span(&msg.subject, msg.headers.as_ref());
        events::remember_delivery_trace(&id, span.in_scope(relay_bus::trace::current_traceparent));
        let mut r = tracing::Instrument::instrument(session.receive_message(req.message, req.context), span).await;
        r.delivery_id = Some(id.clone());
        if matches!(r.status, ReceiptStatus::Delivered | ReceiptStatus::Accepted) {
            events.send(&agent_events::MessageReceived {
                message_id: message_id.clone(),
                delivery_id: id.clone(),
            });
        }
        // Only a surfaced message is final for this id. A deferral or failure is asked again,
        // and so is an accepted one (the session may have reported it deferred or failed
        // since, or lost it): the session recognises an id it still holds.
        if r.status == ReceiptStatus::Delivered {
            seen.insert(id.clone(), r.clone());
            order.push_back(id);
            if order.len() > SEEN
                && let Some(old) = order.pop_front()
            {
                seen.remove(&old);
            }
        }
        reply(&nats, &msg, &r).await;
    }
}

async fn serve_inputs<S: AgentSession>(nats: async_nats::Client, mut sub: async_nats::Subscriber, session: Arc<S>) {
    while let Some(msg) = sub.next().await {
        let req: InputRequest = match serde_json::from_slice(&msg.payload) {
            Ok(r) => r,
            Err(e) => {
                reply_error(
                    &nats,
                    &msg,
                    WireError::new(ErrorCode::InvalidRequest, format!("input: {e}")),
                )
                .await;
                continue;
            }
        };
        match session.input(req.data).await {
            Ok(()) => reply(&nats, &msg, &InputResponse { accepted: true }).await,
            Err(e) => reply_error(&nats, &msg, e).await,
        }
    }
}

async fn serve_turns<S: AgentSession>(nats: async_nats::Client, mut sub: async_nats::Subscriber, session: Arc<S>) {
    while let Some(msg) = sub.next().await {
        match serde_json::from_slice::<TurnControl>(&msg.payload) {
            Ok(control) => reply(&nats, &msg, &session.turn(control).await).await,
            Err(e) => {
                let e = WireError::new(ErrorCode::InvalidRequest, format!("turn: {e}"));
                reply_error(&nats, &msg, e).await
            }
        }
    }
}

async fn serve_cancels<S: AgentSession>(nats: async_nats::Client, mut sub: async_nats::Subscriber, session: Arc<S>) {
    while let Some(msg) = sub.next().await {
        match serde_json::from_slice::<CancelHeld>(&msg.payload) {
            Ok(held) => {
                let removed = session.cancel(held).await;
                reply(&nats, &msg, &HeldCancelled { removed }).await
            }
            Err(e) => {
                let e = WireError::new(ErrorCode::InvalidRequest, format!("cancel: {e}"));
                reply_error(&nats, &msg, e).await
            }
        }
    }
}

/// Each invocation on its own task: a slow action does not hold up the next.
async fn serve_invokes<S: AgentSession>(nats: async_nats::Client, mut sub: async_nats::Subscriber, session: Arc<S>) {
    while let Some(msg) = sub.next().await {
        let (nats, session) = (nats.clone(), session.clone());
        tokio::spawn(async move {
            match serde_json::from_slice::<ActionCall>(&msg.payload) {
                Ok(call) => reply(&nats, &msg, &session.invoke_action(call).await).await,
                Err(e) => {
                    let e = WireError::new(ErrorCode::InvalidRequest, format!("invoke: {e}"));
                    reply_error(&nats, &msg, e).await
                }
            }
        });
    }
}

async fn serve_release<S: AgentSession>(
    nats: async_nats::Client,
    mut sub: async_nats::Subscriber,
    session: Arc<S>,
    events: EventSink,
    released: Arc<tokio::sync::Notify>,
    registry_release: bool,
) {
    let Some(msg) = sub.next().await else { return };
    let req: ReleaseRequest = serde_json::from_slice(&msg.payload).unwrap_or_default();
    events.status(AgentStatus::Releasing);
    session.release(req.reason.clone()).await;
    events.send(&agent_events::SessionReleased {
        session_id: events.session_id().to_string(),
        reason: req.reason.clone(),
    });
    events.status(AgentStatus::Released);
    if registry_release {
        let req = session::ReleaseRequest {
            session_id: events.session_id().to_string(),
            agent_id: events.agent_id().to_string(),
            reason: None,
        };
        if let Err(e) = relay_bus::client::call::<rpc::SessionAgentRelease>(&nats, &req, CALL_TIMEOUT).await {
            tracing::warn!(error = %e, "registry did not record the release");
        }
    }
    events.flush().await;
    reply(&nats, &msg, &ReleaseResponse { released: true }).await;
    released.notify_waiters();
    released.notify_one();
}
