//! The OpenAPI 3.1 document, generated from the handlers' annotations and the contract types.
//! `make openapi` writes it to docs/api/openapi.json; a test fails when the two differ.

use crate::{ApiError, AppState};
use axum::body::Body;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use relay_contracts::{ErrorCode, WireError};
use std::collections::HashSet;
use std::sync::LazyLock;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "relay-mesh HTTP API",
        description = "Sessions, messages, permissions, questions, agent control, deliveries, events (REST and SSE) and costs over the relay-mesh services. Errors are `{\"error\":{code,message,retryable}}`.",
        license(name = "Apache-2.0")
    ),
    servers((url = "/api/v1")),
    // Enums used only by query parameters are not collected on their own.
    components(schemas(relay_contracts::session::StatusFilter)),
    modifiers(&BearerAuth),
    security(("bearerAuth" = [])),
    tags(
        (name = "sessions"), (name = "messages"), (name = "actions"), (name = "consensus"), (name = "prompts"), (name = "webhooks"), (name = "schedules"), (name = "permissions"), (name = "questions"), (name = "agents"),
        (name = "deliveries"), (name = "events"), (name = "costs"), (name = "keys"), (name = "workspaces"), (name = "audit")
    )
)]
pub struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        let mut scheme = Http::new(HttpAuthScheme::Bearer);
        scheme.description = Some(
            "A workspace API key (`rk_…`, from POST /keys or `relayctl keys create`) with its role (viewer, operator, admin), or the gateway's shared token (gateway.api_token or RELAY_API_TOKEN: an admin key of `default`). Without a shared token, a request with no key is an admin of `default` (local development).".into(),
        );
        components.add_security_scheme("bearerAuth", SecurityScheme::Http(scheme));
    }
}

/// The document: [`ApiDoc`]'s info, tags and security with the operations of every route
/// (routes.rs).
fn document() -> utoipa::openapi::OpenApi {
    let mut doc = ApiDoc::openapi();
    doc.merge(crate::routes::api().into_openapi());
    doc
}

/// The document as served and checked in: pretty JSON with a trailing newline.
pub fn json() -> String {
    let mut doc = serde_json::to_value(document()).unwrap_or_default();
    constrain(&mut doc, None);
    // Label keys and values as the hosts check them.
    let name = serde_json::json!({ "type": "string", "pattern": "^[A-Za-z0-9_.:-]{1,128}$" });
    doc["components"]["schemas"]["Placement"]["properties"]["labels"] = serde_json::json!({
        "type": "object", "maxProperties": relay_contracts::hosts::MAX_LABELS,
        "propertyNames": name, "additionalProperties": name,
        "description": "e.g. {\"gpu\": \"a100\"}; `os` and `arch` are set by every host."
    });
    // A task is the first message of an agent the gateway spawns: it needs a `cli`.
    doc["components"]["schemas"]["CreateSession"]["if"] =
        serde_json::json!({ "required": ["task"], "properties": { "task": { "type": "string" } } });
    doc["components"]["schemas"]["CreateSession"]["then"] =
        serde_json::json!({ "required": ["cli"], "properties": { "cli": { "type": "string" } } });
    // A message needs an address: `to` or `threadId`; handles start with @, channels with #.
    let schemas = &mut doc["components"]["schemas"];
    schemas["SendRequest"]["anyOf"] = serde_json::json!([
        { "required": ["to"], "properties": { "to": { "not": { "type": "null" } } } },
        { "required": ["threadId"], "properties": { "threadId": { "type": "string" } } }
    ]);
    schemas["To"]["oneOf"] = serde_json::json!([
        { "type": "string", "pattern": "^(@[A-Za-z0-9][A-Za-z0-9_-]{0,23}|#[A-Za-z0-9][A-Za-z0-9_-]{0,39})$" },
        { "type": "array", "items": { "type": "string", "pattern": "^@[A-Za-z0-9][A-Za-z0-9_-]{0,23}$" },
          "minItems": 1, "maxItems": 100 }
    ]);
    schemas["SendRequest"]["properties"]["attachments"]["items"] = serde_json::json!({ "oneOf": [
        { "type": "object", "additionalProperties": false, "required": ["type", "text"], "properties": {
            "type": { "const": "text" }, "text": { "type": "string", "pattern": NO_NUL },
            "name": { "type": "string", "pattern": NO_NUL } } },
        { "type": "object", "additionalProperties": false, "required": ["type", "mediaType", "data"], "properties": {
            "type": { "const": "image" }, "mediaType": { "type": "string", "pattern": "^image/[^\\u0000]*$" },
            "data": { "type": "string", "description": "base64", "pattern": NO_NUL },
            "name": { "type": "string", "pattern": NO_NUL } } }
    ]});
    // An action's input is any JSON object, but no string in it (keys included) may hold NUL.
    schemas["NoNulJson"] = serde_json::json!({ "description": "Any JSON value whose strings hold no NUL", "anyOf": [
        { "type": "string", "pattern": NO_NUL },
        { "type": ["number", "boolean", "null"] },
        { "type": "array", "items": { "$ref": "#/components/schemas/NoNulJson" } },
        { "type": "object", "propertyNames": { "pattern": NO_NUL },
          "additionalProperties": { "$ref": "#/components/schemas/NoNulJson" } }
    ]});
    schemas["InvokeRequest"]["properties"]["input"] = serde_json::json!({
        "type": ["object", "null"], "description": "Checked against the action's input schema; `{}` when absent.",
        "propertyNames": { "pattern": NO_NUL }, "additionalProperties": { "$ref": "#/components/schemas/NoNulJson" } });
    // Free-form objects stored as given: no NUL in them either.
    for (schema, field) in [("PipelineStep", "options"), ("ClientObservation", "payload")] {
        schemas[schema]["properties"][field] = serde_json::json!({
            "type": ["object", "null"], "propertyNames": { "pattern": NO_NUL },
            "additionalProperties": { "$ref": "#/components/schemas/NoNulJson" } });
    }
    // A question and its options are not blank; options are distinct.
    let text = |most: usize| serde_json::json!({ "type": "string", "minLength": 1, "maxLength": most, "pattern": ID });
    schemas["ProposeRequest"]["properties"]["question"] = text(4000);
    schemas["ProposeRequest"]["properties"]["options"] =
        serde_json::json!({ "type": "array", "minItems": 2, "maxItems": 16, "uniqueItems": true, "items": text(200) });
    declare_body_limits(&mut doc);
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

/// The most an operation without a request body may carry: room for what clients send when
/// they mean nothing (whitespace, `null`, `{}`), not for a payload the gateway would drop.
pub const NO_BODY_MAX_BYTES: usize = 64;

/// Every operation that reads a body answers 413 over a limit: declared once here (the response
/// in `components`, and the limit as `x-max-body-bytes` on each operation), not per route.
fn declare_body_limits(doc: &mut serde_json::Value) {
    let body_limit = crate::GatewaySettings::default().body_limit_bytes;
    doc["components"]["responses"]["PayloadTooLarge"] = serde_json::json!({
        "description": format!(
            "The body is longer than the operation's `x-max-body-bytes`: gateway.body_limit_bytes ({body_limit} \
             bytes by default) for an operation with a request body; {NO_BODY_MAX_BYTES} for one without, which \
             takes no body (none, whitespace, `null` or `{{}}`; anything else shorter is 400)"
        ),
        "content": { "application/json": { "schema": { "$ref": "#/components/schemas/WireError" } } }
    });
    let Some(paths) = doc["paths"].as_object_mut() else {
        return;
    };
    for item in paths.values_mut() {
        for (method, op) in item.as_object_mut().into_iter().flatten() {
            if !matches!(method.as_str(), "post" | "put" | "patch") {
                continue;
            }
            let limit = if op.get("requestBody").is_some() {
                body_limit
            } else {
                NO_BODY_MAX_BYTES
            };
            op["x-max-body-bytes"] = limit.into();
            op["responses"]["413"] = serde_json::json!({ "$ref": "#/components/responses/PayloadTooLarge" });
        }
    }
}

/// The POST routes the document declares without a request body, as `/sessions/{}/archive`.
static BODYLESS: LazyLock<HashSet<String>> = LazyLock::new(|| {
    document()
        .paths
        .paths
        .iter()
        .filter(|(_, item)| item.post.as_ref().is_some_and(|op| op.request_body.is_none()))
        .map(|(path, _)| template(path))
        .collect()
});

/// A route's path with its parameters unnamed: the router and the document name them apart
/// (`{turn_id}`, `{turnId}`).
fn template(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut in_param = false;
    for c in path.chars() {
        match c {
            '{' => {
                in_param = true;
                out.push_str("{}");
            }
            '}' => in_param = false,
            _ if !in_param => out.push(c),
            _ => {}
        }
    }
    out
}

/// Holds the POST routes the document declares without a body to it: a body is refused, not
/// dropped unread (a caller who sent one meant something by it). What clients send for nothing
/// (whitespace, `null`, `{}`) passes; over [`NO_BODY_MAX_BYTES`] is 413, anything else 400.
pub async fn refuse_undeclared_bodies(State(s): State<AppState>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let Some(route) = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
    else {
        return next.run(request).await;
    };
    let path = route.strip_prefix("/api/v1").unwrap_or(&route);
    if !BODYLESS.contains(&template(path)) {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    // Read (and drop) up to the gateway's body limit before refusing, as a route with a body
    // does: a client still writing when the connection closes never reads the answer.
    let mut kept = Vec::new();
    let mut total = 0;
    let mut frames = body.into_data_stream();
    while let Some(Ok(chunk)) = frames.next().await {
        total += chunk.len();
        if kept.len() <= NO_BODY_MAX_BYTES {
            kept.extend_from_slice(&chunk[..chunk.len().min(NO_BODY_MAX_BYTES + 1 - kept.len())]);
        }
        if total > s.settings.body_limit_bytes {
            break;
        }
    }
    if total > NO_BODY_MAX_BYTES {
        let message =
            format!("POST {path} takes no body (send none, or {{}}); this one is over {NO_BODY_MAX_BYTES} bytes");
        let body = WireError::new(ErrorCode::InvalidRequest, message);
        return (StatusCode::PAYLOAD_TOO_LARGE, axum::Json(body)).into_response();
    }
    let text = kept.trim_ascii();
    let empty_object = text.len() >= 2
        && text.first() == Some(&b'{')
        && text.last() == Some(&b'}')
        && text[1..text.len() - 1].trim_ascii().is_empty();
    if !(text.is_empty() || text == b"null" || empty_object) {
        return ApiError::Invalid(format!("POST {path} takes no body (send none, or {{}})")).into_response();
    }
    next.run(Request::from_parts(parts, Body::empty())).await
}

/// No string may hold NUL (Postgres cannot store it).
const NO_NUL: &str = "^[^\\u0000]*$";
/// An id is not blank either.
const ID: &str = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$";

/// Writes into the document what the API checks for every string, so that it describes
/// exactly what the API accepts: no NUL anywhere, and ids (a field or parameter named `…Id`, a
/// path parameter) of at most `MAX_ID_CHARS` characters.
fn constrain(node: &mut serde_json::Value, name: Option<&str>) {
    use serde_json::Value;
    match node {
        Value::Object(map) => {
            let is_string = match map.get("type") {
                Some(Value::String(t)) => t == "string",
                Some(Value::Array(ts)) => ts.iter().any(|t| t == "string"),
                _ => false,
            };
            if is_string && !map.contains_key("enum") && !map.contains_key("format") {
                let id = name.is_some_and(is_id);
                // Query filters may be empty (no filter); ids in bodies and paths may not.
                let blank_ok = name.is_some_and(|n| n.starts_with("query:"));
                map.entry("pattern")
                    .or_insert_with(|| if id && !blank_ok { ID } else { NO_NUL }.into());
                if id {
                    map.entry("maxLength").or_insert(relay_contracts::MAX_ID_CHARS.into());
                }
            }
            // A parameter names its schema; an object names its properties.
            let param = match (map.get("name"), map.get("in")) {
                (Some(Value::String(n)), Some(Value::String(place))) => Some(match place.as_str() {
                    "path" => "pathId".to_string(),
                    "query" => format!("query:{n}"),
                    _ => n.clone(),
                }),
                _ => None,
            };
            for (key, child) in map.iter_mut() {
                match key.as_str() {
                    "properties" => {
                        if let Value::Object(props) = child {
                            for (prop, schema) in props.iter_mut() {
                                constrain(schema, Some(prop));
                            }
                        }
                    }
                    "schema" => constrain(child, param.as_deref().or(name)),
                    "items" => constrain(child, name),
                    _ => constrain(child, None),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| constrain(i, name)),
        _ => {}
    }
}

fn is_id(name: &str) -> bool {
    name.ends_with("Id") || name.ends_with("Ids")
}
