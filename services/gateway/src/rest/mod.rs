//! REST `/api/v1` (seed 003 §2.3 and §6.6, plus the Makaio session operations), one module per
//! resource. Each handler turns the HTTP request into a bus request (or calls [`crate::ops`],
//! which the other surfaces share), so the services stay the only source of truth; each is
//! declared with its OpenAPI operation (`#[utoipa::path]`) and listed in [`crate::routes`].
//!
//! An agent's `{name}` in a path is its agent id (the id a harness is attached under) or its
//! `@handle`.

pub(crate) mod actions;
pub(crate) mod agents;
pub(crate) mod automation;
pub(crate) mod deliveries;
pub(crate) mod messaging;
pub(crate) mod permissions;
pub(crate) mod reports;
pub(crate) mod session_context;
pub(crate) mod sessions;
pub(crate) mod tenancy;

// The optional body of the routes that end or stop something: why, for the record (no doc
// comment: it would become its OpenAPI description).
#[derive(Debug, Default, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Reason {
    pub reason: Option<String>,
}
