//! Seed 002 `session.resolveSystemPrompt`, which puts a session agent's prompts together: its
//! profile's (how it works here), then its persona's (who it is). The personas and profiles
//! themselves (`prompt.*`) are `relay_prompts`, hosted here.

use crate::Registry;
use crate::error::{RegistryError, Result};
use crate::lifecycle::check_id;
use crate::store;
use relay_contracts::RequestContext;
use relay_contracts::prompts::*;
use relay_contracts::session::{Agent, AgentRole};

fn not_found(kind: PromptKind, id: &str) -> RegistryError {
    RegistryError::NotFound {
        what: kind.as_str(),
        id: id.to_string(),
    }
}

/// The agent whose persona and profile a session's prompt defaults to: its lead, else its
/// first agent that names one.
fn speaker(agents: &[Agent], lead: Option<&str>) -> Option<Agent> {
    let live: Vec<&Agent> = agents.iter().filter(|a| a.is_attached()).collect();
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
            match relay_prompts::find(&reg.db, &workspace, kind, &id).await? {
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
