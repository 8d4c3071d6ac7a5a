//! `agent.spawn`: starts an agent CLI under its own agent-harness process, for the gateway's
//! `POST /api/v1/sessions` with `cli` (seed 003 §2.1).
//!
//! Each spawn is a child process `agent-harness --session … --cli … -- <command>`, so an agent
//! that crashes takes nothing else down. The reply waits until the harness has attached the agent
//! to the session (it prints the agent id), then the task is sent as the first message.
//!
//! Run a spawner on every machine that may host agents. Each registers its host (labels,
//! capacity, load, agents) with the session registry and heartbeats. `agent.spawn` is a
//! queue-group service: the spawner that takes a request has the registry place it
//! (`host.place`: the least-loaded host that runs the cli and fits the placement) and starts it
//! itself or hands it to that host's spawner on `agent.spawnOn.<hostId>`.

use crate::env::{child_pid, runnable};
use crate::error::HarnessError;
use crate::handover::TRACEPARENT_ENV;
use crate::sandbox::Sandbox;
use relay_bus::identity::HarnessSigner;
use relay_bus::service::{ServiceError, ServiceHost};
use relay_contracts::hosts::{Heartbeat, PlaceRequest, PlacedSpawn, Placement};
use relay_contracts::hosts::{SpawnRequest, SpawnResponse};
use relay_contracts::session::{AgentGetRequest, AgentListRequest, AgentTargets, SendMessageRequest};
use relay_contracts::{RequestContext, WireError, rpc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::{Notify, Semaphore};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct SpawnerSettings {
    /// What each `cli` runs and how the harness talks to it.
    pub agents: BTreeMap<String, AgentCommand>,
    /// Shorthand for PTY agents: `cli = [program, args…]`, parsed with the `cli`'s patterns
    /// (claude, codex, gemini; generic for other names). Wins over `agents` of the same name.
    pub commands: BTreeMap<String, Vec<String>>,
    /// The agent-harness binary; empty: the one beside this executable.
    pub harness_bin: String,
    /// Agents this spawner runs at once; past it, `agent.spawn` answers `unavailable`.
    pub max_agents: usize,
    /// How long an agent may take to attach before the spawn fails and it is killed.
    pub attach_timeout_ms: u64,
    /// A harness killed by a signal (kill -9, OOM) is started again this many times, bound to
    /// the same agent and resuming the CLI's session; 0 turns restarts off.
    pub max_restarts: u32,
    /// The harness signer seed (`harness-signer.nk` from `relayctl auth init`): each harness
    /// gets a NATS identity minted for its one agent. Required when this spawner has
    /// credentials of its own; empty: harnesses connect without any (auth off).
    pub harness_signer: String,
    /// Live workers one delegating agent may have at once; past it its spawns are `forbidden`.
    pub max_workers_per_lead: usize,
    /// This host's name among the agent hosts (`GET /api/v1/hosts`); empty: the machine's
    /// hostname.
    pub host_id: String,
    /// Labels placements match (`gpu = "a100"`, `repo = "relay-mesh"`); `os` and `arch` are
    /// added unless set here.
    pub labels: BTreeMap<String, String>,
    /// How often the host heartbeats to the registry (and at once when its load changes).
    pub heartbeat_ms: u64,
    /// Where agents work by default: `<data_dir>/workspaces/<workspace>`, created on demand.
    /// Empty: `$XDG_DATA_HOME/relay-mesh`, else `~/.local/share/relay-mesh`.
    pub data_dir: String,
    /// Directories besides its workspace's own where a spawned agent's `cwd` may lie
    /// (`{workspace}` stands for the workspace's name). A `cwd` is resolved (symlinks, `..`)
    /// before it is checked; one outside them is refused.
    pub cwd_roots: Vec<String>,
    /// `bwrap`: every agent's CLI runs inside bubblewrap, which the host must have (the
    /// spawner does not start without it); `none` (default): as the spawner's user, unconfined.
    /// Per CLI: `spawner.agents.<cli>.sandbox`.
    pub sandbox: String,
    /// Files and directories sandboxed agents must not see, besides what is hidden anyway (the
    /// workspaces' directories, the spawner's configuration, credentials and signer).
    pub sandbox_hide: Vec<String>,
}

/// One kind of agent the spawner can start.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AgentCommand {
    /// Program and arguments (the structured protocols add their own flags after them).
    pub command: Vec<String>,
    /// pty (default), claude-stream-json, codex-app-server or acp.
    pub protocol: String,
    /// PTY output patterns: claude, codex, gemini or generic (default: generic).
    pub patterns: String,
    /// Environment for the CLI (on top of the spawner's own), e.g. a model endpoint.
    pub env: BTreeMap<String, String>,
    /// Agents of this kind may delegate: they declare AG-UI `multiAgent.delegation` and may
    /// spawn (and stop) workers in their own session, e.g. with the `relay_map_reduce` tool.
    pub delegate: bool,
    /// A JSON file of the actions agents of this kind expose (the harness's `--actions`).
    pub actions: Option<String>,
    /// AG-UI capability additions (seed 004 categories, e.g. `identity.description`) merged
    /// over what the harness derives from the path (the harness's `--capabilities`).
    pub capabilities: Option<serde_json::Map<String, serde_json::Value>>,
    /// `none` or `bwrap`: this kind's sandbox; unset: `spawner.sandbox`.
    pub sandbox: Option<String>,
    /// The CLI's home, which the harness prepares before each start (onboarding done, the
    /// agent's cwd trusted, telemetry off, API-key auth from the environment: homes.rs) and runs
    /// the CLI with. `{data_dir}`, `{workspace}`, `{cli}` and `{agent}` (the agent's handle, else
    /// a new id) are replaced: `"{data_dir}/homes/{workspace}/{cli}"` is one home per workspace
    /// and kind, kept across restarts (resumes work). Unset: the spawner's own `HOME`, as is.
    pub home: Option<String>,
}

impl AgentCommand {
    fn new(command: &[&str], protocol: &str, patterns: &str) -> AgentCommand {
        AgentCommand {
            command: command.iter().map(std::string::ToString::to_string).collect(),
            protocol: protocol.into(),
            patterns: patterns.into(),
            env: BTreeMap::new(),
            delegate: false,
            actions: None,
            capabilities: None,
            sandbox: None,
            home: None,
        }
    }
}

impl Default for SpawnerSettings {
    fn default() -> Self {
        let agents = [
            ("claude", AgentCommand::new(&["claude"], "claude-stream-json", "claude")),
            ("codex", AgentCommand::new(&["codex"], "codex-app-server", "codex")),
            ("gemini", AgentCommand::new(&["gemini", "--acp"], "acp", "gemini")),
            // The mode where every tool asks (newer releases start in auto mode, unasked).
            (
                "claude-tui",
                AgentCommand::new(&["claude", "--permission-mode", "default"], "pty", "claude"),
            ),
            ("codex-tui", AgentCommand::new(&["codex"], "pty", "codex")),
            ("gemini-tui", AgentCommand::new(&["gemini"], "pty", "gemini")),
            ("aider", AgentCommand::new(&["aider"], "pty", "generic")),
            ("goose", AgentCommand::new(&["goose", "session"], "pty", "generic")),
        ];
        SpawnerSettings {
            agents: agents.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            commands: BTreeMap::new(),
            harness_bin: String::new(),
            max_agents: 16,
            attach_timeout_ms: 30_000,
            max_restarts: 3,
            harness_signer: String::new(),
            max_workers_per_lead: 10,
            host_id: String::new(),
            labels: BTreeMap::new(),
            heartbeat_ms: 2_000,
            data_dir: String::new(),
            cwd_roots: Vec::new(),
            sandbox: "none".into(),
            sandbox_hide: Vec::new(),
        }
    }
}

impl SpawnerSettings {
    /// The agent `cli` names, `commands` first.
    fn agent(&self, cli: &str) -> Option<AgentCommand> {
        if let Some(argv) = self.commands.get(cli).filter(|c| !c.is_empty()) {
            // `claude-tui` reads Claude's screens as `claude` does.
            let patterns = match cli.strip_suffix("-tui").unwrap_or(cli) {
                known @ ("claude" | "codex" | "gemini") => known,
                _ => "generic",
            };
            return Some(AgentCommand {
                command: argv.clone(),
                protocol: "pty".into(),
                patterns: patterns.into(),
                env: BTreeMap::new(),
                delegate: false,
                actions: None,
                capabilities: None,
                sandbox: None,
                home: None,
            });
        }
        self.agents.get(cli).filter(|a| !a.command.is_empty()).cloned()
    }

    /// The sandbox agents of `cli` run in, and the setting that says so.
    fn sandbox_of(&self, cli: &str, agent: &AgentCommand) -> Result<(Sandbox, String), String> {
        let (value, setting) = match &agent.sandbox {
            Some(own) => (own.as_str(), format!("spawner.agents.{cli}.sandbox")),
            None => (self.sandbox.as_str(), "spawner.sandbox".to_string()),
        };
        Ok((Sandbox::parse(value, &setting)?, setting))
    }

    /// A host does not offer agents it cannot sandbox as configured: an error naming the
    /// setting when one is not `none` or `bwrap`, or is `bwrap` on a host without it.
    pub fn check_sandbox(&self) -> Result<(), String> {
        let own = self.agents.iter().map(|(cli, agent)| (cli.as_str(), agent));
        for (cli, agent) in std::iter::once(("", &AgentCommand::default())).chain(own) {
            let (sandbox, setting) = self.sandbox_of(cli, agent)?;
            sandbox.check(&setting)?;
        }
        Ok(())
    }

    fn known(&self) -> String {
        let mut names: Vec<&str> = self
            .commands
            .keys()
            .chain(self.agents.keys())
            .map(String::as_str)
            .collect();
        names.sort();
        names.dedup();
        names.join(", ")
    }
}

#[derive(Clone)]
pub struct Spawner {
    nats: async_nats::Client,
    settings: Arc<SpawnerSettings>,
    harness: PathBuf,
    slots: Arc<Semaphore>,
    signer: Option<HarnessSigner>,
    host: Arc<HostState>,
}

/// This host: what it heartbeats, and a way to stop each of its agents.
struct HostState {
    id: String,
    labels: BTreeMap<String, String>,
    /// The agents whose harnesses run here, each with the signal that stops its harness.
    running: Mutex<BTreeMap<String, Arc<Stop>>>,
    /// Heartbeat now (the load changed).
    beat: Notify,
}

/// How the registry has a harness stopped: ended (its stdin closes, it ends its agent), or
/// abandoned (killed, its agent untouched: the agent runs on another host now).
#[derive(Default)]
struct Stop {
    now: Notify,
    abandon: std::sync::atomic::AtomicBool,
}

impl Spawner {
    /// `own_creds`: this spawner's NATS credentials, if it has any (auth on).
    pub fn new(
        nats: async_nats::Client,
        settings: SpawnerSettings,
        own_creds: Option<&str>,
    ) -> Result<Spawner, relay_bus::BoxError> {
        settings.check_sandbox()?;
        let harness = if settings.harness_bin.is_empty() {
            std::env::current_exe()?.with_file_name("agent-harness")
        } else {
            PathBuf::from(&settings.harness_bin)
        };
        let signer = match (own_creds, settings.harness_signer.as_str()) {
            (None, _) => None,
            (Some(_), "") => {
                return Err(
                    "the spawner has NATS credentials but no spawner.harness_signer to give its harnesses theirs"
                        .into(),
                );
            }
            (Some(creds), path) => Some(HarnessSigner::load(std::path::Path::new(path), creds)?),
        };
        let id = match settings.host_id.as_str() {
            "" => hostname(),
            id => id.to_string(),
        };
        let mut labels = BTreeMap::from([
            ("os".to_string(), std::env::consts::OS.to_string()),
            ("arch".to_string(), std::env::consts::ARCH.to_string()),
        ]);
        labels.extend(settings.labels.clone());
        let problems = Placement {
            host: Some(id.clone()),
            labels: labels.clone(),
        }
        .problems();
        if !problems.is_empty() {
            return Err(format!("spawner.host_id / spawner.labels: {}", problems.join("; ")).into());
        }
        Ok(Spawner {
            nats,
            slots: Arc::new(Semaphore::new(settings.max_agents)),
            settings: Arc::new(settings),
            harness,
            signer,
            host: Arc::new(HostState {
                id,
                labels,
                running: Mutex::new(BTreeMap::new()),
                beat: Notify::new(),
            }),
        })
    }

    /// Tells the registry how this host is now; stops the agents it names.
    async fn heartbeat(&self) -> Result<(), relay_bus::WireError> {
        let s = &self.settings;
        // Only what can start here: a configured program that exists (a CLI installed later
        // shows up at the next heartbeat).
        let mut clis: Vec<String> = s
            .commands
            .keys()
            .chain(s.agents.keys())
            .filter(|cli| {
                s.agent(cli).is_some_and(|a| {
                    runnable(&a.command[0])
                        && s.sandbox_of(cli, &a)
                            .is_ok_and(|(sandbox, _)| sandbox.check("").is_ok())
                })
            })
            .cloned()
            .collect();
        clis.sort();
        clis.dedup();
        let hb = Heartbeat {
            host_id: self.host.id.clone(),
            labels: self.host.labels.clone(),
            capacity: s.max_agents as u32,
            load: (s.max_agents - self.slots.available_permits()) as u32,
            clis,
            agents: self.running().keys().cloned().collect(),
            version: env!("CARGO_PKG_VERSION").into(),
        };
        let reply = relay_bus::client::call::<rpc::HostHeartbeat>(&self.nats, &hb, CALL_TIMEOUT).await?;
        for agent_id in reply.stop {
            if let Some(stop) = self.running().get(&agent_id) {
                tracing::warn!(
                    agent_id,
                    "the mesh ended this agent while its host was cut off; stopping its harness"
                );
                stop.now.notify_one();
            }
        }
        for agent_id in reply.abandon {
            if let Some(stop) = self.running().get(&agent_id) {
                tracing::warn!(
                    agent_id,
                    "this agent was re-homed while its host was cut off; killing its harness here"
                );
                stop.abandon.store(true, std::sync::atomic::Ordering::SeqCst);
                stop.now.notify_one();
            }
        }
        Ok(())
    }

    fn running(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Arc<Stop>>> {
        self.host
            .running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The machine's hostname.
fn hostname() -> String {
    match nix::unistd::gethostname().map(std::ffi::OsString::into_string) {
        Ok(Ok(name)) if !name.is_empty() => name,
        _ => "localhost".into(),
    }
}

/// Heartbeats every `heartbeat_ms`, and at once when the load changes.
async fn heartbeats(s: Spawner) {
    let every = Duration::from_millis(s.settings.heartbeat_ms.max(100));
    loop {
        if let Err(e) = s.heartbeat().await {
            tracing::warn!(error = %e, host = s.host.id, "heartbeat not taken by the registry");
        }
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = s.host.beat.notified() => {}
        }
    }
}

/// Removes the socket directories of harnesses that are gone (killed, crashed), at start and
/// every few minutes: one run by nobody's spawner is found too.
async fn sweep_socket_dirs() {
    loop {
        let removed = tokio::task::spawn_blocking(|| crate::socket_dir::sweep(&crate::socket_dir::base()))
            .await
            .unwrap_or(0);
        if removed > 0 {
            tracing::info!(removed, "socket directories of ended harnesses removed");
        }
        tokio::time::sleep(SWEEP_EVERY).await;
    }
}

const SWEEP_EVERY: Duration = Duration::from_secs(300);

pub async fn serve(spawner: Spawner) -> Result<ServiceHost<Spawner>, ServiceError> {
    tokio::spawn(sweep_socket_dirs());
    // The registry must know this host before it can place anything here; and the service shows
    // (`$SRV`) only once it is registered, so whoever waits for it finds `agent.spawn` served.
    let mut wait = Duration::from_millis(100);
    while let Err(e) = spawner.heartbeat().await {
        tracing::warn!(error = %e, retry_in = ?wait, "cannot register this host with the session registry yet");
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(Duration::from_secs(5));
    }
    let mut host = ServiceHost::start(
        spawner.nats.clone(),
        "agent-spawner",
        env!("CARGO_PKG_VERSION"),
        "starts agent CLIs under agent-harness processes on agent.spawn",
        spawner.clone(),
    )
    .await?;
    tokio::spawn(heartbeats(spawner.clone()));
    host.serve::<rpc::AgentSpawn>(spawn).await?;
    let own = rpc::instance_subject(<rpc::AgentSpawnOn as relay_contracts::Rpc>::SUBJECT, &spawner.host.id);
    host.serve_on::<rpc::AgentSpawnOn>(own, spawn_on).await?;
    host.open().await?;
    tracing::info!(host = spawner.host.id, labels = ?spawner.host.labels, "agent host registered");
    Ok(host)
}

/// How long a registry lookup may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// `agent.spawn`: checks a lead's right to spawn, has the registry place the agent, then
/// starts it here or hands it to the chosen host's spawner.
pub async fn spawn(s: Spawner, ctx: RequestContext, req: SpawnRequest) -> Result<SpawnResponse, HarnessError> {
    if let Some(name) = &req.agent_name
        && relay_contracts::session::handle_of(name).is_none()
    {
        return Err(HarnessError::Invalid(format!(
            "agentName {name:?} is the agent's handle: 1 to {} letters, digits, '-' or '_'",
            relay_contracts::session::MAX_HANDLE_CHARS
        )));
    }
    let spawned_by = match &ctx.agent {
        Some(lead) => Some(check_lead(&s, lead, &req).await?),
        None => None,
    };
    let place = PlaceRequest {
        cli: req.cli.clone(),
        placement: req.placement.clone(),
    };
    let host = relay_bus::client::call::<rpc::HostPlace>(&s.nats, &place, CALL_TIMEOUT)
        .await?
        .host_id;
    if host == s.host.id {
        return spawn_here(&s, ctx.workspace, req, spawned_by, None).await;
    }
    let timeout = Duration::from_millis(s.settings.attach_timeout_ms) + CALL_TIMEOUT;
    let placed = PlacedSpawn {
        spawn: req,
        spawned_by,
        rehome: None,
    };
    let subject = rpc::instance_subject(<rpc::AgentSpawnOn as relay_contracts::Rpc>::SUBJECT, &host);
    let spawned = relay_bus::client::request::<_, SpawnResponse>(&s.nats, &subject, &placed, timeout).await;
    spawned.map_err(|e| {
        let mut e = e;
        e.error.message = format!("host {host}: {}", e.error.message);
        HarnessError::from(e)
    })
}

/// `agent.spawnOn.<hostId>`: a spawn another spawner placed on this host, or a lost host's
/// agent the registry re-homed here.
async fn spawn_on(s: Spawner, ctx: RequestContext, placed: PlacedSpawn) -> Result<SpawnResponse, HarnessError> {
    spawn_here(&s, ctx.workspace, placed.spawn, placed.spawned_by, placed.rehome).await
}

/// Starts the agent on this host, waits for it to attach, sends the task. Either way the
/// registry hears this host's true load before the caller does (placement counted the spawn).
async fn spawn_here(
    s: &Spawner,
    workspace: String,
    req: SpawnRequest,
    spawned_by: Option<String>,
    rehome: Option<String>,
) -> Result<SpawnResponse, HarnessError> {
    let spawned = start_here(s, workspace, req, spawned_by, rehome).await;
    if spawned.is_err()
        && let Err(e) = s.heartbeat().await
    {
        tracing::warn!(error = %e, "the registry did not take this host's heartbeat yet");
    }
    spawned
}

async fn start_here(
    s: &Spawner,
    workspace: String,
    req: SpawnRequest,
    spawned_by: Option<String>,
    rehome: Option<String>,
) -> Result<SpawnResponse, HarnessError> {
    let agent = s.settings.agent(&req.cli).ok_or_else(|| {
        HarnessError::UnknownCli(format!(
            "no command for cli {:?}; configured: {}",
            req.cli,
            s.settings.known()
        ))
    })?;
    crate::structured::Protocol::parse(if agent.protocol.is_empty() {
        "pty"
    } else {
        &agent.protocol
    })
    .map_err(|e| HarnessError::Invalid(format!("spawner.agents.{}: {e}", req.cli)))?;
    let (sandbox, setting) = s.settings.sandbox_of(&req.cli, &agent).map_err(HarnessError::Invalid)?;
    sandbox.check(&setting).map_err(HarnessError::NotStarted)?;
    // The agent works under this host's roots only, in the directory the cwd resolves to (a
    // restart reuses it); none asked: its workspace's own.
    let data_dir = crate::containment::data_dir(&s.settings.data_dir);
    let cwd = crate::containment::confine_cwd(&data_dir, &s.settings.cwd_roots, &workspace, req.cwd.as_deref())
        .map_err(HarnessError::Invalid)?;
    let req = SpawnRequest {
        cwd: Some(cwd.to_string_lossy().into_owned()),
        ..req
    };
    let slot = s.slots.clone().try_acquire_owned().map_err(|_| {
        HarnessError::Busy(format!(
            "{} agents are running here, the configured maximum",
            s.settings.max_agents
        ))
    })?;
    let home = agent
        .home
        .as_deref()
        .map(|template| agent_home(template, &data_dir, &workspace, &req));
    let run = Run {
        req: req.clone(),
        agent,
        workspace,
        spawned_by,
        home,
    };
    let timeout = Duration::from_millis(s.settings.attach_timeout_ms);
    // A re-homed agent's harness binds to it again, in a new CLI session.
    let resume = rehome.map(|agent_id| Resume {
        agent_id,
        cli_session: None,
    });
    let mut harness = start_harness(s, &run, resume.as_ref()).await?;
    let agent_id = harness.agent_id.clone();
    tracing::info!(
        agent_id,
        session_id = req.session_id,
        cli = req.cli,
        host = s.host.id,
        rehomed = resume.is_some(),
        "agent spawned"
    );
    let stop = Arc::new(Stop::default());
    s.running().insert(agent_id.clone(), stop.clone());
    tokio::spawn(supervise(s.clone(), run, harness.take(), slot, stop));
    // The registry knows where it runs before anyone hears of it.
    if let Err(e) = s.heartbeat().await {
        tracing::warn!(agent_id, error = %e, "the registry did not take this host's heartbeat yet");
    }

    if let Some(task) = req.task {
        let send = SendMessageRequest {
            agent_ids: Some(AgentTargets::Ids(vec![agent_id.clone()])),
            // A spawn retried by the caller is a new agent; this id only guards the bus retry.
            message_id: Some(format!("{agent_id}-task")),
            ..SendMessageRequest::text(&req.session_id, task)
        };
        relay_bus::client::call::<rpc::SessionSendMessage>(&s.nats, &send, timeout).await?;
    }
    Ok(SpawnResponse {
        agent_id,
        host_id: Some(s.host.id.clone()),
    })
}

/// A harness spawning on its agent's behalf: the agent must declare AG-UI
/// `multiAgent.delegation` (its spawner entry's `delegate`), workers join its own session, and
/// it may have `max_workers_per_lead` live ones. Returns the lead's id.
async fn check_lead(s: &Spawner, lead: &str, req: &SpawnRequest) -> Result<String, HarnessError> {
    let me = relay_bus::client::call::<rpc::AgentGet>(&s.nats, &AgentGetRequest { agent: lead.into() }, CALL_TIMEOUT)
        .await?;
    let delegates = me
        .agent_capabilities
        .as_ref()
        .and_then(|c| c.multi_agent.as_ref())
        .and_then(|m| m.get("delegation"))
        .and_then(serde_json::Value::as_bool)
        == Some(true);
    if !delegates {
        return Err(HarnessError::Forbidden(format!(
            "agent {lead} may not spawn agents: it does not declare multiAgent.delegation (spawner.agents.<cli>.delegate)"
        )));
    }
    if me.session_id != req.session_id {
        return Err(HarnessError::Forbidden(format!(
            "agent {lead} may spawn workers only into its own session {}, not {}",
            me.session_id, req.session_id
        )));
    }
    let in_session = AgentListRequest {
        session_id: Some(req.session_id.clone()),
        limit: Some(500),
        ..AgentListRequest::default()
    };
    let live = relay_bus::client::call::<rpc::AgentList>(&s.nats, &in_session, CALL_TIMEOUT).await?;
    let workers = live
        .agents
        .iter()
        .filter(|a| a.spawned_by.as_deref() == Some(lead))
        .count();
    if workers >= s.settings.max_workers_per_lead {
        return Err(HarnessError::Forbidden(format!(
            "agent {lead} has {workers} live workers, the most spawner.max_workers_per_lead allows; stop one first"
        )));
    }
    Ok(lead.to_string())
}

/// What one spawn runs, kept to start it again after a crash.
struct Run {
    req: SpawnRequest,
    agent: AgentCommand,
    workspace: String,
    /// The lead whose harness asked for it.
    spawned_by: Option<String>,
    /// The CLI's home (`spawner.agents.<cli>.home`, resolved once: a restart uses it again).
    home: Option<String>,
}

/// `spawner.agents.<cli>.home` for one spawn: its placeholders replaced.
fn agent_home(template: &str, data_dir: &std::path::Path, workspace: &str, req: &SpawnRequest) -> String {
    // Only a valid handle names a directory (no `/`, no `..`); anything else gets a new id.
    let agent = req
        .agent_name
        .as_deref()
        .and_then(relay_contracts::session::handle_of)
        .unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string());
    template
        .replace("{data_dir}", &data_dir.to_string_lossy())
        .replace("{workspace}", workspace)
        .replace("{cli}", &req.cli)
        .replace("{agent}", &agent)
}

/// A harness that attached its agent.
struct Harness {
    agent_id: String,
    child: Option<tokio::process::Child>,
    lines: Option<tokio::io::Lines<BufReader<tokio::process::ChildStdout>>>,
    stdin: Option<tokio::process::ChildStdin>,
}

impl Harness {
    fn take(&mut self) -> Harness {
        Harness {
            agent_id: self.agent_id.clone(),
            child: self.child.take(),
            lines: self.lines.take(),
            stdin: self.stdin.take(),
        }
    }
}

/// Where a restarted harness picks up: the agent it binds to again and the CLI session.
struct Resume {
    agent_id: String,
    cli_session: Option<String>,
}

/// Starts `agent-harness … -- <command>` and waits until it has attached (or bound again to)
/// its agent.
async fn start_harness(s: &Spawner, run: &Run, resume: Option<&Resume>) -> Result<Harness, HarnessError> {
    let req = &run.req;
    let protocol = if run.agent.protocol.is_empty() {
        "pty"
    } else {
        &run.agent.protocol
    };
    let patterns = if run.agent.patterns.is_empty() {
        "generic"
    } else {
        &run.agent.patterns
    };
    let mut cmd = tokio::process::Command::new(&s.harness);
    cmd.args([
        "--session",
        &req.session_id,
        "--cli",
        patterns,
        "--adapter",
        &req.cli,
        "--protocol",
        protocol,
        "--stop-with-stdin",
    ]);
    if let Some(cwd) = &req.cwd {
        cmd.args(["--cwd", cwd]);
    }
    if let Some(home) = &run.home {
        cmd.args(["--home", home]);
    }
    if let Some(actions) = &run.agent.actions {
        cmd.arg("--actions").arg(actions);
    }
    if run.agent.delegate {
        cmd.arg("--delegate");
    }
    if let Some(capabilities) = &run.agent.capabilities {
        cmd.arg("--capabilities")
            .arg(serde_json::Value::Object(capabilities.clone()).to_string());
    }
    if let Ok((Sandbox::Bwrap, _)) = s.settings.sandbox_of(&req.cli, &run.agent) {
        let data_dir = crate::containment::data_dir(&s.settings.data_dir);
        let hidden = crate::sandbox::hidden_from_agents(
            &data_dir,
            &s.settings.cwd_roots,
            &s.settings.harness_signer,
            &s.settings.sandbox_hide,
        );
        cmd.args(["--sandbox", "bwrap"]);
        for path in hidden {
            cmd.arg("--sandbox-hide").arg(path);
        }
    }
    if let (Some(lead), None) = (&run.spawned_by, resume) {
        cmd.args(["--spawned-by", lead]);
    }
    // A restarted harness binds to its agent again, which keeps its handle.
    if let (Some(handle), None) = (&req.agent_name, resume) {
        cmd.args(["--handle", handle]);
    }
    // Kept on the agent, so that a re-homed one goes to a host that fits it too.
    if let (Some(placement), None) = (&req.placement, resume) {
        let json = serde_json::to_string(placement).map_err(|e| HarnessError::Invalid(e.to_string()))?;
        cmd.args(["--placement", &json]);
    }
    // The harness's own NATS identity, for its one agent (a new id, or the one it resumes).
    if let Some(signer) = &s.signer {
        let agent_id = resume.map_or_else(|| uuid::Uuid::new_v4().simple().to_string(), |r| r.agent_id.clone());
        let creds = signer
            .mint(&agent_id, &run.workspace)
            .map_err(|e| HarnessError::Invalid(e.to_string()))?;
        cmd.env("RELAY_NATS__CREDS", creds).env_remove("RELAY_NATS__CREDS_FILE");
    }
    if let Some(r) = resume {
        cmd.args(["--agent-id", &r.agent_id]);
        if let Some(cli_session) = &r.cli_session {
            cmd.args(["--resume", cli_session]);
        }
    }
    cmd.arg("--").args(&run.agent.command).envs(&run.agent.env);
    // The harness attaches in the trace of the spawn request.
    if let Some(tp) = relay_bus::trace::current_traceparent() {
        cmd.env(TRACEPARENT_ENV, tp);
    }
    // The harness reads its NATS and telemetry settings from the same environment and file.
    // Its stdin is a pipe nobody writes to: when this process ends, however it ends, the pipe
    // closes and the harness stops its agent and ends the session. Its own process group, so
    // what it leaves behind when it is killed can be killed with it.
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .process_group(0);
    let mut child = cmd
        .spawn()
        .map_err(|e| HarnessError::NotStarted(format!("cannot run the harness {}: {e}", s.harness.display())))?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let stdin = child.stdin.take().expect("stdin is piped");
    let mut lines = BufReader::new(stdout).lines();

    let timeout = Duration::from_millis(s.settings.attach_timeout_ms);
    let attached = tokio::time::timeout(timeout, async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(attach) = attach_outcome(&line) {
                return Some(attach);
            }
            println!("{line}");
        }
        None
    })
    .await;
    match attached {
        Ok(Some(Ok(agent_id))) => Ok(Harness {
            agent_id,
            child: Some(child),
            lines: Some(lines),
            stdin: Some(stdin),
        }),
        // The registry's own answer (a taken handle: conflict), not a harness that failed.
        Ok(Some(Err(refused))) => {
            let _ = child.wait().await;
            Err(HarnessError::Bus(refused))
        }
        Ok(None) => {
            let status = child.wait().await.map(|s| s.to_string()).unwrap_or_default();
            Err(HarnessError::NotStarted(format!(
                "the {} agent exited before attaching ({status})",
                req.cli
            )))
        }
        Err(_) => {
            let _ = child.kill().await;
            Err(HarnessError::NotStarted(format!(
                "the {} agent did not attach within {timeout:?}",
                req.cli
            )))
        }
    }
}

/// Keeps reading the harness's output (so it never blocks on a full pipe) until it exits.
/// A harness killed by a signal never ended its agent session: it is started again, bound to
/// the same agent and resuming the CLI's own session. The slot is given back at the end.
async fn supervise(
    s: Spawner,
    run: Run,
    mut harness: Harness,
    slot: tokio::sync::OwnedSemaphorePermit,
    stop: Arc<Stop>,
) {
    use std::os::unix::process::ExitStatusExt;
    let mut cli_session = None;
    let mut cli_pid = None;
    let mut restarts = 0;
    loop {
        let (Some(mut child), Some(mut lines)) = (harness.child.take(), harness.lines.take()) else {
            break;
        };
        // Its process group: the harness was started as its leader.
        let pgid = child.id();
        // Its log lines join the spawner's own log stream as they are. Told to stop, its stdin
        // closes: the harness stops its agent and exits.
        loop {
            tokio::select! {
                line = lines.next_line() => {
                    let Ok(Some(line)) = line else { break };
                    if let Some((id, pid)) = resumable(&line) {
                        cli_session = Some(id);
                        cli_pid = pid;
                    }
                    println!("{line}");
                }
                () = stop.now.notified(), if harness.stdin.is_some() => {
                    // Abandoned: killed before its stdin closes, so it cannot end the agent
                    // that now runs elsewhere.
                    if let (true, Some(pgid)) = (abandoned(&stop), pgid) {
                        kill_group(pgid);
                    }
                    drop(harness.stdin.take());
                }
            }
        }
        let status = child.wait().await;
        let agent_id = harness.agent_id.clone();
        tracing::info!(agent_id, ?status, "agent harness exited");
        // One killed by a signal could not remove its socket directory.
        tokio::task::spawn_blocking(|| crate::socket_dir::sweep(&crate::socket_dir::base()));
        let Some(signal) = status.ok().and_then(|s| s.signal()) else {
            break;
        };
        // What the killed harness left goes with it before the session is resumed. Its CLI
        // sees its stdin close and exits on its own once its transcript is written; only one
        // that does not is killed, with the commands its tools run (its process group).
        if let Some(pid) = cli_pid.take() {
            wait_gone(pid, Duration::from_secs(5)).await;
            kill_group(pid);
        }
        if let Some(pgid) = pgid {
            kill_group(pgid);
        }
        if abandoned(&stop) {
            break;
        }
        if restarts >= s.settings.max_restarts {
            tracing::error!(
                agent_id,
                signal,
                restarts,
                "agent harness killed again; not restarting it"
            );
            break;
        }
        restarts += 1;
        tracing::warn!(
            agent_id,
            signal,
            restarts,
            cli_session,
            "agent harness was killed; restarting it"
        );
        let resume = Resume {
            agent_id: agent_id.clone(),
            cli_session: cli_session.clone(),
        };
        match start_harness(&s, &run, Some(&resume)).await {
            Ok(h) => harness = h,
            Err(e) => {
                tracing::error!(agent_id, error = %e, "cannot restart the agent harness");
                break;
            }
        }
    }
    drop((slot, harness.stdin));
    s.running().remove(&harness.agent_id);
    s.host.beat.notify_one();
}

/// The CLI session id and the CLI's pid from the harness's `agent session resumable` line.
fn resumable(line: &str) -> Option<(String, Option<u32>)> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    if v["message"] != "agent session resumable" {
        return None;
    }
    let session = v["cliSession"].as_str()?.to_string();
    Some((session, v["cliPid"].as_u64().map(|p| p as u32)))
}

/// Whether the registry moved this harness's agent to another host.
fn abandoned(stop: &Stop) -> bool {
    stop.abandon.load(std::sync::atomic::Ordering::SeqCst)
}

/// SIGKILL to a process group, if it still exists.
fn kill_group(pgid: u32) {
    // A process group this spawner's harness created.
    if let Some(pgid) = child_pid(pgid) {
        let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
    }
}

/// Waits (polling) until `pid` no longer exists, at most `limit`.
async fn wait_gone(pid: u32, limit: Duration) {
    let deadline = tokio::time::Instant::now() + limit;
    // No signal: kill(2) only checks that the process exists.
    while child_pid(pid).is_some_and(|p| nix::sys::signal::kill(p, None).is_ok())
        && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The agent id from the harness's `agent session attached` line, or the registry's refusal
/// from its `agent session not attached` line.
fn attach_outcome(line: &str) -> Option<Result<String, WireError>> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    if v["message"] == crate::handover::ATTACH_REFUSED {
        return serde_json::from_value(v["error"].clone()).ok().map(Err);
    }
    (v["message"] == "agent session attached")
        .then(|| v["agentId"].as_str().map(|id| Ok(id.to_string())))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agents_home_replaces_the_placeholders_and_never_takes_a_path_from_the_handle() {
        let req = |name: Option<&str>| SpawnRequest {
            agent_name: name.map(String::from),
            ..serde_json::from_value(serde_json::json!({"sessionId": "s1", "cli": "claude"})).unwrap()
        };
        let data = std::path::Path::new("/d");
        let template = "{data_dir}/homes/{workspace}/{cli}/{agent}";
        assert_eq!(
            agent_home(template, data, "w1", &req(Some("@Bob"))),
            "/d/homes/w1/claude/bob"
        );
        let escaped = agent_home(template, data, "w1", &req(Some("../../etc")));
        assert!(
            escaped.starts_with("/d/homes/w1/claude/") && !escaped.contains(".."),
            "{escaped}"
        );
        assert_eq!(
            agent_home("{data_dir}/homes/{workspace}/{cli}", data, "w1", &req(None)),
            "/d/homes/w1/claude"
        );
    }

    #[test]
    fn the_attach_line_gives_the_agent_id_or_the_refusal_and_log_lines_do_not() {
        let line = r#"{"message":"agent session attached","agentId":"a-1","sessionId":"s"}"#;
        assert_eq!(attach_outcome(line), Some(Ok("a-1".to_string())));
        let refused = WireError::new(relay_contracts::ErrorCode::Conflict, "handle @bob is taken");
        let line = serde_json::json!({"message": crate::handover::ATTACH_REFUSED, "error": refused}).to_string();
        assert_eq!(attach_outcome(&line), Some(Err(refused)));
        assert_eq!(attach_outcome(r#"{"message":"starting","agentId":"a-1"}"#), None);
        assert_eq!(attach_outcome("Welcome to claude"), None);
    }

    /// `make run` and the compose cluster run the demo config: no cli the spawner knows may
    /// start a real CLI there (with the user's HOME, credentials and bill).
    #[test]
    fn the_demo_config_runs_every_known_cli_as_the_fake_agent() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../deploy/compose/spawner.toml");
        let s: crate::Settings = relay_bus::settings::load_from(Some(path), Some(Default::default())).unwrap();
        for cli in SpawnerSettings::default().agents.keys() {
            let agent = s.spawner.agent(cli).unwrap_or_else(|| panic!("{cli} has no command"));
            assert_eq!(agent.command[0], "fake-agent", "{cli} runs {:?}", agent.command);
        }
        assert_eq!(s.spawner.agent("claude-tui").unwrap().patterns, "claude");
    }

    #[test]
    fn the_example_config_file_loads_with_the_default_spawner_settings() {
        let s: crate::Settings = relay_bus::settings::load_example().unwrap();
        let d = SpawnerSettings::default();
        assert_eq!(s.spawner.commands, d.commands);
        assert_eq!(s.spawner.agents, d.agents);
        assert_eq!(s.spawner.max_restarts, d.max_restarts);
        assert_eq!(s.spawner.max_agents, d.max_agents);
        assert_eq!(s.spawner.attach_timeout_ms, d.attach_timeout_ms);
        assert_eq!(s.spawner.harness_bin, d.harness_bin);
        assert_eq!(s.spawner.data_dir, d.data_dir);
        assert_eq!(s.spawner.cwd_roots, d.cwd_roots);
        assert_eq!(s.spawner.sandbox, d.sandbox);
        assert_eq!(s.spawner.sandbox_hide, d.sandbox_hide);
    }
}
