//! The error responses many routes share, each declared once: a route names them in its
//! `#[utoipa::path(responses(...))]` beside its own (a 404 that says what was not found stays a
//! tuple there). Every one has the `WireError` body.

use relay_contracts::WireError;
use utoipa::IntoResponses;

/// The request is malformed or breaks a rule (`invalid_request`).
#[derive(IntoResponses)]
#[response(status = 400, description = "Invalid request")]
pub struct BadRequest(pub WireError);

/// No API key, or one that is wrong or revoked.
#[derive(IntoResponses)]
#[response(status = 401, description = "Missing or wrong bearer token")]
pub struct Unauthorized(pub WireError);

/// The key's role is viewer: it may only look.
#[derive(IntoResponses)]
#[response(status = 403, description = "A viewer key")]
pub struct ViewerKey(pub WireError);

/// The route needs an admin key.
#[derive(IntoResponses)]
#[response(status = 403, description = "Not an admin key")]
pub struct NotAdmin(pub WireError);

/// What the path names does not exist (in the key's workspace).
#[derive(IntoResponses)]
#[response(status = 404, description = "Not found")]
pub struct NotFound(pub WireError);

/// The current state does not allow it.
#[derive(IntoResponses)]
#[response(status = 409, description = "Conflicts with the current state")]
pub struct Conflict(pub WireError);

/// The key made more requests than its limit allows; Retry-After says when to try again.
#[derive(IntoResponses)]
#[response(status = 429, description = "Over the key's rate limit (Retry-After)")]
pub struct RateLimited(pub WireError);

/// A service behind the gateway is down or shedding load; retryable.
#[derive(IntoResponses)]
#[response(status = 503, description = "A service is unavailable")]
pub struct Unavailable(pub WireError);

/// A service did not answer in time; retryable.
#[derive(IntoResponses)]
#[response(status = 504, description = "A service did not answer in time")]
pub struct Timeout(pub WireError);
