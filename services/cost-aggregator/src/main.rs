use cost_aggregator::{Aggregator, Settings};
use std::time::Duration;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let settings: Settings = relay_bus::settings::load()?;
    let _telemetry = relay_bus::telemetry::init("cost-aggregator", &settings.telemetry)?;
    let db = relay_bus::db::connect(&settings.database).await?;
    let nats = relay_bus::connect_nats(&settings.nats, "cost-aggregator").await?;
    relay_bus::health::serve(settings.telemetry.health_listen.as_deref(), nats.clone()).await?;

    let aggregator = Aggregator::start(db, nats.clone(), settings.costs)?;
    let host = cost_aggregator::serve(nats, aggregator).await?;
    tracing::info!("cost-aggregator serving cost.* and session.getContextWindowState");
    host.run_until_shutdown(Duration::from_secs(10)).await;
    Ok(())
}
