//! The schema every service shares: each table names its one owning service.

use relay_contracts::rpc::ALL;
use relay_testkit::Database;

#[tokio::test]
async fn every_table_names_one_owning_service() {
    let db = Database::create().await;
    let pool = db.pool().await;
    relay_bus::db::MIGRATOR.run(&pool).await.unwrap();
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
