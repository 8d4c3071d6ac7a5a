use axum::serve::ListenerExt;
use gateway::{AppState, Settings};
use std::time::Duration;

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

    let listener = tokio::net::TcpListener::bind(&settings.gateway.listen).await?;
    let state = AppState::new(nats, db, settings.gateway);
    tracing::info!(listen = %listener.local_addr()?, "gateway serving /api/v1 and gRPC");
    // Without TCP_NODELAY a small SSE frame waits for the client's delayed ACK (~40 ms).
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY");
        }
    });
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = axum::serve(listener, gateway::router(state)).with_graceful_shutdown(async {
        let _ = stop_rx.await;
    });
    let server = tokio::spawn(server.into_future());
    relay_bus::service::shutdown_signal().await;
    let _ = stop_tx.send(());
    // SSE streams never end by themselves: give requests in flight a moment, then exit.
    let _ = tokio::time::timeout(Duration::from_secs(5), server).await;
    Ok(())
}
