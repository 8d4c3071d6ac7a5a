//! `prompt.put`, `prompt.get`, `prompt.list`, `prompt.delete`: in the caller's workspace.

use crate::Host;
use crate::error::{PromptsError, Result};
use crate::store;
use relay_contracts::RequestContext;
use relay_contracts::prompts::*;

/// A persona's or profile's id: letters, digits, `_`, `.`, `:`, `-`.
fn check_prompt_id(field: &str, id: &str) -> Result<()> {
    if relay_contracts::is_name_id(id) {
        Ok(())
    } else {
        Err(PromptsError::Invalid(format!(
            "{field} {id:?}: 1 to 128 letters, digits, '_', '.', ':' or '-'"
        )))
    }
}

fn not_found(kind: PromptKind, id: &str) -> PromptsError {
    PromptsError::NotFound {
        what: kind.as_str(),
        id: id.to_string(),
    }
}

pub async fn put<S: Host>(host: S, ctx: RequestContext, req: PutPromptRequest) -> Result<Prompt> {
    check_prompt_id("id", &req.id)?;
    if let Some(m) = relay_contracts::text_problem("name", &req.name, 200) {
        return Err(PromptsError::Invalid(m));
    }
    if req.system_prompt.chars().count() > 100_000 || req.system_prompt.contains('\0') {
        return Err(PromptsError::Invalid("systemPrompt: at most 100,000 characters".into()));
    }
    let db = host.prompts_db();
    let now = relay_bus::now_ms();
    Ok(store::upsert(
        db,
        &ctx.workspace,
        req.kind,
        &req.id,
        &req.name,
        &req.system_prompt,
        now,
    )
    .await?)
}

pub async fn get<S: Host>(host: S, ctx: RequestContext, req: PromptRef) -> Result<Prompt> {
    check_prompt_id("id", &req.id)?;
    store::find(host.prompts_db(), &ctx.workspace, req.kind, &req.id)
        .await?
        .ok_or_else(|| not_found(req.kind, &req.id))
}

pub async fn list<S: Host>(host: S, ctx: RequestContext, req: ListPromptsRequest) -> Result<PromptList> {
    Ok(PromptList {
        prompts: store::list(host.prompts_db(), &ctx.workspace, req.kind).await?,
    })
}

pub async fn delete<S: Host>(host: S, ctx: RequestContext, req: PromptRef) -> Result<PromptDeleted> {
    check_prompt_id("id", &req.id)?;
    if !store::delete(host.prompts_db(), &ctx.workspace, req.kind, &req.id).await? {
        return Err(not_found(req.kind, &req.id));
    }
    Ok(PromptDeleted { deleted: true })
}
