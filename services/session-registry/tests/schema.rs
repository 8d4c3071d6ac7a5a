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
