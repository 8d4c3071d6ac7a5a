//! One HTTP request is one trace: a server span that continues the caller's `traceparent` (or
//! starts the trace), inside which every bus call the request makes carries the context on.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use std::collections::HashMap;
use tracing::Instrument;

pub async fn http_span(request: Request, next: Next) -> Response {
    let method = request.method().to_string();
    let path = request.uri().path().to_string();
    let span = tracing::info_span!(
        "http",
        otel.kind = "server",
        otel.name = %format!("{method} {path}"),
        http.request.method = %method,
        url.path = %path,
        http.response.status_code = tracing::field::Empty,
    );
    let carried: HashMap<String, String> = ["traceparent", "tracestate"]
        .into_iter()
        .filter_map(|k| Some((k.to_string(), request.headers().get(k)?.to_str().ok()?.to_string())))
        .collect();
    relay_bus::trace::set_parent_from_map(&span, &carried);
    let response = next.run(request).instrument(span.clone()).await;
    span.record("http.response.status_code", response.status().as_u16());
    response
}
