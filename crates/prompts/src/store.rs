//! The SQL on `registry_prompts`.

use relay_contracts::prompts::{Prompt, PromptKind};
use sqlx::PgPool;

type Row = (String, String, String, String, i64, i64);

const COLUMNS: &str = "kind, prompt_id, name, system_prompt, created_at, updated_at";

fn from_row((kind, id, name, system_prompt, created_at, updated_at): Row) -> Prompt {
    Prompt {
        kind: if kind == "profile" {
            PromptKind::Profile
        } else {
            PromptKind::Persona
        },
        id,
        name,
        system_prompt,
        created_at,
        updated_at,
    }
}

/// The persona or profile `id` of `workspace`, if there is one.
pub async fn find(db: &PgPool, workspace: &str, kind: PromptKind, id: &str) -> sqlx::Result<Option<Prompt>> {
    let row: Option<Row> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM registry_prompts WHERE workspace = $1 AND kind = $2 AND prompt_id = $3"
    )))
    .bind(workspace)
    .bind(kind.as_str())
    .bind(id)
    .fetch_optional(db)
    .await?;
    Ok(row.map(from_row))
}

/// Stores it, or replaces the one of the same kind and id.
pub(crate) async fn upsert(
    db: &PgPool,
    workspace: &str,
    kind: PromptKind,
    id: &str,
    name: &str,
    system_prompt: &str,
    now: i64,
) -> sqlx::Result<Prompt> {
    let row: Row = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "INSERT INTO registry_prompts (workspace, kind, prompt_id, name, system_prompt, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $6)
         ON CONFLICT (workspace, kind, prompt_id) DO UPDATE SET name = EXCLUDED.name,
             system_prompt = EXCLUDED.system_prompt, updated_at = EXCLUDED.updated_at
         RETURNING {COLUMNS}"
    )))
    .bind(workspace)
    .bind(kind.as_str())
    .bind(id)
    .bind(name)
    .bind(system_prompt)
    .bind(now)
    .fetch_one(db)
    .await?;
    Ok(from_row(row))
}

/// The workspace's prompts of `kind` (all when `None`), by kind then id.
pub(crate) async fn list(db: &PgPool, workspace: &str, kind: Option<PromptKind>) -> sqlx::Result<Vec<Prompt>> {
    let rows: Vec<Row> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM registry_prompts WHERE workspace = $1 AND ($2::text IS NULL OR kind = $2)
         ORDER BY kind, prompt_id LIMIT 10000"
    )))
    .bind(workspace)
    .bind(kind.map(PromptKind::as_str))
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(from_row).collect())
}

/// Whether there was one to delete.
pub(crate) async fn delete(db: &PgPool, workspace: &str, kind: PromptKind, id: &str) -> sqlx::Result<bool> {
    let n = sqlx::query("DELETE FROM registry_prompts WHERE workspace = $1 AND kind = $2 AND prompt_id = $3")
        .bind(workspace)
        .bind(kind.as_str())
        .bind(id)
        .execute(db)
        .await?
        .rows_affected();
    Ok(n > 0)
}
