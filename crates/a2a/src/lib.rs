//! A2A (protocol 1.0) in relay-mesh: one message to an agent is a task, and its state is the
//! fold of the session's events from that message's `session.user_message.sent` on. The
//! gateway folds to answer and stream tasks (its JSON-RPC surface is `gateway::a2a`);
//! automation folds to push them. Both build the same A2A JSON (ProtoJSON of `a2a.v1`) here.
//!
//! # Layout
//! - [`task`]: the fold ([`TaskFold`]), the task states and the JSON of a task, its status
//!   and its stream responses.
//! - [`log`]: a task folded from the event log over the bus (`event.query`).
//!
//! The wire types other contracts name (a task's address, a webhook's push) are
//! `relay_contracts::a2a`.

pub mod log;
pub mod task;

pub use relay_contracts::a2a::{A2aTaskPush, NOTIFICATION_TOKEN_HEADER, TaskKey};
pub use task::{Pending, SENT, TaskFold, TaskState, Update, sends_to};

pub const PROTOCOL_VERSION: &str = "1.0";
