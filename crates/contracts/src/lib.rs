//! Wire contracts of relay-mesh. Payloads are camelCase JSON as in the seeds; times are Unix ms.
//!
//! Every type here is shared by the service that answers a subject and every client that calls
//! it, so a field renamed here is renamed everywhere at once.

pub mod a2a;
pub mod access;
pub mod actions;
pub mod agent_events;
pub mod audit;
pub mod automation;
pub mod capabilities;
pub mod consensus;
pub mod context;
pub mod cost;
pub mod delivery;
pub mod error;
pub mod events;
pub mod hosts;
pub mod keys;
pub mod messaging;
pub mod permission;
pub mod prompts;
pub mod rpc;
pub mod session;
pub mod subjects;
pub mod workspace;

pub use context::{Caller, RequestContext};
pub use error::{ErrorBody, ErrorCode, WireError};
pub use rpc::Rpc;

/// The longest id any request may name (`sessionId`, `agentId`, each of `agentIds`, …), in
/// characters (so at most 1 KiB of UTF-8); longer ones are `invalid_request`.
pub const MAX_ID_CHARS: usize = 256;

/// Whether `id` is a name-like id a client chooses (a webhook, schedule, persona or profile
/// id): `^[A-Za-z0-9_.:-]{1,128}$`, as the OpenAPI document says.
pub fn is_name_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 128 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.:-".contains(&b))
}

/// Whether `id` is longer than [`MAX_ID_CHARS`].
pub fn id_too_long(id: &str) -> bool {
    // Cheap first: fewer bytes than the limit cannot be more characters.
    id.len() > MAX_ID_CHARS && id.chars().count() > MAX_ID_CHARS
}

/// Why an id given as `field` is refused, if it is: blank, or longer than [`MAX_ID_CHARS`].
pub fn id_problem(field: &str, id: &str) -> Option<String> {
    (id.trim().is_empty() || id_too_long(id))
        .then(|| format!("{field} must be a non-empty string of at most {MAX_ID_CHARS} characters"))
}

/// Why a text a person or agent writes (a question, a name, a reason) given as `field` is
/// refused, if it is: blank, more than `most` characters, or with NUL.
pub fn text_problem(field: &str, text: &str, most: usize) -> Option<String> {
    (text.trim().is_empty() || text.chars().count() > most || text.contains('\0'))
        .then(|| format!("{field}: 1 to {most} characters, not blank, without NUL"))
}
