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

use relay_contracts::{Rpc, events, rpc, session};
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
pub const SPAWN_TIMEOUT: Duration = Duration::from_secs(rpc::AgentSpawn::MIN_TIMEOUT_SECS);

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

    /// Calls `R` with its declared types; the typed methods below are this for each subject.
    pub async fn rpc<R: Rpc>(&self, req: &R::Request) -> Result<R::Response> {
        Ok(relay_bus::client::call::<R>(&self.nats, req, self.timeout).await?)
    }

    /// Seed 002 `session.enrichContext`, an optional subject: the host's extra context for the
    /// session, or `handled: false` when no host serves it (NATS "no responders").
    pub async fn enrich_context(&self, session_id: &str) -> Result<session::EnrichContextResponse> {
        let req = session::EnrichContextRequest {
            session_id: session_id.to_string(),
        };
        let asked: Result<serde_json::Map<String, serde_json::Value>> = self.call(session::ENRICH_CONTEXT, &req).await;
        match asked {
            Ok(context) => Ok(session::EnrichContextResponse { handled: true, context }),
            Err(Error::Wire(e))
                if e.code() == ErrorCode::Unavailable && e.error.message.starts_with("no service answers") =>
            {
                Ok(session::EnrichContextResponse {
                    handled: false,
                    context: serde_json::Map::new(),
                })
            }
            Err(e) => Err(e),
        }
    }

    /// Follows the event log from `filter.seq` (0 = the beginning): see [`EventStream`].
    pub async fn follow(&self, filter: events::SinceRequest) -> Result<EventStream> {
        EventStream::start(self.clone(), filter).await
    }
}

/// One method per declared subject (`relay_contracts::with_rpcs!`): `session_fork(&ForkRequest)`
/// calls `session.fork` and returns its `SessionIdResponse`.
macro_rules! client_methods {
    ($(
        $(#[doc = $doc:expr])+
        $name:ident $method:ident = $subject:literal, $service:ident, $roles:expr, $scope:ident,
            $req:ty => $resp:ty $(, grpc($gs:literal, $gm:literal))? $(, timeout($secs:literal))?;
    )*) => {
        impl Client {
            $(
                $(#[doc = $doc])+
                #[doc = concat!("\n\nSubject `", $subject, "` ([`rpc::", stringify!($name), "`]).")]
                pub async fn $method(&self, req: &<rpc::$name as Rpc>::Request) -> Result<<rpc::$name as Rpc>::Response> {
                    self.rpc::<rpc::$name>(req).await
                }
            )*
        }
    };
}

relay_contracts::with_rpcs!(client_methods);
