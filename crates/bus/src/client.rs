//! Calling other services: typed requests and event publishing, both carrying trace context.

use crate::{context, trace};
use async_nats::service::{NATS_SERVICE_ERROR, NATS_SERVICE_ERROR_CODE};
use async_nats::{Client, HeaderMap, RequestErrorKind};
use relay_contracts::{ErrorCode, WireError};
use serde::{Serialize, de::DeserializeOwned};
use std::time::Duration;

/// Calls `R` with its declared types: `call::<SessionFork>(&nats, &req, timeout)`.
pub async fn call<R: relay_contracts::Rpc>(
    client: &Client,
    req: &R::Request,
    timeout: Duration,
) -> Result<R::Response, WireError> {
    let timeout = timeout.max(Duration::from_secs(R::MIN_TIMEOUT_SECS));
    request(client, R::SUBJECT, req, timeout).await
}

/// Sends `req` to `subject` and decodes the reply; a wire error reply comes back as `Err`.
/// Transport failures map onto the same codes: no responder → `unavailable`, no reply → `timeout`.
pub async fn request<Req: Serialize, Resp: DeserializeOwned>(
    client: &Client,
    subject: &str,
    req: &Req,
    timeout: Duration,
) -> Result<Resp, WireError> {
    let payload = serde_json::to_vec(req)
        .map_err(|e| WireError::new(ErrorCode::InvalidRequest, format!("cannot encode request: {e}")))?;
    let reply = request_bytes(client, subject, payload, timeout).await?;
    serde_json::from_slice(&reply).map_err(|e| {
        WireError::new(
            ErrorCode::Internal,
            format!("reply from {subject} does not match the contract: {e}"),
        )
    })
}

/// Like [`request`] with a raw body, returning the raw reply body; used for garbage-in tests.
pub async fn request_bytes(
    client: &Client,
    subject: &str,
    payload: Vec<u8>,
    timeout: Duration,
) -> Result<bytes::Bytes, WireError> {
    let request = async_nats::Request::new()
        .payload(payload.into())
        .headers(outgoing_headers())
        .timeout(Some(timeout));
    let message = client
        .send_request(context::outgoing_subject(subject), request)
        .await
        .map_err(|e| match e.kind() {
            RequestErrorKind::TimedOut => WireError::new(
                ErrorCode::Timeout,
                format!("{subject} did not answer within {timeout:?}"),
            ),
            // Too big for NATS (payload plus headers): retrying can never help.
            RequestErrorKind::MaxPayloadExceeded => WireError::new(
                ErrorCode::InvalidRequest,
                format!("request to {subject} exceeds the NATS max_payload"),
            ),
            RequestErrorKind::NoResponders => {
                WireError::new(ErrorCode::Unavailable, format!("no service answers {subject}"))
            }
            _ => WireError::new(ErrorCode::Unavailable, format!("request to {subject} failed: {e}")),
        })?;
    match message.headers.as_ref().and_then(|h| h.get(NATS_SERVICE_ERROR_CODE)) {
        None => Ok(message.payload),
        Some(status) => Err(
            serde_json::from_slice::<WireError>(&message.payload).unwrap_or_else(|_| {
                // A micro service that is not ours: build the error from its headers.
                let text = message
                    .headers
                    .as_ref()
                    .and_then(|h| h.get(NATS_SERVICE_ERROR))
                    .map(std::string::ToString::to_string)
                    .unwrap_or_default();
                WireError::new(code_from_status(status.as_str()), text)
            }),
        ),
    }
}

fn code_from_status(status: &str) -> ErrorCode {
    let status: u16 = status.parse().unwrap_or(500);
    ErrorCode::ALL
        .into_iter()
        .find(|c| c.status() == status)
        .unwrap_or(ErrorCode::Internal)
}

/// Publishes an event as JSON with the current trace context. Core NATS publish is
/// fire-and-forget: callers persist first, then publish.
pub async fn publish<T: Serialize>(client: &Client, subject: String, event: &T) -> Result<(), WireError> {
    let payload = serde_json::to_vec(event)
        .map_err(|e| WireError::new(ErrorCode::Internal, format!("cannot encode event: {e}")))?;
    client
        .publish_with_headers(subject, outgoing_headers(), payload.into())
        .await
        .map_err(|e| WireError::new(ErrorCode::Unavailable, format!("cannot publish: {e}")))
}

/// The headers every call and publish carries: the trace context and the request context.
fn outgoing_headers() -> HeaderMap {
    let mut headers = HeaderMap::new();
    trace::inject_current(&mut headers);
    context::inject(&mut headers);
    headers
}
