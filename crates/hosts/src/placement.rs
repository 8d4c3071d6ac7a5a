//! Placement: `host.place` (the least-loaded online host that runs the cli and fits), `host.list`,
//! and the SQL of the host table.

use crate::Keeper;
use crate::error::{HostsError, Result};
use relay_contracts::RequestContext;
use relay_contracts::hosts::{Host, HostList, HostListRequest, PlaceRequest, PlaceResponse, Placement};
use sqlx::types::Json;
use std::collections::BTreeMap;

/// `host.place`: the least-loaded online host (by load over capacity) that runs `cli` and fits
/// the placement; its load counts the spawn at once, so spawns placed together spread out.
pub async fn place<K: Keeper>(keeper: K, _ctx: RequestContext, req: PlaceRequest) -> Result<PlaceResponse> {
    let placement = req.placement.unwrap_or_default();
    let problems = placement.problems();
    if !problems.is_empty() {
        return Err(HostsError::Invalid(problems.join("; ")));
    }
    let mut tx = keeper.hosts().db.begin().await?;
    let host_id = choose(&mut tx, &req.cli, &placement).await?;
    tx.commit().await?;
    Ok(PlaceResponse { host_id })
}

/// The least-loaded online host that runs `cli` and fits `placement`, its load counted up;
/// `unavailable` naming why each host does not fit.
pub(crate) async fn choose(conn: &mut sqlx::PgConnection, cli: &str, placement: &Placement) -> Result<String> {
    let hosts = load(conn, "ORDER BY host_id FOR UPDATE").await?;
    if hosts.is_empty() {
        return Err(HostsError::Unavailable(
            "no agent host has registered: start an agent-spawner".into(),
        ));
    }
    if !hosts.iter().any(|h| h.clis.iter().any(|c| c == cli)) {
        let mut all: Vec<&str> = hosts.iter().flat_map(|h| h.clis.iter().map(String::as_str)).collect();
        all.sort();
        all.dedup();
        return Err(HostsError::NotFound {
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
        return Err(HostsError::Unavailable(format!(
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
pub async fn list<K: Keeper>(keeper: K, ctx: RequestContext, req: HostListRequest) -> Result<HostList> {
    let status = req.status.unwrap_or_else(|| "all".into());
    if !["online", "offline", "lost", "all"].contains(&status.as_str()) {
        return Err(HostsError::Invalid(format!(
            "status {status:?}: use online, offline, lost or all"
        )));
    }
    let mut conn = keeper.hosts().db.acquire().await?;
    let mut hosts = load(&mut conn, "ORDER BY host_id").await?;
    hosts.retain(|h| status == "all" || h.status == status);
    if let Some(workspace) = ctx.scope() {
        let all: Vec<&str> = hosts.iter().flat_map(|h| h.agents.iter().map(String::as_str)).collect();
        let own: std::collections::HashSet<String> = K::agents_in_workspace(&mut conn, &all, workspace)
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

pub(crate) async fn load(conn: &mut sqlx::PgConnection, tail: &'static str) -> Result<Vec<Host>> {
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
