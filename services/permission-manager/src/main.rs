use permission_manager::{Manager, Settings};

#[tokio::main]
async fn main() -> Result<(), relay_bus::BoxError> {
    relay_bus::run_service("permission-manager", |s: Settings, db, nats| async move {
        let manager = Manager::start(db, nats.clone(), s.permissions)?;
        Ok(permission_manager::serve(nats, manager).await?)
    })
    .await
}
