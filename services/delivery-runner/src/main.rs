use delivery_runner::{Runner, Settings};
use std::time::Duration;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let settings: Settings = relay_bus::settings::load()?;
    let _telemetry = relay_bus::telemetry::init("delivery-runner", &settings.telemetry)?;
    let db = relay_bus::db::connect(&settings.database).await?;
    let nats = relay_bus::connect_nats(&settings.nats, "delivery-runner").await?;
    relay_bus::health::serve(settings.telemetry.health_listen.as_deref(), nats.clone()).await?;

    let runner = Runner::start(db, nats.clone(), settings.runner).await;
    let host = delivery_runner::serve(nats, runner).await?;
    tracing::info!("delivery-runner serving delivery.* subjects");
    host.run_until_shutdown(Duration::from_secs(10)).await;
    Ok(())
}
