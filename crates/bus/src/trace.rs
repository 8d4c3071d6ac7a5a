//! W3C trace context (`traceparent`, `tracestate`) carried in NATS headers.

use async_nats::HeaderMap;
use opentelemetry::propagation::{Extractor, Injector};
use tracing_opentelemetry::OpenTelemetrySpanExt;

struct HeaderInjector<'a>(&'a mut HeaderMap);

impl Injector for HeaderInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key, value.as_str());
    }
}

struct HeaderExtractor<'a>(&'a HeaderMap);

impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(async_nats::HeaderValue::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.iter().map(|(k, _)| k.as_ref()).collect()
    }
}

/// Writes the current span's context into `headers`.
pub(crate) fn inject_current(headers: &mut HeaderMap) {
    let cx = tracing::Span::current().context();
    opentelemetry::global::get_text_map_propagator(|p| p.inject_context(&cx, &mut HeaderInjector(headers)));
}

/// Makes the context found in `headers` (if any) the parent of `span`.
pub(crate) fn set_parent_from(span: &tracing::Span, headers: Option<&HeaderMap>) {
    let Some(headers) = headers else { return };
    let cx = opentelemetry::global::get_text_map_propagator(|p| p.extract(&HeaderExtractor(headers)));
    let _ = span.set_parent(cx);
}

/// Makes the W3C context in `headers` (lower-case `traceparent`, `tracestate`), if any, the
/// parent of `span`: how the gateway continues a trace an HTTP client started.
pub fn set_parent_from_map(span: &tracing::Span, headers: &std::collections::HashMap<String, String>) {
    let cx = opentelemetry::global::get_text_map_propagator(|p| p.extract(headers));
    let _ = span.set_parent(cx);
}

/// Runs `fut` in a trace that is not recorded: its calls carry a not-sampled `traceparent`, so
/// the spans they cause are not exported either. For background polling, which would
/// otherwise make a one-span trace every time it looks.
pub async fn untraced<F: std::future::Future>(fut: F) -> F::Output {
    tracing::Instrument::instrument(fut, continuing("untraced", None)).await
}

/// A parent that is not sampled: spans under it, here and in the services called, are dropped.
fn quiet_context() -> opentelemetry::Context {
    use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
    // Any valid ids do: nothing is recorded under them.
    let id = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos())
        | 1;
    let quiet = SpanContext::new(
        TraceId::from(id),
        SpanId::from((id as u64) | 1),
        TraceFlags::default(), // not sampled
        false,
        TraceState::default(),
    );
    opentelemetry::Context::new().with_remote_span_context(quiet)
}

/// The current span's context as a W3C `traceparent`, to store with work done later.
pub fn current_traceparent() -> Option<String> {
    let cx = tracing::Span::current().context();
    let mut carrier = std::collections::HashMap::new();
    opentelemetry::global::get_text_map_propagator(|p| p.inject_context(&cx, &mut carrier));
    carrier.remove("traceparent")
}

/// A span for work that continues a stored `traceparent` (none: not traced, like polling).
pub fn continuing(name: &'static str, traceparent: Option<&str>) -> tracing::Span {
    let span = tracing::info_span!("work", otel.name = name);
    match traceparent {
        Some(tp) => {
            let carrier = std::collections::HashMap::from([("traceparent".to_string(), tp.to_string())]);
            set_parent_from_map(&span, &carrier);
        }
        None => {
            let _ = span.set_parent(quiet_context());
        }
    }
    span
}

/// The span of a message served outside the micro service runtime (a harness's
/// `agent.<id>.deliver`), child of the sender's context.
pub fn message_span(subject: &str, headers: Option<&HeaderMap>) -> tracing::Span {
    let span = tracing::info_span!("rpc", otel.kind = "server", otel.name = %subject, subject = %subject);
    set_parent_from(&span, headers);
    span
}
