//! The sweep: quiet hosts go offline (their agents' deliveries held), then lost (`on_lost`
//! applied to their agents: ended, kept, or re-homed onto another host). Each host row is taken
//! by one replica.

use crate::error::{HostsError, Result};
use crate::heartbeat::settle;
use crate::placement::{choose, load};
use crate::{Change, Keeper, OnLost};
use relay_contracts::hosts::PlacedSpawn;
use relay_contracts::session::Agent;
use relay_contracts::{RequestContext, rpc};

/// Moves quiet hosts on: online → offline (their agents' deliveries held), offline → lost
/// (`on_lost` applied). Each host row is taken by one replica.
pub async fn sweep<K: Keeper>(keeper: &K) -> Result<()> {
    let s = &keeper.hosts().settings;
    let now = relay_bus::now_ms();
    let mut change = keeper.begin().await?;
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
        for agent in K::agents_on(change.conn(), host).await? {
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
        for agent_id in K::agents_on(change.conn(), host).await? {
            let Some((mut session, mut agent)) = change.lock_attached(&agent_id).await? else {
                continue;
            };
            if s.on_lost == OnLost::Rehome {
                let placement = agent.placement.clone().unwrap_or_default();
                match choose(change.conn(), &agent.adapter_name, &placement).await {
                    Ok(to) => {
                        tracing::warn!(agent_id, from = host, to, "re-homing a lost host's agent");
                        agent.host_id = Some(to.clone());
                        change.save(&mut session, &mut agent, now).await?;
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
                    Err(e @ (HostsError::Unavailable(_) | HostsError::NotFound { .. })) => {
                        tracing::warn!(agent_id, host, error = %e, "cannot re-home a lost host's agent; it fails");
                    }
                    Err(e) => return Err(e),
                }
            }
            change.dispose(&mut session, &mut agent).await?;
        }
    }
    let overdue: Vec<String> = sqlx::query_scalar("SELECT agent_id FROM registry_rehomes WHERE started_at < $1")
        .bind(now - 2 * REHOME_TIMEOUT.as_millis() as i64)
        .fetch_all(change.conn())
        .await?;
    change.commit().await?;
    for (agent, from, to) in moves {
        tokio::spawn(rehome(keeper.clone(), agent, from, to));
    }
    for agent_id in overdue {
        tracing::warn!(agent_id, "a re-homed agent's new host never reported it; it fails");
        if let Err(e) = fail_rehome(keeper, &agent_id).await {
            tracing::warn!(agent_id, error = %e, "cannot fail the agent that was not re-homed yet");
        }
    }
    Ok(())
}

/// Has `to`'s spawner start a harness bound to the re-homed `agent`; when it does not, the
/// agent fails as if `on_lost` were `fail` (named lost with its old host `from`). Its
/// deliveries stay held until the new host's heartbeat reports it.
async fn rehome<K: Keeper>(keeper: K, agent: Agent, from: String, to: String) {
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
        let mut conn = keeper.hosts().db.acquire().await?;
        let workspace = K::session_workspace(&mut conn, &agent.session_id)
            .await?
            .unwrap_or_else(|| relay_contracts::context::DEFAULT_WORKSPACE.into());
        drop(conn);
        // The harness's NATS identity is minted for the agent's workspace.
        let ctx = RequestContext::new(relay_bus::context::identity(), &workspace);
        relay_bus::context::act_as(
            ctx,
            relay_bus::client::request::<_, SpawnResponse>(&keeper.hosts().nats, &subject, &placed, REHOME_TIMEOUT),
        )
        .await
        .map_err(HostsError::Upstream)
    };
    let Err(e) = started.await else {
        tracing::info!(agent_id, from, to, "lost host's agent re-homed");
        return;
    };
    tracing::warn!(agent_id, from, to, error = %e, "the new host did not start the re-homed agent; it fails");
    // Else the sweep fails it once the re-homing is overdue.
    if let Err(e) = fail_rehome(&keeper, &agent_id).await {
        tracing::warn!(agent_id, error = %e, "cannot fail the agent that was not re-homed yet");
    }
}

/// Ends a re-homed agent its new host has not reported (unless it has meanwhile): its
/// deliveries fail naming the host it was lost with.
async fn fail_rehome<K: Keeper>(keeper: &K, agent_id: &str) -> Result<()> {
    let mut change = keeper.begin().await?;
    // Hosts first, as the sweep and heartbeats take them.
    load(change.conn(), "ORDER BY host_id FOR UPDATE").await?;
    let from: Option<(String, String)> =
        sqlx::query_as("DELETE FROM registry_rehomes WHERE agent_id = $1 RETURNING from_host, to_host")
            .bind(agent_id)
            .fetch_optional(change.conn())
            .await?;
    if let Some((from, to)) = from
        && let Some((mut session, mut agent)) = change.lock_attached(agent_id).await?
        && agent.host_id.as_deref() == Some(to.as_str())
        && agent.offline_since.is_some()
    {
        agent.host_id = Some(from);
        change.dispose(&mut session, &mut agent).await?;
    }
    change.commit().await
}

/// How long a re-homing waits for the new host's harness to attach.
const REHOME_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);
