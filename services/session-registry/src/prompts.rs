//! Personas and profiles of a workspace (`prompt.*`) and seed 002 `session.resolveSystemPrompt`,
//! which puts a session agent's prompts together: its profile's (how it works here), then its
//! persona's (who it is).

use crate::Registry;
use crate::error::{RegistryError, Result};
use crate::lifecycle::{check_id, check_text};
use crate::store;
use crate::store::is_attached;
use relay_contracts::RequestContext;
use relay_contracts::prompts::*;
use relay_contracts::session::{Agent, AgentRole};

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

/// A persona's or profile's id: letters, digits, `_`, `.`, `:`, `-`.
fn check_prompt_id(field: &str, id: &str) -> Result<()> {
    if relay_contracts::is_name_id(id) {
        Ok(())
    } else {
        Err(RegistryError::Invalid(format!(
            "{field} {id:?}: 1 to 128 letters, digits, '_', '.', ':' or '-'"
        )))
    }
}

fn not_found(kind: PromptKind, id: &str) -> RegistryError {
    RegistryError::NotFound {
        what: kind.as_str(),
        id: id.to_string(),
    }
}

async fn find(reg: &Registry, workspace: &str, kind: PromptKind, id: &str) -> Result<Option<Prompt>> {
    let row: Option<Row> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM registry_prompts WHERE workspace = $1 AND kind = $2 AND prompt_id = $3"
    )))
    .bind(workspace)
    .bind(kind.as_str())
    .bind(id)
    .fetch_optional(&reg.db)
    .await?;
    Ok(row.map(from_row))
}

pub async fn put(reg: Registry, ctx: RequestContext, req: PutPromptRequest) -> Result<Prompt> {
    check_prompt_id("id", &req.id)?;
    check_text("name", &req.name, 200)?;
    if req.system_prompt.chars().count() > 100_000 || req.system_prompt.contains('\0') {
        return Err(RegistryError::Invalid(
            "systemPrompt: at most 100,000 characters".into(),
        ));
    }
    let now = relay_bus::now_ms();
    let row: Row = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "INSERT INTO registry_prompts (workspace, kind, prompt_id, name, system_prompt, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $6)
         ON CONFLICT (workspace, kind, prompt_id) DO UPDATE SET name = EXCLUDED.name,
             system_prompt = EXCLUDED.system_prompt, updated_at = EXCLUDED.updated_at
         RETURNING {COLUMNS}"
    )))
    .bind(&ctx.workspace)
    .bind(req.kind.as_str())
    .bind(&req.id)
    .bind(&req.name)
    .bind(&req.system_prompt)
    .bind(now)
    .fetch_one(&reg.db)
    .await?;
    Ok(from_row(row))
}

pub async fn get(reg: Registry, ctx: RequestContext, req: PromptRef) -> Result<Prompt> {
    check_prompt_id("id", &req.id)?;
    find(&reg, &ctx.workspace, req.kind, &req.id)
        .await?
        .ok_or_else(|| not_found(req.kind, &req.id))
}

pub async fn list(reg: Registry, ctx: RequestContext, req: ListPromptsRequest) -> Result<PromptList> {
    let rows: Vec<Row> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM registry_prompts WHERE workspace = $1 AND ($2::text IS NULL OR kind = $2)
         ORDER BY kind, prompt_id LIMIT 10000"
    )))
    .bind(&ctx.workspace)
    .bind(req.kind.map(relay_contracts::prompts::PromptKind::as_str))
    .fetch_all(&reg.db)
    .await?;
    Ok(PromptList {
        prompts: rows.into_iter().map(from_row).collect(),
    })
}

pub async fn delete(reg: Registry, ctx: RequestContext, req: PromptRef) -> Result<PromptDeleted> {
    check_prompt_id("id", &req.id)?;
    let n = sqlx::query("DELETE FROM registry_prompts WHERE workspace = $1 AND kind = $2 AND prompt_id = $3")
        .bind(&ctx.workspace)
        .bind(req.kind.as_str())
        .bind(&req.id)
        .execute(&reg.db)
        .await?
        .rows_affected();
    if n == 0 {
        return Err(not_found(req.kind, &req.id));
    }
    Ok(PromptDeleted { deleted: true })
}

/// The agent whose persona and profile a session's prompt defaults to: its lead, else its
/// first agent that names one.
fn speaker(agents: &[Agent], lead: Option<&str>) -> Option<Agent> {
    let live: Vec<&Agent> = agents.iter().filter(|a| is_attached(a)).collect();
    live.iter()
        .find(|a| Some(a.agent_id.as_str()) == lead || a.role == AgentRole::Lead)
        .or_else(|| live.iter().find(|a| a.persona_id.is_some() || a.profile_id.is_some()))
        .map(|a| (*a).clone())
}

pub async fn resolve(
    reg: Registry,
    ctx: RequestContext,
    req: ResolveSystemPromptRequest,
) -> Result<ResolveSystemPromptResponse> {
    check_id("sessionId", &req.session_id)?;
    let mut conn = reg.db.acquire().await?;
    let session = store::lock_live(&mut conn, &req.session_id).await?;
    let agents = store::session_agents(&mut conn, &req.session_id).await?;
    drop(conn);
    let agent = speaker(&agents, session.lead_agent_id.as_deref());
    let persona_id = req
        .persona_id
        .clone()
        .or_else(|| agent.as_ref().and_then(|a| a.persona_id.clone()));
    let profile_id = req
        .profile_id
        .clone()
        .or_else(|| agent.as_ref().and_then(|a| a.profile_id.clone()));
    // An id the caller named must exist; one an agent names may have been deleted since.
    let lookup = |kind: PromptKind, id: Option<String>, named: bool| {
        let reg = &reg;
        let workspace = ctx.workspace.clone();
        async move {
            let Some(id) = id else { return Ok(None) };
            match find(reg, &workspace, kind, &id).await? {
                Some(p) => Ok(Some(p)),
                None if named => Err(not_found(kind, &id)),
                None => Ok(None),
            }
        }
    };
    let profile = lookup(PromptKind::Profile, profile_id, req.profile_id.is_some()).await?;
    let persona = lookup(PromptKind::Persona, persona_id, req.persona_id.is_some()).await?;
    let system_prompt = [&profile, &persona]
        .into_iter()
        .flatten()
        .map(|p| p.system_prompt.trim())
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    Ok(ResolveSystemPromptResponse {
        system_prompt,
        persona_name: persona.map(|p| p.name),
        profile_name: profile.map(|p| p.name),
    })
}
