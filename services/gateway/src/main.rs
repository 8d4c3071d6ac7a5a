use gateway::{AppState, Settings};

#[tokio::main]
async fn main() -> Result<(), relay_bus::BoxError> {
    // `gateway --openapi`: print the OpenAPI document (make openapi) without starting.
    if std::env::args().nth(1).as_deref() == Some("--openapi") {
        print!("{}", gateway::openapi::json());
        return Ok(());
    }
    let settings: Settings = relay_bus::settings::load()?;
    let _telemetry = relay_bus::telemetry::init("gateway", &settings.telemetry)?;
    let nats = relay_bus::connect_nats(&settings.nats, "gateway").await?;
    let db = gateway::lazy_pool(&settings.database)?;

    let tls = settings.gateway.tls()?;
    let listener = tokio::net::TcpListener::bind(&settings.gateway.listen).await?;
    let state = AppState::new(nats, db, settings.gateway, listener.local_addr()?)?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    tracing::info!(listen = %listener.local_addr()?, scheme, "gateway serving /api/v1 and gRPC");
    gateway::serve::serve(
        listener,
        gateway::router(state),
        tls,
        relay_bus::service::shutdown_signal(),
    )
    .await?;
    Ok(())
}
