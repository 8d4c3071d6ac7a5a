use event_ingest::{Ingest, Settings};
use std::time::Duration;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let settings: Settings = relay_bus::settings::load()?;
    let _telemetry = relay_bus::telemetry::init("event-ingest", &settings.telemetry)?;
    let db = relay_bus::db::connect(&settings.database).await?;
    let nats = relay_bus::connect_nats(&settings.nats, "event-ingest").await?;
    relay_bus::health::serve(settings.telemetry.health_listen.as_deref(), nats.clone()).await?;

    let ingest = Ingest::start(db, nats.clone(), settings.ingest)?;
    let host = event_ingest::serve(nats, ingest).await?;
    tracing::info!("event-ingest serving event.* subjects");
    host.run_until_shutdown(Duration::from_secs(10)).await;
    Ok(())
}
