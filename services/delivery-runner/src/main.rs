use delivery_runner::{Runner, Settings};

#[tokio::main]
async fn main() -> Result<(), relay_bus::BoxError> {
    relay_bus::run_service("delivery-runner", |s: Settings, db, nats| async move {
        let runner = Runner::start(db, nats.clone(), s.runner).await;
        Ok(delivery_runner::serve(nats, runner).await?)
    })
    .await
}
