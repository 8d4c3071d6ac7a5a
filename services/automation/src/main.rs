use automation::{Automation, Settings};

#[tokio::main]
async fn main() -> Result<(), relay_bus::BoxError> {
    relay_bus::run_service("automation", |s: Settings, db, nats| async move {
        let automation = Automation::start(db, nats.clone(), s.webhooks, s.schedules)?;
        Ok(automation::serve(nats, automation).await?)
    })
    .await
}
