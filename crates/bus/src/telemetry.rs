//! Logs and traces. Logs go to stdout (JSON by default); spans always get W3C trace ids so that
//! context propagates across services, and are exported over OTLP only when an endpoint is set.

use crate::settings::{LogFormat, TelemetrySettings};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::{EnvFilter, layer::SubscriberExt, util::SubscriberInitExt};

/// Flushes pending spans when dropped at the end of `main`.
pub struct TelemetryGuard {
    provider: SdkTracerProvider,
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        let _ = self.provider.shutdown();
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error("OTLP exporter: {0}")]
    Exporter(#[from] opentelemetry_otlp::ExporterBuildError),
    #[error("log filter: {0}")]
    Filter(#[from] tracing_subscriber::filter::ParseError),
    #[error("a global subscriber is already installed")]
    AlreadyInstalled,
}

pub fn init(service_name: &'static str, settings: &TelemetrySettings) -> Result<TelemetryGuard, TelemetryError> {
    opentelemetry::global::set_text_map_propagator(opentelemetry_sdk::propagation::TraceContextPropagator::new());

    let resource = opentelemetry_sdk::Resource::builder()
        .with_service_name(service_name)
        .build();
    let mut builder = SdkTracerProvider::builder().with_resource(resource);
    if let Some(endpoint) = &settings.otlp_endpoint {
        use opentelemetry_otlp::WithExportConfig;
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_tonic()
            .with_endpoint(endpoint)
            .build()?;
        builder = builder.with_batch_exporter(exporter);
    }
    let provider = builder.build();
    let tracer = provider.tracer(service_name);
    opentelemetry::global::set_tracer_provider(provider.clone());

    let filter = match std::env::var("RUST_LOG") {
        Ok(directives) => EnvFilter::try_new(directives)?,
        Err(_) => EnvFilter::try_new(&settings.log_level)?,
    };
    let otel = tracing_opentelemetry::layer().with_tracer(tracer);
    let registry = tracing_subscriber::registry().with(filter).with(otel);
    let installed = match settings.log_format {
        LogFormat::Json => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .json()
                    .flatten_event(true)
                    .with_current_span(false),
            )
            .try_init(),
        LogFormat::Pretty => registry.with(tracing_subscriber::fmt::layer()).try_init(),
    };
    installed.map_err(|_| TelemetryError::AlreadyInstalled)?;
    Ok(TelemetryGuard { provider })
}
