//! The schema every service shares: each table names its one owning service.

use relay_contracts::rpc::ALL;
use relay_testkit::Database;

#[tokio::test]
async fn every_table_names_one_owning_service() {
    let db = Database::create().await;
    let pool = db.pool().await;
    relay_bus::db::migrator().run(&pool).await.unwrap();
    let tables: Vec<(String, Option<String>)> = sqlx::query_as(
        "SELECT c.relname::text, obj_description(c.oid, 'pg_class')
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relname <> '_sqlx_migrations'
         ORDER BY 1",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert!(tables.len() > 20, "{tables:?}");
    let services: Vec<&str> = ALL.iter().map(|r| r.service).collect();
    let unowned: Vec<String> = tables
        .iter()
        .filter(|(_, comment)| {
            !comment
                .as_deref()
                .and_then(|c| c.strip_prefix("owner: "))
                .is_some_and(|owner| services.contains(&owner))
        })
        .map(|(t, c)| format!("{t} ({c:?})"))
        .collect();
    assert!(
        unowned.is_empty(),
        "tables without `COMMENT ON TABLE … IS 'owner: <service>'`: {unowned:?}"
    );
    pool.close().await;
}

/// Only a table's owner holds SQL on it: another service's needs go over the bus (the
/// registry hands deliveries to the runner on `delivery.handoff`). Every statement in every
/// service's `src/` that names a table after FROM, JOIN, INTO, UPDATE, TABLE or USING is
/// checked (table names built at run time, as in the registry's purge, are not seen).
#[tokio::test]
async fn no_service_holds_sql_on_a_table_it_does_not_own() {
    let db = Database::create().await;
    let pool = db.pool().await;
    relay_bus::db::migrator().run(&pool).await.unwrap();
    let owners: std::collections::HashMap<String, String> = sqlx::query_as(
        "SELECT c.relname::text, substr(obj_description(c.oid, 'pg_class'), 8)
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relname <> '_sqlx_migrations'",
    )
    .fetch_all(&pool)
    .await
    .unwrap()
    .into_iter()
    .collect();
    pool.close().await;
    let services = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let crates = concat!(env!("CARGO_MANIFEST_DIR"), "/../../crates");
    // A library crate holding SQL is checked as the service that hosts it.
    let hosted = HOSTED
        .iter()
        .map(|(dir, host)| (format!("{crates}/{dir}"), host.to_string()));
    let dirs = std::fs::read_dir(services).unwrap().flatten().map(|dir| {
        let crate_dir = dir.file_name().to_string_lossy().into_owned();
        // The spawner is a binary of the agent-harness crate.
        let service = if crate_dir == "agent-harness" {
            "agent-spawner".to_string()
        } else {
            crate_dir
        };
        (dir.path().display().to_string(), service)
    });
    let mut foreign = Vec::new();
    let mut checked = 0;
    let mut hosted_checked = 0;
    for (dir, service) in dirs.chain(hosted) {
        for (file, text) in rust_files(&std::path::Path::new(&dir).join("src")) {
            let words: Vec<&str> = text.split(|c: char| !(c.is_alphanumeric() || c == '_')).collect();
            for pair in words.windows(2) {
                let keyword = ["FROM", "JOIN", "INTO", "UPDATE", "TABLE", "USING"].contains(&pair[0]);
                if let (true, Some(owner)) = (keyword, owners.get(pair[1])) {
                    checked += 1;
                    hosted_checked += usize::from(dir.contains("/crates/"));
                    if *owner != service {
                        foreign.push(format!("{file}: {} {} (owner: {owner})", pair[0], pair[1]));
                    }
                }
            }
        }
    }
    assert!(checked > 50, "the scan found only {checked} statements");
    assert!(
        hosted_checked > 5,
        "the scan found {hosted_checked} statements in hosted crates"
    );
    assert!(foreign.is_empty(), "SQL on another service's table: {foreign:#?}");
}

/// The library crates with tables of their own, and the service that hosts each: its tables
/// are that service's.
const HOSTED: &[(&str, &str)] = &[
    ("hosts", "session-registry"),
    ("messaging", "session-registry"),
    ("prompts", "session-registry"),
    ("tenancy", "session-registry"),
];

/// Every crate under `crates/` that holds SQL is in [`HOSTED`]: a new one is checked too.
#[test]
fn every_crate_with_sql_names_its_host() {
    let crates = concat!(env!("CARGO_MANIFEST_DIR"), "/../../crates");
    let mut unhosted = Vec::new();
    for dir in std::fs::read_dir(crates).unwrap().flatten() {
        let name = dir.file_name().to_string_lossy().into_owned();
        let sql = rust_files(&dir.path().join("src"))
            .iter()
            .any(|(_, text)| text.contains("sqlx::query"));
        if sql && !HOSTED.iter().any(|(d, _)| *d == name) {
            unhosted.push(name);
        }
    }
    // relay-bus runs every service's outbox, follow cursor and retention on tables the service
    // names; testkit makes databases.
    unhosted.retain(|n| !["bus", "testkit"].contains(&n.as_str()));
    assert!(
        unhosted.is_empty(),
        "crates with SQL and no host in HOSTED: {unhosted:?}"
    );
}

fn rust_files(dir: &std::path::Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = e.path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push((path.display().to_string(), std::fs::read_to_string(&path).unwrap()));
        }
    }
    out
}

/// During a rolling upgrade a newer replica may migrate first; an older one that restarts then
/// finds a version it does not know. It starts anyway (the migrations only add), where the
/// strict migrator would refuse.
#[tokio::test]
async fn a_service_older_than_the_schema_still_starts() {
    let db = Database::create().await;
    let pool = db.pool().await;
    relay_bus::db::migrator().run(&pool).await.unwrap();
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
         VALUES (99990101000000, 'from a newer build', true, '\\x00'::bytea, 1)",
    )
    .execute(&pool)
    .await
    .unwrap();
    // (On a pool of its own: a refused run can leave its advisory lock on its connection.)
    let strict = db.pool().await;
    assert!(
        relay_bus::db::MIGRATOR.run(&strict).await.is_err(),
        "the strict migrator refuses"
    );
    strict.close().await;
    relay_bus::db::migrator()
        .run(&pool)
        .await
        .expect("the services' migrator accepts it");
    pool.close().await;
}
