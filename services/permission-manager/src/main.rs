use permission_manager::{Manager, Settings};
use std::time::Duration;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let settings: Settings = relay_bus::settings::load()?;
    let _telemetry = relay_bus::telemetry::init("permission-manager", &settings.telemetry)?;
    let db = relay_bus::db::connect(&settings.database).await?;
    let nats = relay_bus::connect_nats(&settings.nats, "permission-manager").await?;
    relay_bus::health::serve(settings.telemetry.health_listen.as_deref(), nats.clone()).await?;

    let manager = Manager::start(db, nats.clone(), settings.permissions)?;
    let host = permission_manager::serve(nats, manager).await?;
    tracing::info!("permission-manager serving permission.* and question.* subjects");
    host.run_until_shutdown(Duration::from_secs(10)).await;
    Ok(())
}
