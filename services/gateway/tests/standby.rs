//! A standby is not the database: pointed at a streaming replica, the gateway's `/readyz`
//! answers 503 naming Postgres read-only, and a service does not start serving (each pool
//! connection to a read-only server is refused); once the replica is promoted, as a failover
//! does, both are ready without a restart.

mod common;

use relay_testkit::{Database, Nats, Postgres, ServiceProcess, wait_for};
use serde_json::Value;

async fn readyz(base: &str) -> (u16, Value) {
    let r = reqwest::get(format!("{base}/readyz")).await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_standby_is_not_taken_for_the_database_until_it_is_promoted() {
    let primary = Postgres::start().await;
    let db = Database::create_on(&primary.admin_url).await;
    let standby = Postgres::standby_of(&primary).await;
    // The same database, read through the standby.
    let on_standby = db.url.replace(
        &format!("127.0.0.1:{}/", primary.port),
        &format!("127.0.0.1:{}/", standby.port),
    );
    let nats = Nats::start().await;
    let client = nats.client().await;
    let port = common::free_port();
    let listen = format!("127.0.0.1:{port}");
    let env = [
        ("RELAY_DATABASE__URL", on_standby.as_str()),
        ("RELAY_GATEWAY__LISTEN", listen.as_str()),
        ("RELAY_API_TOKEN", ""),
        ("RELAY_GATEWAY__OPEN", "true"),
    ];
    let _gateway = ServiceProcess::spawn(&relay_testkit::bin_path("gateway"), &nats, &db, &env);
    let registry = ServiceProcess::spawn(&relay_testkit::bin_path("session-registry"), &nats, &db, &env[..1]);
    let base = format!("http://{listen}");

    let (status, body) = wait_for(|| async {
        reqwest::get(format!("{base}/readyz")).await.ok()?;
        let (status, body) = readyz(&base).await;
        (body["postgres"] != "unreachable").then_some((status, body))
    })
    .await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["postgres"], "read-only", "{body}");
    // The registry keeps refusing the standby's connections and serves nothing meanwhile.
    wait_for(|| async {
        let log = std::fs::read_to_string(&registry.log).ok()?;
        log.contains("the server is read-only").then_some(())
    })
    .await;
    assert!(
        relay_testkit::instances(&client, "session-registry", 1)
            .await
            .is_empty()
    );

    standby.promote().await;
    relay_testkit::wait_for_instances(&client, "session-registry", 1).await;
    let (status, body) = wait_for(|| async {
        let (status, body) = readyz(&base).await;
        (status == 200).then_some((status, body))
    })
    .await;
    assert_eq!(body["postgres"], "ok", "{status} {body}");
}
