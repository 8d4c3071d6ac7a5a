//! Agent hosts: every agent-spawner registers the machine it runs on (labels, capacity, load)
//! and heartbeats; `agent.spawn` places each agent on the least-loaded host that matches its
//! constraints. A host that stops heartbeating is `offline` (its agents' deliveries are held),
//! then `lost` (its agents are ended or kept waiting, per the registry's `hosts.on_lost`).

use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;
use std::collections::BTreeMap;

/// The longest host id, label key or value.
pub const MAX_HOST_CHARS: usize = 128;
/// The most labels one host or one placement names.
pub const MAX_LABELS: usize = 32;

/// Where an agent may run (`agent.spawn` `placement`): every label given must be on the host
/// with that value, and `host`, when given, names the one host.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Placement {
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$")
    )]
    pub host: Option<String>,
    /// e.g. `{"gpu": "a100", "repo": "relay-mesh"}`; `os` and `arch` are set by every host.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
}

/// `host.heartbeat`: a spawner's host as it is now (sent every `spawner.heartbeat_ms` and at
/// once when its load changes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Heartbeat {
    pub host_id: String,
    pub labels: BTreeMap<String, String>,
    /// Agents it runs at once (`spawner.max_agents`).
    pub capacity: u32,
    /// Agents running or starting there now.
    pub load: u32,
    /// The `cli` names it can start.
    pub clis: Vec<String>,
    /// The agents whose harnesses run there.
    pub agents: Vec<String>,
    pub version: String,
}

/// What the registry asks of a host that heartbeats.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct HeartbeatReply {
    /// Agents it still runs that the mesh has ended since (they were lost with the host while
    /// it was cut off): stop their harnesses, so no agent runs twice.
    pub stop: Vec<String>,
    /// Agents it still runs that were re-homed onto another host meanwhile: kill their
    /// harnesses without ending the agents, which run there now.
    #[serde(default)]
    pub abandon: Vec<String>,
}

/// `host.place`: the host a spawn goes to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlaceRequest {
    pub cli: String,
    pub placement: Option<Placement>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PlaceResponse {
    pub host_id: String,
}

/// A host as the registry knows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Host {
    pub host_id: String,
    pub labels: BTreeMap<String, String>,
    pub capacity: u32,
    pub load: u32,
    pub clis: Vec<String>,
    /// Its live agents, as last reported.
    pub agents: Vec<String>,
    /// `online`, `offline` (no heartbeat for `hosts.offline_after_ms`: its agents' deliveries
    /// are held) or `lost` (offline for `hosts.lost_after_ms`: `hosts.on_lost` applied).
    pub status: String,
    pub version: String,
    pub first_seen_at: i64,
    pub last_seen_at: i64,
    pub offline_since: Option<i64>,
}

/// `host.list` (`GET /api/v1/hosts`).
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema, utoipa::IntoParams), into_params(parameter_in = Query))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HostListRequest {
    /// `online`, `offline`, `lost` or `all` (default).
    #[cfg_attr(
        feature = "openapi",
        param(pattern = "^(online|offline|lost|all)$"),
        schema(pattern = "^(online|offline|lost|all)$")
    )]
    pub status: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct HostList {
    pub hosts: Vec<Host>,
}

/// `agent.spawnOn.<hostId>`: a spawn placed on that host by the spawner that took it.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlacedSpawn {
    pub spawn: SpawnRequest,
    /// The lead that asked, already checked by the spawner that placed it.
    pub spawned_by: Option<String>,
    /// A lost host's agent the registry moved here: its harness binds to this agent again
    /// (same id, handle and deliveries) in a new CLI session; `spawn.task` is not sent.
    pub rehome: Option<String>,
}

/// A label key or value, or a host id: 1 to [`MAX_HOST_CHARS`] of letters, digits, `_ . : -`.
pub fn valid_name(s: &str) -> bool {
    (1..=MAX_HOST_CHARS).contains(&s.len()) && s.chars().all(|c| c.is_ascii_alphanumeric() || "_.:-".contains(c))
}

impl Placement {
    /// Every problem with it, for one `invalid_request`.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(h) = &self.host
            && !valid_name(h)
        {
            out.push(format!(
                "placement.host {h:?}: 1 to {MAX_HOST_CHARS} of letters, digits, _ . : -"
            ));
        }
        if self.labels.len() > MAX_LABELS {
            out.push(format!("placement.labels: at most {MAX_LABELS}"));
        }
        for (k, v) in &self.labels {
            if !valid_name(k) || !valid_name(v) {
                out.push(format!(
                    "placement.labels {k:?}={v:?}: keys and values are 1 to {MAX_HOST_CHARS} of letters, digits, _ . : -"
                ));
            }
        }
        out
    }

    /// Why `host` does not fit it, if it does not.
    pub fn misfit(&self, host: &Host) -> Option<String> {
        if let Some(want) = &self.host
            && want != &host.host_id
        {
            return Some("not the host asked for".into());
        }
        let missing: Vec<String> = self
            .labels
            .iter()
            .filter(|(k, v)| host.labels.get(*k) != Some(*v))
            .map(|(k, v)| match host.labels.get(k) {
                Some(has) => format!("{k}={has}, not {v}"),
                None => format!("no label {k}"),
            })
            .collect();
        (!missing.is_empty()).then(|| missing.join(", "))
    }
}

/// `agent.spawn`: run an agent CLI under a harness attached to `sessionId` (seed 003 §2.3
/// `POST /api/v1/sessions` with `cli`).
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SpawnRequest {
    pub session_id: String,
    pub agent_name: Option<String>,
    /// An agent the spawner is configured with: `claude`, `codex`, `gemini` (structured
    /// protocols), `claude-tui`, `codex-tui`, `gemini-tui` (terminal), `aider`, `goose`, ….
    pub cli: String,
    /// The first prompt, delivered once the agent is attached.
    pub task: Option<String>,
    pub cwd: Option<String>,
    /// Which hosts may run it; none: any host that runs `cli`, the least loaded first.
    pub placement: Option<Placement>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SpawnResponse {
    pub agent_id: String,
    /// The host it runs on.
    pub host_id: Option<String>,
}
