//! A Rust client for relay-mesh, for services and tools that talk to the mesh over NATS.
//!
//! - [`Client`]: one typed method per subject (`session_create`, `delivery_list`, …), taking and
//!   returning the contract types of `relay-contracts`, so a caller and the service it calls
//!   can never disagree on a field.
//! - [`EventStream`]: follows the event log from any sequence, replaying what is stored and
//!   then waiting for what comes, without gaps.
//! - [`patterns`]: mapReduce, pipeline, fanOut (seed 003 §4) and a supervisor, on agents that
//!   `agent-spawner` starts.
//!
//! ```no_run
//! # async fn demo() -> Result<(), relay_client::Error> {
//! use relay_client::{Client, contracts::session::CreateRequest};
//! let client = Client::connect("nats://127.0.0.1:4222").await?;
//! let created = client.session_create(&CreateRequest::default()).await?;
//! println!("session {}", created.session_id);
//! # Ok(()) }
//! ```

mod follow;
pub mod patterns;

pub use follow::EventStream;
pub use relay_contracts as contracts;
pub use relay_contracts::{ErrorCode, WireError};

use relay_contracts::{cost, delivery, events, permission, session, subjects};
use serde::{Serialize, de::DeserializeOwned};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The mesh answered with an error, or could not be reached (`unavailable`, `timeout`).
    #[error("{0}")]
    Wire(#[from] WireError),
    #[error("cannot connect to NATS at {url}: {reason}")]
    Connect { url: String, reason: String },
    /// An agent a pattern started went away before it answered.
    #[error("agent {agent_id} exited before answering")]
    AgentExited { agent_id: String },
    #[error("no answer within {0:?}")]
    TimedOut(Duration),
    /// A pipeline stage failed; the stages after it did not run.
    #[error("stage {stage}: {source}")]
    Stage { stage: String, source: Box<Error> },
}

impl Error {
    /// The wire code, for errors that came from the mesh.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Error::Wire(e) => Some(e.code()),
            _ => None,
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// How long a call waits for its reply unless told otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);
/// `agent.spawn` answers once the agent has attached, which takes as long as the CLI needs to
/// start (the spawner gives up after `spawner.attach_timeout_ms`, 30 s by default).
pub const SPAWN_TIMEOUT: Duration = Duration::from_secs(35);

/// A handle on the mesh; cheap to clone (it shares one NATS connection).
#[derive(Clone)]
pub struct Client {
    nats: async_nats::Client,
    timeout: Duration,
}

impl Client {
    /// Connects to NATS; async-nats reconnects by itself afterwards.
    pub async fn connect(url: &str) -> Result<Client> {
        let nats = async_nats::ConnectOptions::new()
            .name("relay-client")
            .connection_timeout(Duration::from_secs(5))
            .max_reconnects(None)
            .connect(url)
            .await
            .map_err(|e| Error::Connect {
                url: url.to_string(),
                reason: e.to_string(),
            })?;
        Ok(Client::new(nats))
    }

    /// Uses a connection the caller already has (a service's own, say).
    pub fn new(nats: async_nats::Client) -> Client {
        Client {
            nats,
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// The same client with another per-call timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Client {
        self.timeout = timeout;
        self
    }

    pub fn nats(&self) -> &async_nats::Client {
        &self.nats
    }

    /// Any subject with any request and reply types; the typed methods are built on this.
    pub async fn call<Req: Serialize, Resp: DeserializeOwned>(&self, subject: &str, req: &Req) -> Result<Resp> {
        self.call_within(subject, req, self.timeout).await
    }

    pub async fn call_within<Req: Serialize, Resp: DeserializeOwned>(
        &self,
        subject: &str,
        req: &Req,
        timeout: Duration,
    ) -> Result<Resp> {
        Ok(relay_bus::client::request(&self.nats, subject, req, timeout).await?)
    }

    /// Starts an agent CLI for a session through `agent-spawner` and waits for it to attach.
    pub async fn agent_spawn(&self, req: &delivery::SpawnRequest) -> Result<delivery::SpawnResponse> {
        self.call_within(subjects::agent::SPAWN, req, SPAWN_TIMEOUT.max(self.timeout))
            .await
    }

    /// `cost.models` takes no arguments.
    pub async fn cost_models(&self) -> Result<cost::ModelsResponse> {
        self.call(cost::MODELS, &serde_json::json!({})).await
    }

    /// Follows the event log from `filter.seq` (0 = the beginning): see [`EventStream`].
    pub async fn follow(&self, filter: events::SinceRequest) -> Result<EventStream> {
        EventStream::start(self.clone(), filter).await
    }
}

/// One method per request/reply subject: `name(Request) -> Reply = subject`.
macro_rules! rpcs {
    ($( $(#[$doc:meta])* $name:ident($req:ty) -> $resp:ty = $subject:expr; )*) => {
        impl Client {
            $(
                $(#[$doc])*
                #[doc = concat!("\n\nSubject `", stringify!($subject), "`.")]
                pub async fn $name(&self, req: &$req) -> Result<$resp> {
                    self.call($subject, req).await
                }
            )*
        }

        /// Every subject [`Client`] has a method for (besides `agent.spawn` and `cost.models`).
        pub const TYPED_SUBJECTS: &[&str] = &[$($subject),*];
    };
}

use subjects::session as s;
rpcs! {
    session_create(session::CreateRequest) -> session::SessionIdResponse = s::CREATE;
    session_get(session::SessionRef) -> session::GetResponse = s::GET;
    session_list(session::ListRequest) -> session::ListResponse = s::LIST;
    session_update(session::UpdateRequest) -> session::SuccessResponse = s::UPDATE;
    session_close(session::CloseRequest) -> session::SuccessResponse = s::CLOSE;
    session_resume(session::SessionRef) -> session::SuccessResponse = s::RESUME;
    session_archive(session::SessionRef) -> session::SuccessResponse = s::ARCHIVE;
    /// Deletes the session, its registry rows and its events in the event log.
    session_purge(session::SessionRef) -> session::PurgeResponse = s::PURGE;
    session_fork(session::ForkRequest) -> session::SessionIdResponse = s::FORK;
    session_merge(session::MergeRequest) -> session::MergeResponse = s::MERGE;
    session_abandon(session::AbandonRequest) -> session::SuccessResponse = s::ABANDON;
    session_get_children(session::SessionRef) -> session::GetChildrenResponse = s::GET_CHILDREN;
    session_get_status_counts(session::StatusCountsRequest) -> session::StatusCounts = s::GET_STATUS_COUNTS;
    session_get_by_adapter_session_id(session::GetByAdapterSessionIdRequest) -> session::GetResponse = s::GET_BY_ADAPTER_SESSION_ID;
    session_search(session::SearchRequest) -> session::ListResponse = s::SEARCH;
    session_agent_attach(session::AttachRequest) -> session::AttachResponse = s::AGENT_ATTACH;
    session_agent_release(session::ReleaseRequest) -> session::SuccessResponse = s::AGENT_RELEASE;
    session_agent_capabilities(session::AgentRef) -> session::CapabilitiesResponse = s::AGENT_CAPABILITIES;
    session_agent_declare_capabilities(session::DeclareCapabilitiesRequest) -> session::CapabilitiesResponse = s::AGENT_DECLARE_CAPABILITIES;
    session_resolve_agent_config(session::ResolveAgentConfigRequest) -> session::ResolveAgentConfigResponse = s::RESOLVE_AGENT_CONFIG;
    /// Stores a message; the delivery runner delivers it to the targeted agents.
    session_send_message(session::SendMessageRequest) -> session::SendMessageResponse = s::SEND_MESSAGE;
    session_user_message_acknowledge(session::AcknowledgeRequest) -> session::SuccessResponse = s::USER_MESSAGE_ACKNOWLEDGE;
    session_user_message_complete(session::CompleteRequest) -> session::CompleteResponse = s::USER_MESSAGE_COMPLETE;
    session_turns(session::SessionRef) -> session::TurnsResponse = s::TURNS;
    session_messages(session::MessagesRequest) -> session::MessagesResponse = s::MESSAGES;
    session_usage(session::UsageRequest) -> session::UsageResponse = s::USAGE;
    session_snapshot_export(session::ExportRequest) -> session::ExportResponse = s::SNAPSHOT_EXPORT;
    session_snapshot_import(session::ImportRequest) -> session::ImportResponse = s::SNAPSHOT_IMPORT;
    session_snapshot_validate(session::ValidateRequest) -> session::ValidateResponse = s::SNAPSHOT_VALIDATE;
    session_get_context_window_state(cost::ContextWindowRequest) -> cost::ContextWindowResponse = cost::CONTEXT_WINDOW;

    event_append(events::AppendRequest) -> events::AppendResponse = subjects::event::APPEND;
    event_query(events::QueryRequest) -> events::QueryResponse = subjects::event::QUERY;
    event_since(events::SinceRequest) -> events::SinceResponse = subjects::event::SINCE;
    event_purge_session(events::PurgeSessionRequest) -> events::PurgeSessionResponse = subjects::event::PURGE_SESSION;

    delivery_get(delivery::DeliveryRef) -> delivery::Delivery = subjects::delivery::GET;
    delivery_list(delivery::ListDeliveriesRequest) -> delivery::ListDeliveriesResponse = subjects::delivery::LIST;
    delivery_cancel(delivery::CancelDeliveryRequest) -> delivery::Delivery = subjects::delivery::CANCEL;
    delivery_retry(delivery::DeliveryRef) -> delivery::Delivery = subjects::delivery::RETRY;
    delivery_flush(delivery::FlushRequest) -> delivery::FlushResponse = subjects::delivery::FLUSH;
    /// A harness's receipt for a delivery it was handed.
    delivery_report(delivery::Receipt) -> delivery::Delivery = subjects::delivery::REPORT;

    agent_pause(delivery::AgentRef) -> delivery::AgentHold = subjects::agent::PAUSE;
    agent_resume(delivery::AgentRef) -> delivery::AgentHold = subjects::agent::RESUME;
    /// Releases the agent (its harness exits) and cancels what it was not yet sent.
    agent_stop(delivery::StopAgentRequest) -> delivery::StopAgentResponse = subjects::agent::STOP;
    agent_input(delivery::InputRequest) -> delivery::InputResponse = subjects::agent::INPUT;

    permission_request(permission::PermissionRequest) -> permission::PermissionDecision = permission::REQUEST;
    permission_get(permission::GetPermissionRequest) -> permission::Permission = permission::GET;
    permission_list(permission::ListRequest) -> permission::PermissionList = permission::LIST;
    permission_approve(permission::DecideRequest) -> permission::DecideResponse = permission::APPROVE;
    permission_deny(permission::DecideRequest) -> permission::DecideResponse = permission::DENY;
    question_ask(permission::QuestionRequest) -> permission::QuestionReply = permission::ASK;
    question_get(permission::GetQuestionRequest) -> permission::Question = permission::QUESTION_GET;
    question_list(permission::ListRequest) -> permission::QuestionList = permission::QUESTION_LIST;
    question_answer(permission::AnswerRequest) -> permission::AnswerResponse = permission::ANSWER;

    cost_report(cost::ReportRequest) -> cost::Report = cost::REPORT;
}
