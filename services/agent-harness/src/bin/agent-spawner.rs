//! `agent-spawner`: serves `agent.spawn`, starting each requested agent CLI under its own
//! agent-harness process (configuration: the `[spawner]` section).

use agent_harness::Settings;
use agent_harness::spawner::{self, Spawner};
use std::time::Duration;

#[tokio::main]
async fn main() -> Result<(), relay_bus::BoxError> {
    let settings: Settings = relay_bus::settings::load()?;
    // Before anything else: a host that cannot sandbox its agents as configured does not start.
    settings.spawner.check_sandbox()?;
    let _telemetry = relay_bus::telemetry::init("agent-spawner", &settings.telemetry)?;
    let nats = relay_bus::connect_nats(&settings.nats, "agent-spawner").await?;
    relay_bus::health::serve(settings.telemetry.health_listen.as_deref(), nats.clone()).await?;
    let own_creds = match &settings.nats.creds_file {
        Some(path) if !path.is_empty() => Some(std::fs::read_to_string(path)?),
        _ => settings.nats.creds.clone(),
    };
    // Sandboxed agents do not see this spawner's own files: its configuration and credentials.
    let mut spawner_settings = settings.spawner;
    let config = std::env::var("RELAY_CONFIG").unwrap_or_else(|_| "relay.toml".into());
    spawner_settings
        .sandbox_hide
        .extend([Some(config), settings.nats.creds_file.clone()].into_iter().flatten());
    let spawner = Spawner::new(nats, spawner_settings, own_creds.as_deref())?;
    let host = spawner::serve(spawner).await?;
    tracing::info!("agent-spawner serving agent.spawn");
    // Agents already running keep running: they are separate processes bound to the bus.
    host.run_until_shutdown(Duration::from_secs(10)).await;
    Ok(())
}
