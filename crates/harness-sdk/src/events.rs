//! The session's events, in order, to the event log (`event.append`).
//!
//! Events get their id when emitted, so a batch retried after a lost reply is stored once.
//! One task sends them in emission order, batching whatever is queued; while the log cannot be
//! reached it retries with backoff and loses nothing.

use relay_contracts::agent_events::StatusChanged;
use relay_contracts::events::{AppendRequest, NewEvent};
use relay_contracts::session::{AgentStatus, EventPayload};
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

const BATCH: usize = 500;

enum Item {
    /// An event and the trace it belongs to (its `traceparent`).
    Event(Box<(NewEvent, Option<String>)>),
    Flush(oneshot::Sender<()>),
}

#[derive(Clone)]
pub struct EventSink {
    tx: mpsc::UnboundedSender<Item>,
    session_id: Arc<str>,
    agent_id: Arc<str>,
    status: Arc<Mutex<Option<AgentStatus>>>,
    /// The trace of the work the agent does now (the delivery its turn serves, the decision it
    /// goes on with): its events are appended in that trace, not as traces of their own.
    trace: Arc<Mutex<Option<String>>>,
}

impl EventSink {
    pub fn start(nats: async_nats::Client, session_id: String, agent_id: String) -> EventSink {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(send(nats, rx));
        EventSink {
            tx,
            session_id: session_id.into(),
            agent_id: agent_id.into(),
            status: Arc::new(Mutex::new(None)),
            trace: Arc::new(Mutex::new(None)),
        }
    }

    /// The agent now works for `traceparent` (a delivery's, a decision's): later events go in
    /// its trace. None keeps the current one.
    pub fn set_trace(&self, traceparent: Option<String>) {
        if let Some(tp) = traceparent {
            *self.trace.lock().expect("trace lock") = Some(tp);
        }
    }

    /// The trace the agent works for now, if any.
    pub fn trace(&self) -> Option<String> {
        self.trace.lock().expect("trace lock").clone()
    }

    /// Runs `fut` in the trace the agent works for now (calls it makes carry it), or in the
    /// current span when there is none.
    pub fn in_trace<F: std::future::Future>(&self, fut: F) -> tracing::instrument::Instrumented<F> {
        let span = match self.trace() {
            Some(tp) => relay_bus::trace::continuing("agent.work", Some(&tp)),
            None => tracing::Span::current(),
        };
        tracing::Instrument::instrument(fut, span)
    }

    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    pub fn agent_id(&self) -> &str {
        &self.agent_id
    }

    /// Queues one event of this agent session (`relay_contracts::agent_events`).
    pub fn send<P: EventPayload>(&self, event: &P) {
        let (event_type, payload) = typed(event);
        self.emit(event_type, payload);
    }

    /// Queues one event of this agent session, of any type (what [`EventSink::send`] and a
    /// session's own events use).
    pub fn emit(&self, event_type: &str, payload: Value) {
        let event = NewEvent {
            event_id: Some(uuid::Uuid::now_v7().to_string()),
            event_type: event_type.to_string(),
            ts: Some(relay_bus::now_ms()),
            session_id: Some(self.session_id.to_string()),
            agent_name: None,
            agent_id: Some(self.agent_id.to_string()),
            // Its NATS identity says (the harness form of event.append); without one, `default`.
            workspace: None,
            payload,
        };
        // Emitted while serving a traced call: that call's trace; else the agent's current one.
        let trace = relay_bus::trace::current_traceparent().or_else(|| self.trace());
        let _ = self.tx.send(Item::Event(Box::new((event, trace))));
    }

    /// Reports a status change (`status.changed` with the previous status); repeats are dropped.
    pub fn status(&self, status: AgentStatus) {
        let previous = {
            let mut current = self.status.lock().expect("status lock");
            if *current == Some(status) {
                return;
            }
            current.replace(status)
        };
        self.send(&StatusChanged {
            status: status.as_str().into(),
            previous_status: previous.map(|p| p.as_str().into()),
        });
    }

    pub fn current_status(&self) -> Option<AgentStatus> {
        *self.status.lock().expect("status lock")
    }

    /// Waits until every event emitted so far is stored in the log.
    pub async fn flush(&self) {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Item::Flush(tx)).is_ok() {
            let _ = rx.await;
        }
    }
}

/// How many deliveries' traces are kept: far more than a harness holds at once.
const TRACES_KEPT: usize = 1024;

type Traces = (
    std::collections::HashMap<String, String>,
    std::collections::VecDeque<String>,
);
static DELIVERY_TRACES: std::sync::LazyLock<Mutex<Traces>> = std::sync::LazyLock::new(Mutex::default);

/// Keeps the trace a delivery came in (its span's `traceparent`), for the work it causes later.
pub(crate) fn remember_delivery_trace(delivery_id: &str, traceparent: Option<String>) {
    let Some(tp) = traceparent else { return };
    let mut kept = DELIVERY_TRACES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (map, order) = &mut *kept;
    if map.insert(delivery_id.to_string(), tp).is_none() {
        order.push_back(delivery_id.to_string());
        if order.len() > TRACES_KEPT
            && let Some(old) = order.pop_front()
        {
            map.remove(&old);
        }
    }
}

/// The trace delivery `delivery_id` came in: its report and the turn it starts belong to it.
pub fn delivery_trace(delivery_id: &str) -> Option<String> {
    let kept = DELIVERY_TRACES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    kept.0.get(delivery_id).cloned()
}

async fn send(nats: async_nats::Client, mut rx: mpsc::UnboundedReceiver<Item>) {
    let mut batch = Vec::new();
    let mut waiting = Vec::new();
    while let Some(item) = rx.recv().await {
        let mut next = Some(item);
        while let Some(item) = next.take() {
            match item {
                Item::Event(e) => batch.push(*e),
                Item::Flush(done) => waiting.push(done),
            }
            if batch.len() < BATCH {
                next = rx.try_recv().ok();
            }
        }
        // One append per run of events of the same trace, in order.
        while !batch.is_empty() {
            let trace = batch[0].1.clone();
            let run = batch.iter().take_while(|(_, t)| *t == trace).count();
            let events: Vec<NewEvent> = batch.drain(..run).map(|(e, _)| e).collect();
            match trace {
                Some(tp) => {
                    let span = relay_bus::trace::continuing("event.append", Some(&tp));
                    tracing::Instrument::instrument(append(&nats, events), span).await
                }
                None => append(&nats, events).await,
            }
        }
        for done in waiting.drain(..) {
            let _ = done.send(());
        }
    }
}

/// Appends a batch, retrying while the log cannot be reached. A batch the log refuses is sent
/// again one event at a time, so only the invalid event is dropped (and logged).
async fn append(nats: &async_nats::Client, events: Vec<NewEvent>) {
    if let Err(e) = append_retrying(nats, &events).await {
        if events.len() == 1 {
            tracing::error!(error = %e, event_type = %events[0].event_type, "event log refused an agent event");
            return;
        }
        for event in events {
            if let Err(e) = append_retrying(nats, std::slice::from_ref(&event)).await {
                tracing::error!(error = %e, event_type = %event.event_type, "event log refused an agent event");
            }
        }
    }
}

async fn append_retrying(nats: &async_nats::Client, events: &[NewEvent]) -> Result<(), relay_contracts::WireError> {
    let req = AppendRequest::Batch {
        events: events.to_vec(),
    };
    let mut wait = Duration::from_millis(100);
    loop {
        match relay_bus::client::call::<relay_contracts::rpc::EventAppend>(nats, &req, Duration::from_secs(5)).await {
            Ok(_) => return Ok(()),
            // Refused: retrying the same request cannot help.
            Err(e) if !e.error.retryable => return Err(e),
            Err(e) => {
                tracing::warn!(error = %e, retry_in = ?wait, "event log not reachable; events kept and retried");
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(5));
            }
        }
    }
}

/// An event as its type and payload, to send later ([`EventSink::emit`]).
pub fn typed<P: EventPayload>(event: &P) -> (&'static str, Value) {
    // A struct of strings, numbers and JSON values always serializes.
    (P::TYPE, serde_json::to_value(event).unwrap_or_default())
}
