//! The agent harness: a command under a PTY, bound to the bus as one agent session.
//!
//! - parse.rs: per-CLI output patterns (seed 003 §1.6, §6.3) and the fake agent's formats;
//! - session.rs: the PTY agent as a seed-001 `AgentSession` (typing messages at their
//!   boundary, permission prompts and questions);
//! - driver.rs: what each driver implements and shares (the `Driver` trait, capabilities),
//!   importing nothing of run.rs;
//! - run.rs: the orchestrator: attach, route decisions, pump output, exit;
//! - handover.rs: what a harness and its spawner tell each other; env.rs: a CLI's environment;
//! - error.rs: the one error type, mapped once to the wire;
//! - spawner.rs: the `agent-spawner` binary's `agent.spawn`, one harness process per agent.

pub mod containment;
pub mod discovery;
mod driver;
mod env;
mod error;
mod handover;
pub mod homes;
pub mod parse;
mod prompts;
pub mod relay;
mod run;
pub mod sandbox;
mod screen;
mod session;
mod socket_dir;
pub mod spawner;
pub mod structured;

pub use driver::capabilities;
pub use error::HarnessError;
pub use run::run;

use relay_bus::settings::{NatsSettings, TelemetrySettings};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    pub nats: NatsSettings,
    pub telemetry: TelemetrySettings,
    pub harness: HarnessSettings,
    /// Only read by `agent-spawner`.
    pub spawner: spawner::SpawnerSettings,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct HarnessSettings {
    /// The relay session to attach to (created when missing); a new id when unset.
    pub session_id: Option<String>,
    /// Which output patterns to use: claude, codex, gemini or generic.
    pub cli: String,
    /// The adapter name the agent is attached as (default: `cli`).
    pub adapter: Option<String>,
    pub cwd: Option<String>,
    /// A CLI home the harness prepares (homes.rs: onboarding done, the cwd trusted, telemetry
    /// off) and runs the CLI with (`HOME`, Codex's `CODEX_HOME`); unset: the CLI uses the
    /// harness's own `HOME` as it is. The spawner sets it from `spawner.agents.<cli>.home`.
    pub home: Option<String>,
    /// How to talk to the CLI: pty, claude-stream-json, codex-app-server or acp.
    pub protocol: String,
    /// Bind to this agent again instead of attaching a new one (a restart after a crash).
    pub agent_id: Option<String>,
    /// The handle to attach with; a free default from the adapter's name when unset.
    pub handle: Option<String>,
    /// The CLI's own session to continue (structured protocols).
    pub cli_session: Option<String>,
    /// The agent may delegate: it declares AG-UI `multiAgent.delegation`, so it may spawn and
    /// stop workers in its session (the `relay_map_reduce` tool). Set per CLI by the spawner's
    /// `delegate`.
    pub delegate: bool,
    /// AG-UI capability additions (a JSON object of seed 004 categories) merged over what the
    /// harness derives from its path (discovery.rs); the spawner's `capabilities` per CLI.
    pub capabilities: Option<String>,
    /// The lead agent whose `agent.spawn` started this one (the spawner sets it).
    pub spawned_by: Option<String>,
    /// The placement its spawner placed it with (the spawner sets it; `--placement JSON`).
    pub placement: Option<relay_contracts::hosts::Placement>,
    /// A JSON file of the actions this agent exposes (`[{name, description?, inputSchema,
    /// availableTo?}]`, as `action.expose` takes them): the harness declares `actions.expose`,
    /// exposes them once attached, and surfaces each call to the CLI, which answers with
    /// `relay_answer`. Set per CLI by the spawner's `actions`.
    pub actions: Option<String>,
    /// The command and its arguments (the command line's `-- COMMAND …` wins).
    pub command: Vec<String>,
    /// Give the CLI the relay tools (`relay_send`, `relay_reply`, `relay_inbox`, `relay_who`,
    /// `relay_channels`, `relay_actions`, `relay_invoke`, `relay_answer`, `relay_vote`, `relay_map_reduce`) as an MCP server, where we know how to configure its MCP servers
    /// (claude, codex, gemini); other CLIs use the output convention (`->relay:@bob text`).
    pub relay_tools: bool,
    /// The `relay-mcp` bridge the CLI starts; by default the one beside this harness binary.
    pub relay_mcp: Option<String>,
    /// Per-CLI pattern overrides: `[harness.patterns.claude] permission = "…"`.
    pub patterns: BTreeMap<String, parse::PatternSet>,
    /// `bwrap`: the CLI runs inside bubblewrap (see `sandbox`); `none` (default): as it is.
    /// The spawner sets it from `spawner.sandbox` (`--sandbox`).
    pub sandbox: String,
    /// What the sandbox hides from the CLI besides /tmp and the other agents' sockets (the
    /// spawner's files, the workspaces' directories; `--sandbox-hide PATH`, repeated).
    pub sandbox_hide: Vec<String>,
    /// `--stop-with-stdin`: stop (as on SIGTERM) when standard input closes. The spawner holds
    /// the other end, so its harnesses stop with it however it ends, kill -9 included.
    #[serde(skip)]
    pub stop_with_stdin: bool,
}

impl Default for HarnessSettings {
    fn default() -> Self {
        HarnessSettings {
            session_id: None,
            cli: "generic".into(),
            adapter: None,
            cwd: None,
            home: None,
            protocol: "pty".into(),
            agent_id: None,
            handle: None,
            cli_session: None,
            delegate: false,
            capabilities: None,
            spawned_by: None,
            placement: None,
            actions: None,
            command: Vec::new(),
            relay_tools: true,
            relay_mcp: None,
            patterns: BTreeMap::new(),
            sandbox: "none".into(),
            sandbox_hide: Vec::new(),
            stop_with_stdin: false,
        }
    }
}
