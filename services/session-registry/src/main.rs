use session_registry::{Registry, Settings};

#[tokio::main]
async fn main() -> Result<(), relay_bus::BoxError> {
    relay_bus::run_service("session-registry", |s: Settings, db, nats| async move {
        let registry = Registry::new(db, nats.clone(), s.registry);
        Ok(session_registry::serve(nats, registry).await?)
    })
    .await
}
