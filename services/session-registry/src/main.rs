use session_registry::{Registry, Settings};
use std::time::Duration;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let settings: Settings = relay_bus::settings::load()?;
    let _telemetry = relay_bus::telemetry::init("session-registry", &settings.telemetry)?;
    let db = relay_bus::db::connect(&settings.database).await?;
    let nats = relay_bus::connect_nats(&settings.nats, "session-registry").await?;
    relay_bus::health::serve(settings.telemetry.health_listen.as_deref(), nats.clone()).await?;

    let registry = Registry::new(db, nats.clone(), settings.registry);
    let host = session_registry::serve(nats, registry).await?;
    tracing::info!("session-registry serving session.* subjects");
    host.run_until_shutdown(Duration::from_secs(10)).await;
    Ok(())
}
