use cost_aggregator::{Aggregator, Settings};

#[tokio::main]
async fn main() -> Result<(), relay_bus::BoxError> {
    relay_bus::run_service("cost-aggregator", |s: Settings, db, nats| async move {
        let aggregator = Aggregator::start(db, nats.clone(), s.costs)?;
        Ok(cost_aggregator::serve(nats, aggregator).await?)
    })
    .await
}
