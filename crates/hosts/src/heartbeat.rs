//! `host.heartbeat`: a spawner's host as it is now, and its agents' host settled (offline,
//! back online) in their sessions.

use crate::error::{HostsError, Result};
use crate::{Change, Keeper};
use relay_contracts::RequestContext;
use relay_contracts::hosts::{Heartbeat, HeartbeatReply, Placement};
use relay_contracts::session::events::{AgentOffline, AgentOnline};
use sqlx::types::Json;

/// The most `cli` names and agents one heartbeat may list.
const MAX_CLIS: usize = 256;
const MAX_AGENTS: usize = 10_000;

fn check(hb: &Heartbeat) -> Result<()> {
    let mut problems = Placement {
        host: Some(hb.host_id.clone()),
        labels: hb.labels.clone(),
    }
    .problems();
    if hb.clis.len() > MAX_CLIS || hb.agents.len() > MAX_AGENTS {
        problems.push(format!("at most {MAX_CLIS} clis and {MAX_AGENTS} agents"));
    }
    if hb.capacity == 0 {
        problems.push("capacity must be at least 1".into());
    }
    match problems.is_empty() {
        true => Ok(()),
        false => Err(HostsError::Invalid(problems.join("; "))),
    }
}

/// `host.heartbeat`: the host is online as reported; its agents are known to run there (and
/// are back if they were offline); agents the mesh ended meanwhile are named to be stopped.
pub async fn heartbeat<K: Keeper>(keeper: K, _ctx: RequestContext, hb: Heartbeat) -> Result<HeartbeatReply> {
    check(&hb)?;
    let now = relay_bus::now_ms();
    let mut change = keeper.begin().await?;
    sqlx::query(
        "INSERT INTO registry_hosts (host_id, labels, capacity, load, clis, agents, version, status,
                                     first_seen_at, last_seen_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'online', $8, $8)
         ON CONFLICT (host_id) DO UPDATE SET labels = EXCLUDED.labels, capacity = EXCLUDED.capacity,
           load = EXCLUDED.load, clis = EXCLUDED.clis, agents = EXCLUDED.agents,
           version = EXCLUDED.version, status = 'online', last_seen_at = EXCLUDED.last_seen_at,
           offline_since = NULL",
    )
    .bind(&hb.host_id)
    .bind(Json(&hb.labels))
    .bind(hb.capacity as i32)
    .bind(hb.load as i32)
    .bind(&hb.clis)
    .bind(&hb.agents)
    .bind(&hb.version)
    .bind(now)
    .execute(change.conn())
    .await?;

    let known = K::agents(change.conn(), &hb.agents).await?;
    let mut stop: Vec<String> = hb
        .agents
        .iter()
        .filter(|id| !known.iter().any(|a| &a.agent_id == *id))
        .cloned()
        .collect();
    // Re-homed agents this host runs now have arrived.
    sqlx::query("DELETE FROM registry_rehomes WHERE to_host = $1 AND agent_id = ANY($2)")
        .bind(&hb.host_id)
        .bind(&hb.agents)
        .execute(change.conn())
        .await?;
    let mut abandon = Vec::new();
    for agent in known {
        match agent.host_id.as_deref() {
            _ if !agent.is_attached() => stop.push(agent.agent_id),
            // Re-homed while this host was cut off: it runs on the other host now.
            Some(other) if other != hb.host_id => abandon.push(agent.agent_id),
            Some(_) if agent.offline_since.is_none() => {}
            _ => settle(&mut change, &agent.agent_id, &hb.host_id, None).await?,
        }
    }
    change.commit().await?;
    Ok(HeartbeatReply { stop, abandon })
}

/// Sets an agent's host and whether it is offline (`Some(reason)`), under its session's lock,
/// with `session.agent.offline` / `session.agent.online` when that changes.
pub(crate) async fn settle<C: Change>(
    change: &mut C,
    agent_id: &str,
    host_id: &str,
    offline: Option<String>,
) -> Result<()> {
    let Some((mut session, mut agent)) = change.lock_attached(agent_id).await? else {
        return Ok(());
    };
    let session_id = session.session_id.clone();
    let was_offline = agent.offline_since.is_some();
    agent.host_id = Some(host_id.to_string());
    agent.offline_since = match offline {
        Some(_) => agent.offline_since.or(Some(relay_bus::now_ms())),
        None => None,
    };
    change.save(&mut session, &mut agent, relay_bus::now_ms()).await?;
    let (agent_id, host_id) = (agent_id.to_string(), host_id.to_string());
    match (offline, was_offline) {
        (Some(reason), false) => {
            let e = AgentOffline {
                session_id: session_id.clone(),
                agent_id,
                host_id,
                reason,
            };
            change.emit(&session_id, e).await
        }
        (None, true) => {
            let e = AgentOnline {
                session_id: session_id.clone(),
                agent_id,
                host_id,
            };
            change.emit(&session_id, e).await
        }
        _ => Ok(()),
    }
}
