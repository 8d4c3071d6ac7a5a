//! `nats.url` with several servers (the nodes of a cluster): a service connects to one that
//! answers, and a list with an empty entry is refused at start with a message saying so.

use relay_testkit::{Database, Nats, ServiceProcess, bin_path, wait_for_instances};
use std::time::Duration;

#[tokio::test]
async fn a_service_given_several_nats_servers_connects_to_one_that_answers_and_refuses_an_empty_entry() {
    let nats = Nats::start().await;
    let db = Database::create().await;
    // A port nothing listens on: a node that is down.
    let down = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let servers = format!("nats://127.0.0.1:{down}, {}", nats.url);
    let _registry = ServiceProcess::spawn(
        &bin_path("session-registry"),
        &nats,
        &db,
        &[("RELAY_NATS__URL", servers.as_str())],
    );
    wait_for_instances(&nats.client().await, "session-registry", 1).await;

    let mut refused = ServiceProcess::spawn(
        &bin_path("session-registry"),
        &nats,
        &db,
        &[("RELAY_NATS__URL", &format!("{},,", nats.url))],
    );
    assert_eq!(
        refused.wait_exit(Duration::from_secs(30)).await,
        Some(false),
        "a list with an empty entry is refused"
    );
    let log = std::fs::read_to_string(&refused.log).unwrap();
    assert!(log.contains("none empty"), "{log}");
}
