//! TLS on all three links, as deploy/ runs it: clients reach the gateway over HTTPS, every
//! service reaches NATS over TLS and Postgres with `sslmode=verify-full`, all against one private
//! CA (`relayctl tls init`). Plain connections and an untrusted certificate are refused.

mod common;
use relay_testkit::{BUS_SERVICES, Database, Nats, Postgres, ServiceProcess, wait_for, wait_for_instances};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::path::PathBuf;

const ROOT: &str = "tls-root-token";

fn scratch(kind: &str) -> PathBuf {
    std::env::temp_dir().join(format!("relay-tls-{kind}-{}", uuid::Uuid::new_v4().simple()))
}

fn loopback() -> Vec<String> {
    vec!["localhost".into(), "127.0.0.1".into()]
}

#[tokio::test]
async fn with_tls_configured_clients_use_https_and_services_reach_nats_and_postgres_only_over_verified_tls() {
    let dir = scratch("ca");
    let certs = relay_bus::pki::init(&dir, &loopback()).unwrap();
    let pg = Postgres::start_tls(&certs).await;
    let db = Database::create_on(&pg.admin_url).await;
    assert!(db.url.contains("sslmode=verify-full"), "{}", db.url);
    let nats = Nats::start_tls(&certs).await;
    let client = nats.client().await;
    let mut services: Vec<ServiceProcess> = BUS_SERVICES
        .iter()
        .map(|s| ServiceProcess::spawn(&relay_testkit::bin_path(s), &nats, &db, &[]))
        .collect();
    for s in BUS_SERVICES {
        wait_for_instances(&client, s, 1).await;
    }
    let listen = format!("127.0.0.1:{}", common::free_port());
    let (cert, key) = (certs.cert.display().to_string(), certs.key.display().to_string());
    services.push(ServiceProcess::spawn(
        &relay_testkit::bin_path("gateway"),
        &nats,
        &db,
        &[
            ("RELAY_GATEWAY__LISTEN", &listen),
            ("RELAY_API_TOKEN", ROOT),
            ("RELAY_GATEWAY__TLS_CERT_FILE", &cert),
            ("RELAY_GATEWAY__TLS_KEY_FILE", &key),
        ],
    ));

    // HTTPS, trusting the private CA: a session made and read back, and its event in the log
    // (the registry and the log wrote it to Postgres and passed it over NATS, all over TLS).
    let ca = reqwest::Certificate::from_pem(&std::fs::read(&certs.ca).unwrap()).unwrap();
    let https = reqwest::Client::builder().add_root_certificate(ca).build().unwrap();
    let base = format!("https://localhost:{}", listen.rsplit_once(':').unwrap().1);
    wait_for(|| async {
        let r = https.get(format!("{base}/readyz")).send().await.ok()?;
        r.status().is_success().then_some(())
    })
    .await;
    let created: Value = https
        .post(format!("{base}/api/v1/sessions"))
        .bearer_auth(ROOT)
        .json(&json!({"title": "over tls"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = created["sessionId"].as_str().unwrap().to_string();
    let r = https
        .get(format!("{base}/api/v1/sessions/{id}"))
        .bearer_auth(ROOT)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    wait_for(|| async {
        let page: Value = https
            .get(format!("{base}/api/v1/events?sessionId={id}"))
            .bearer_auth(ROOT)
            .send()
            .await
            .ok()?
            .json()
            .await
            .ok()?;
        page["events"]
            .as_array()?
            .iter()
            .any(|e| e["type"] == "session.created")
            .then_some(())
    })
    .await;

    // Refused: plain HTTP on the HTTPS port, and HTTPS to a client that does not trust the CA.
    let plain = reqwest::Client::new()
        .get(format!("http://{listen}/readyz"))
        .send()
        .await;
    assert!(
        plain.is_err() || !plain.unwrap().status().is_success(),
        "plain HTTP was served"
    );
    let untrusting = reqwest::Client::builder().build().unwrap();
    let err = untrusting.get(format!("{base}/readyz")).send().await.unwrap_err();
    assert!(format!("{err:?}").to_lowercase().contains("certificate"), "{err:?}");

    // NATS: a client that does not trust the CA does not get in, even with valid credentials.
    let refused = async_nats::ConnectOptions::new()
        .credentials_file(nats.creds(relay_contracts::access::ADMIN).unwrap())
        .await
        .unwrap()
        .connect(&nats.url)
        .await;
    assert!(
        refused.is_err(),
        "NATS accepted a client that does not trust its certificate"
    );

    // Postgres: every connection of the services to the test database is encrypted…
    let admin = sqlx::PgPool::connect(&pg.admin_url).await.unwrap();
    let (encrypted, plain): (i64, i64) = sqlx::query_as(
        "SELECT count(*) FILTER (WHERE s.ssl), count(*) FILTER (WHERE NOT s.ssl)
         FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
         WHERE a.datname = $1 AND a.backend_type = 'client backend'",
    )
    .bind(&db.name)
    .fetch_one(&admin)
    .await
    .unwrap();
    assert!(encrypted > 0, "no service connected to the test database");
    assert_eq!(plain, 0, "a service connected to Postgres without TLS");
    // …and verify-full means verified: the server's certificate against another CA is refused.
    let other_dir = scratch("other-ca");
    let other = relay_bus::pki::init(&other_dir, &loopback()).unwrap();
    let wrong_ca = db
        .url
        .replace(&certs.ca.display().to_string(), &other.ca.display().to_string());
    let refused = sqlx::PgPool::connect(&wrong_ca).await;
    assert!(refused.is_err(), "Postgres connection verified against the wrong CA");

    drop(services);
    let _ = std::fs::remove_dir_all(dir);
    let _ = std::fs::remove_dir_all(other_dir);
}
