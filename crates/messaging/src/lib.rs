//! Relay messaging (`message.*`, `channel.*`): agents and people talk through the mesh, in DMs,
//! groups, channels and threads. A library that a service hosts, by data ownership: a message
//! is stored once as a relay message (its conversation's view, `registry_relay_messages`) and
//! once per recipient as a message in the recipient's session with one delivery, in the same
//! transaction — so its host is the session registry, which owns sessions, agents and their
//! send path, and registers these handlers on its micro service ([`serve`]).
//!
//! # Layout
//! - [`send`](mod@send): `message.send` and coordination's `message.sendFor` and
//!   `message.actionResult`: the sender, the route (DM, group, channel, thread, mentions), the
//!   guards (recipients, rate, reply hops), one delivery per recipient.
//! - [`read`]: `message.get`, `message.thread`, `message.search`, what a caller may read.
//! - [`channels`]: `channel.*`; `#general` exists in every workspace with every live agent.
//! - [`store`]: the SQL of relay messages, channels and members; [`RETENTION`].
//! - [`turns`]: sends to one conversation queue in the process; at most two of them hold a
//!   pooled connection.
//! - [`error`]: [`MessagingError`], mapped once onto the wire.

mod channels;
mod error;
mod read;
mod send;
mod store;
mod turns;

pub use error::MessagingError;
pub use store::RETENTION;
pub use turns::{Conversations, Turn};

use relay_bus::service::{ServiceError, ServiceHost};
use relay_contracts::capabilities::DeliveryMode;
use relay_contracts::messaging::{Priority, RelayContext};
use relay_contracts::rpc;
use relay_contracts::session::{Agent, EventPayload, MessageContent, Session, Source};
use serde::{Deserialize, Serialize};
use sqlx::{PgConnection, PgPool};
use std::future::Future;

/// Guards of relay messaging (`[registry.messaging]`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct MessagingSettings {
    /// The most recipients one message may have (a channel's members included).
    pub max_recipients: usize,
    /// The most messages one conversation (a DM pair, a group, a channel) takes per minute.
    pub max_per_minute: i64,
    /// The most replies agents may chain in one thread before a person speaks again: the loop
    /// guard that stops two agents answering each other forever.
    pub max_hops: i64,
}

impl Default for MessagingSettings {
    fn default() -> Self {
        MessagingSettings {
            max_recipients: 100,
            max_per_minute: 120,
            max_hops: 8,
        }
    }
}

/// What the handlers work with: the host's database and the guards.
#[derive(Clone)]
pub struct Messaging {
    pub db: PgPool,
    pub settings: MessagingSettings,
    /// Where sends to one conversation queue in this process.
    pub conversations: Conversations,
}

/// One recipient's copy of a message, to post in its session.
pub struct Delivery {
    pub content: MessageContent,
    pub delivery_mode: Option<DeliveryMode>,
    pub source: Source,
    pub relay: RelayContext,
    pub priority: Option<Priority>,
    pub deadline: Option<String>,
}

/// The service that hosts messaging: it owns the agents and their sessions, and the send path
/// that stores a message in a session with its delivery.
pub trait Host: Clone + Send + Sync + 'static {
    type Change: Change;

    fn messaging(&self) -> &Messaging;

    /// A transaction whose events are recorded with it ([`Change::emit`]).
    fn begin(&self) -> impl Future<Output = Result<Self::Change, MessagingError>> + Send;

    /// The agent with this id, `not_found` when there is none.
    fn agent(conn: &mut PgConnection, agent_id: &str) -> impl Future<Output = Result<Agent, MessagingError>> + Send;

    /// The live agent of `workspace` with this handle.
    fn agent_by_handle(
        conn: &mut PgConnection,
        workspace: &str,
        handle: &str,
    ) -> impl Future<Output = Result<Option<Agent>, MessagingError>> + Send;

    /// The workspace of an agent, `None` when there is no such agent.
    fn agent_workspace(
        conn: &mut PgConnection,
        agent_id: &str,
    ) -> impl Future<Output = Result<Option<String>, MessagingError>> + Send;
}

/// One change in the host's tables: a transaction and the events it records.
pub trait Change: Send {
    fn conn(&mut self) -> &mut PgConnection;

    /// Locks a session that exists and is not purged, for posting to it.
    fn lock_session(&mut self, session_id: &str) -> impl Future<Output = Result<Session, MessagingError>> + Send;

    /// Stores `delivery` as a message in the locked `session` for `to` and hands it to the
    /// delivery runner; the delivery's id.
    fn post(
        &mut self,
        session: &mut Session,
        to: &Agent,
        delivery: Delivery,
    ) -> impl Future<Output = Result<String, MessagingError>> + Send;

    /// Records `payload` on a session's stream, in the session's workspace.
    fn emit<P: EventPayload + Send>(
        &mut self,
        session_id: &str,
        payload: P,
    ) -> impl Future<Output = Result<(), MessagingError>> + Send;

    /// Records `payload` on another stream (a conversation) of `workspace`.
    fn emit_in<P: EventPayload + Send>(
        &mut self,
        workspace: &str,
        stream: &str,
        payload: P,
    ) -> impl Future<Output = Result<(), MessagingError>> + Send;

    /// Keeps a conversation's [`Turn`] until the transaction has ended, committed or rolled
    /// back, as the database lock it stands in front of (not until the change's hand-over and
    /// publishing after the commit are done).
    fn hold(&mut self, turn: Turn);

    fn commit(self) -> impl Future<Output = Result<(), MessagingError>> + Send;
}

/// Registers the `message.*` and `channel.*` endpoints on the host's micro service.
pub async fn serve<S: Host>(host: &mut ServiceHost<S>) -> Result<(), ServiceError> {
    host.serve::<rpc::MessageSend>(send::send::<S>).await?;
    host.serve::<rpc::MessageSendFor>(send::send_for::<S>).await?;
    host.serve::<rpc::MessageActionResult>(send::action_result_for::<S>)
        .await?;
    host.serve::<rpc::MessageGet>(read::get::<S>).await?;
    host.serve::<rpc::MessageThread>(read::thread::<S>).await?;
    host.serve::<rpc::MessageSearch>(read::search::<S>).await?;
    host.serve::<rpc::ChannelCreate>(channels::create::<S>).await?;
    host.serve::<rpc::ChannelList>(channels::list::<S>).await?;
    host.serve::<rpc::ChannelJoin>(channels::join::<S>).await?;
    host.serve::<rpc::ChannelLeave>(channels::leave::<S>).await?;
    host.serve::<rpc::ChannelMembers>(channels::members::<S>).await?;
    host.serve::<rpc::ChannelHistory>(channels::history::<S>).await?;
    Ok(())
}

/// An id a caller gave: `invalid_request` naming the field when it is not one.
fn check_id(field: &str, id: &str) -> Result<(), MessagingError> {
    relay_contracts::id_problem(field, id).map_or(Ok(()), |p| Err(MessagingError::Invalid(p)))
}
