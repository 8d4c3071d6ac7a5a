//! Agent hosts (`registry_hosts`): spawners' heartbeats, placement of spawns, and what becomes
//! of a host's agents when it goes quiet — offline (deliveries held), then lost
//! (`hosts.on_lost`: ended, their waiting deliveries failed naming the host; kept waiting; or
//! re-homed onto another host that fits them, their deliveries following).

use crate::Registry;
use crate::agents::{dispose, lock_attached};
use crate::error::{RegistryError, Result};
use crate::store::is_attached;
use crate::store::{Change, now_ms};
use relay_contracts::hosts::*;
use relay_contracts::session::events::{AgentOffline, AgentOnline};
use relay_contracts::session::{Agent, Session};
use relay_contracts::{RequestContext, rpc};
use serde::{Deserialize, Serialize};
use sqlx::types::Json;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct HostSettings {
    /// A host with no heartbeat for this long is offline: its agents' deliveries are held.
    pub offline_after_ms: i64,
    /// An offline host is lost after this long, and `on_lost` applies to its agents.
    pub lost_after_ms: i64,
    pub on_lost: OnLost,
}

/// What becomes of a lost host's agents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnLost {
    /// Ended: their waiting deliveries fail with the host named, and the spawner stops their
    /// harnesses if the host comes back.
    Fail,
    /// Kept: their deliveries wait for the host to come back.
    Hold,
    /// Moved: each is placed on another online host that runs its cli and fits its placement,
    /// whose spawner starts a harness bound to it (same id, handle and waiting deliveries; a
    /// new CLI session). One that no host fits, or whose new harness does not start, fails.
    Rehome,
}

impl Default for HostSettings {
    fn default() -> Self {
        HostSettings {
            offline_after_ms: 15_000,
            lost_after_ms: 300_000,
            on_lost: OnLost::Fail,
        }
    }
}

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
        false => Err(RegistryError::Invalid(problems.join("; "))),
    }
}

/// `host.heartbeat`: the host is online as reported; its agents are known to run there (and
/// are back if they were offline); agents the mesh ended meanwhile are named to be stopped.
pub async fn heartbeat(reg: Registry, _ctx: RequestContext, hb: Heartbeat) -> Result<HeartbeatReply> {
    check(&hb)?;
    let now = now_ms();
    let mut change = Change::begin(&reg).await?;
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

    let known: Vec<Json<Agent>> = sqlx::query_scalar("SELECT doc FROM registry_agents WHERE agent_id = ANY($1)")
        .bind(&hb.agents)
        .fetch_all(change.conn())
        .await?;
    let mut stop: Vec<String> = hb
        .agents
        .iter()
        .filter(|id| !known.iter().any(|Json(a)| &a.agent_id == *id))
        .cloned()
        .collect();
    // Re-homed agents this host runs now have arrived.
    sqlx::query("DELETE FROM registry_rehomes WHERE to_host = $1 AND agent_id = ANY($2)")
        .bind(&hb.host_id)
        .bind(&hb.agents)
        .execute(change.conn())
        .await?;
    let mut abandon = Vec::new();
    for Json(agent) in known {
        match agent.host_id.as_deref() {
            _ if !is_attached(&agent) => stop.push(agent.agent_id),
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
async fn settle(change: &mut Change, agent_id: &str, host_id: &str, offline: Option<String>) -> Result<()> {
    let Some((mut session, mut agent)) = still_attached(change, agent_id).await? else {
        return Ok(());
    };
    let session_id = session.session_id.clone();
    let was_offline = agent.offline_since.is_some();
    agent.host_id = Some(host_id.to_string());
    agent.offline_since = match offline {
        Some(_) => agent.offline_since.or(Some(now_ms())),
        None => None,
    };
    crate::agents::save_changed(change, &mut session, &mut agent, now_ms()).await?;
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

/// `host.place`: the least-loaded online host (by load over capacity) that runs `cli` and fits
/// the placement; its load counts the spawn at once, so spawns placed together spread out.
pub async fn place(reg: Registry, _ctx: RequestContext, req: PlaceRequest) -> Result<PlaceResponse> {
    let placement = req.placement.unwrap_or_default();
    let problems = placement.problems();
    if !problems.is_empty() {
        return Err(RegistryError::Invalid(problems.join("; ")));
    }
    let mut tx = reg.db.begin().await?;
    let host_id = choose(&mut tx, &req.cli, &placement).await?;
    tx.commit().await?;
    Ok(PlaceResponse { host_id })
}

/// The least-loaded online host that runs `cli` and fits `placement`, its load counted up;
/// `unavailable` naming why each host does not fit.
async fn choose(conn: &mut sqlx::PgConnection, cli: &str, placement: &Placement) -> Result<String> {
    let hosts = load(conn, "ORDER BY host_id FOR UPDATE").await?;
    if hosts.is_empty() {
        return Err(RegistryError::Unavailable(
            "no agent host has registered: start an agent-spawner".into(),
        ));
    }
    if !hosts.iter().any(|h| h.clis.iter().any(|c| c == cli)) {
        let mut all: Vec<&str> = hosts.iter().flat_map(|h| h.clis.iter().map(String::as_str)).collect();
        all.sort();
        all.dedup();
        return Err(RegistryError::NotFound {
            what: "cli",
            id: format!("{:?} on any host (they run: {})", cli, all.join(", ")),
        });
    }
    let mut why = Vec::new();
    let mut best: Option<&Host> = None;
    for h in &hosts {
        let misfit = if !h.clis.iter().any(|c| c == cli) {
            Some(format!("does not run {cli}"))
        } else if let Some(m) = placement.misfit(h) {
            Some(m)
        } else if h.status != "online" {
            Some(format!(
                "{} since {}",
                h.status,
                h.offline_since.unwrap_or(h.last_seen_at)
            ))
        } else if h.load >= h.capacity {
            Some(format!(
                "full ({} of {} agents, its spawner.max_agents maximum)",
                h.load, h.capacity
            ))
        } else {
            None
        };
        match misfit {
            Some(m) => {
                if placement.host.as_ref().is_none_or(|want| want == &h.host_id) {
                    why.push(format!("{}: {m}", h.host_id));
                }
            }
            None => {
                let share = |h: &Host| h.load as u64 * 1_000_000 / h.capacity.max(1) as u64;
                if best.is_none_or(|b| (share(h), h.load) < (share(b), b.load)) {
                    best = Some(h);
                }
            }
        }
    }
    let Some(best) = best else {
        if why.is_empty() {
            why.push(format!(
                "no host {} has registered",
                placement.host.clone().unwrap_or_default()
            ));
        }
        return Err(RegistryError::Unavailable(format!(
            "no host can run {} now: {}",
            cli,
            why.join("; ")
        )));
    };
    sqlx::query("UPDATE registry_hosts SET load = load + 1 WHERE host_id = $1")
        .bind(&best.host_id)
        .execute(&mut *conn)
        .await?;
    Ok(best.host_id.clone())
}

/// `host.list`. A caller confined to a workspace sees each host with its own workspace's agents
/// only, and their count as the load: another tenant's agents and activity are not its business.
pub async fn list(reg: Registry, ctx: RequestContext, req: HostListRequest) -> Result<HostList> {
    let status = req.status.unwrap_or_else(|| "all".into());
    if !["online", "offline", "lost", "all"].contains(&status.as_str()) {
        return Err(RegistryError::Invalid(format!(
            "status {status:?}: use online, offline, lost or all"
        )));
    }
    let mut conn = reg.db.acquire().await?;
    let mut hosts = load(&mut conn, "ORDER BY host_id").await?;
    hosts.retain(|h| status == "all" || h.status == status);
    if let Some(workspace) = ctx.scope() {
        let all: Vec<&str> = hosts.iter().flat_map(|h| h.agents.iter().map(String::as_str)).collect();
        let own: std::collections::HashSet<String> = crate::store::agents_in_workspace(&mut conn, &all, workspace)
            .await?
            .into_iter()
            .collect();
        for h in &mut hosts {
            h.agents.retain(|a| own.contains(a));
            h.load = h.agents.len() as u32;
        }
    }
    Ok(HostList { hosts })
}

/// Moves quiet hosts on: online → offline (their agents' deliveries held), offline → lost
/// (`on_lost` applied). Each host row is taken by one replica.
pub async fn sweep(reg: &Registry) -> Result<()> {
    let s = &reg.settings.hosts;
    let now = now_ms();
    let mut change = Change::begin(reg).await?;
    // Host rows before any session, as a heartbeat takes them: re-homing locks them all.
    if s.on_lost == OnLost::Rehome {
        load(change.conn(), "ORDER BY host_id FOR UPDATE").await?;
    }
    let quiet: Vec<(String, i64)> = sqlx::query_as(
        "UPDATE registry_hosts SET status = 'offline', offline_since = $1
         WHERE status = 'online' AND last_seen_at < $1 - $2 RETURNING host_id, last_seen_at",
    )
    .bind(now)
    .bind(s.offline_after_ms)
    .fetch_all(change.conn())
    .await?;
    for (host, seen) in &quiet {
        tracing::warn!(host, "agent host stopped heartbeating; holding its agents' deliveries");
        let reason = format!("host {host} has not heartbeated for {} ms", now - seen);
        for agent in agents_on(change.conn(), host).await? {
            settle(&mut change, &agent, host, Some(reason.clone())).await?;
        }
    }
    let lost: Vec<String> = sqlx::query_scalar(
        "UPDATE registry_hosts SET status = 'lost'
         WHERE status = 'offline' AND offline_since < $1 - $2 RETURNING host_id",
    )
    .bind(now)
    .bind(s.lost_after_ms)
    .fetch_all(change.conn())
    .await?;
    let mut moves = Vec::new();
    for host in &lost {
        tracing::warn!(host, on_lost = ?s.on_lost, "agent host lost");
        if s.on_lost == OnLost::Hold {
            continue;
        }
        for agent_id in agents_on(change.conn(), host).await? {
            let Some((mut session, mut agent)) = still_attached(&mut change, &agent_id).await? else {
                continue;
            };
            if s.on_lost == OnLost::Rehome {
                let placement = agent.placement.clone().unwrap_or_default();
                match choose(change.conn(), &agent.adapter_name, &placement).await {
                    Ok(to) => {
                        tracing::warn!(agent_id, from = host, to, "re-homing a lost host's agent");
                        agent.host_id = Some(to.clone());
                        crate::agents::save_changed(&mut change, &mut session, &mut agent, now).await?;
                        // Durable, so that a re-homing this replica does not see through (it
                        // stops, or its spawn request is lost) is failed by the sweep.
                        sqlx::query(
                            "INSERT INTO registry_rehomes (agent_id, from_host, to_host, started_at)
                             VALUES ($1, $2, $3, $4) ON CONFLICT (agent_id) DO UPDATE SET
                               from_host = EXCLUDED.from_host, to_host = EXCLUDED.to_host,
                               started_at = EXCLUDED.started_at",
                        )
                        .bind(&agent.agent_id)
                        .bind(host)
                        .bind(&to)
                        .bind(now)
                        .execute(change.conn())
                        .await?;
                        moves.push((agent, host.clone(), to));
                        continue;
                    }
                    Err(e @ (RegistryError::Unavailable(_) | RegistryError::NotFound { .. })) => {
                        tracing::warn!(agent_id, host, error = %e, "cannot re-home a lost host's agent; it fails");
                    }
                    Err(e) => return Err(e),
                }
            }
            dispose(&mut change, &mut session, &mut agent).await?;
        }
    }
    let overdue: Vec<String> = sqlx::query_scalar("SELECT agent_id FROM registry_rehomes WHERE started_at < $1")
        .bind(now - 2 * REHOME_TIMEOUT.as_millis() as i64)
        .fetch_all(change.conn())
        .await?;
    change.commit().await?;
    for (agent, from, to) in moves {
        tokio::spawn(rehome(reg.clone(), agent, from, to));
    }
    for agent_id in overdue {
        tracing::warn!(agent_id, "a re-homed agent's new host never reported it; it fails");
        if let Err(e) = fail_rehome(reg, &agent_id).await {
            tracing::warn!(agent_id, error = %e, "cannot fail the agent that was not re-homed yet");
        }
    }
    Ok(())
}

/// Has `to`'s spawner start a harness bound to the re-homed `agent`; when it does not, the
/// agent fails as if `on_lost` were `fail` (named lost with its old host `from`). Its
/// deliveries stay held until the new host's heartbeat reports it.
async fn rehome(reg: Registry, agent: Agent, from: String, to: String) {
    use relay_contracts::hosts::{SpawnRequest, SpawnResponse};
    let agent_id = agent.agent_id.clone();
    let placed = PlacedSpawn {
        spawn: SpawnRequest {
            session_id: agent.session_id.clone(),
            agent_name: None,
            cli: agent.adapter_name.clone(),
            task: None,
            cwd: agent.cwd.clone(),
            placement: agent.placement.clone(),
        },
        spawned_by: agent.spawned_by.clone(),
        rehome: Some(agent_id.clone()),
    };
    let subject = rpc::instance_subject(<rpc::AgentSpawnOn as relay_contracts::Rpc>::SUBJECT, &to);
    let started = async {
        let mut conn = reg.db.acquire().await?;
        let workspace = crate::store::session_workspace(&mut conn, &agent.session_id)
            .await?
            .unwrap_or_else(|| relay_contracts::context::DEFAULT_WORKSPACE.into());
        drop(conn);
        // The harness's NATS identity is minted for the agent's workspace.
        let ctx = RequestContext::new(relay_bus::context::identity(), &workspace);
        relay_bus::context::act_as(
            ctx,
            relay_bus::client::request::<_, SpawnResponse>(&reg.nats, &subject, &placed, REHOME_TIMEOUT),
        )
        .await
        .map_err(RegistryError::Upstream)
    };
    let Err(e) = started.await else {
        tracing::info!(agent_id, from, to, "lost host's agent re-homed");
        return;
    };
    tracing::warn!(agent_id, from, to, error = %e, "the new host did not start the re-homed agent; it fails");
    // Else the sweep fails it once the re-homing is overdue.
    if let Err(e) = fail_rehome(&reg, &agent_id).await {
        tracing::warn!(agent_id, error = %e, "cannot fail the agent that was not re-homed yet");
    }
}

/// Ends a re-homed agent its new host has not reported (unless it has meanwhile): its
/// deliveries fail naming the host it was lost with.
async fn fail_rehome(reg: &Registry, agent_id: &str) -> Result<()> {
    let mut change = Change::begin(reg).await?;
    // Hosts first, as the sweep and heartbeats take them.
    load(change.conn(), "ORDER BY host_id FOR UPDATE").await?;
    let from: Option<(String, String)> =
        sqlx::query_as("DELETE FROM registry_rehomes WHERE agent_id = $1 RETURNING from_host, to_host")
            .bind(agent_id)
            .fetch_optional(change.conn())
            .await?;
    if let Some((from, to)) = from
        && let Some((mut session, mut agent)) = still_attached(&mut change, agent_id).await?
        && agent.host_id.as_deref() == Some(to.as_str())
        && agent.offline_since.is_some()
    {
        agent.host_id = Some(from);
        dispose(&mut change, &mut session, &mut agent).await?;
    }
    change.commit().await
}

/// How long a re-homing waits for the new host's harness to attach.
const REHOME_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The agent and its session, locked ([`lock_attached`]); `None` once it was released (it
/// went its own way meanwhile: nothing left to do).
async fn still_attached(change: &mut Change, agent_id: &str) -> Result<Option<(Session, Agent)>> {
    match lock_attached(change, agent_id).await {
        Ok(locked) => Ok(Some(locked)),
        Err(RegistryError::Conflict(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The live agents last known on `host`.
async fn agents_on(conn: &mut sqlx::PgConnection, host: &str) -> Result<Vec<String>> {
    Ok(sqlx::query_scalar(
        "SELECT agent_id FROM registry_agents
         WHERE doc->>'hostId' = $1 AND doc->>'status' <> 'disposed' ORDER BY agent_id",
    )
    .bind(host)
    .fetch_all(conn)
    .await?)
}

#[derive(sqlx::FromRow)]
struct Row {
    host_id: String,
    labels: Json<BTreeMap<String, String>>,
    capacity: i32,
    load: i32,
    clis: Vec<String>,
    agents: Vec<String>,
    version: String,
    status: String,
    first_seen_at: i64,
    last_seen_at: i64,
    offline_since: Option<i64>,
}

async fn load(conn: &mut sqlx::PgConnection, tail: &'static str) -> Result<Vec<Host>> {
    let sql = format!(
        "SELECT host_id, labels, capacity, load, clis, agents, version, status, first_seen_at,
                last_seen_at, offline_since FROM registry_hosts {tail}"
    );
    let rows: Vec<Row> = sqlx::query_as(sqlx::AssertSqlSafe(sql)).fetch_all(conn).await?;
    Ok(rows
        .into_iter()
        .map(|r| Host {
            host_id: r.host_id,
            labels: r.labels.0,
            capacity: r.capacity.max(0) as u32,
            load: r.load.max(0) as u32,
            clis: r.clis,
            agents: r.agents,
            status: r.status,
            version: r.version,
            first_seen_at: r.first_seen_at,
            last_seen_at: r.last_seen_at,
            offline_since: r.offline_since,
        })
        .collect())
}
