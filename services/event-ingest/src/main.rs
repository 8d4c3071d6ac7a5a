use event_ingest::{Ingest, Settings};

#[tokio::main]
async fn main() -> Result<(), relay_bus::BoxError> {
    relay_bus::run_service("event-ingest", |s: Settings, db, nats| async move {
        let ingest = Ingest::start(db, nats.clone(), s.ingest)?;
        Ok(event_ingest::serve(nats, ingest).await?)
    })
    .await
}
