use coordination::{Coordination, Settings};

#[tokio::main]
async fn main() -> Result<(), relay_bus::BoxError> {
    relay_bus::run_service("coordination", |s: Settings, db, nats| async move {
        let coordination = Coordination::start(db, nats.clone(), s.coordination);
        Ok(coordination::serve(nats, coordination).await?)
    })
    .await
}
