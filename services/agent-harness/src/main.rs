//! `agent-harness [--session ID] [--cli claude|codex|gemini|generic] [--adapter NAME] [--cwd DIR] [--home DIR] [--protocol P] [--agent-id ID --resume CLI_SESSION] [--delegate] [--capabilities JSON] [--spawned-by AGENT] [--placement JSON] [--actions FILE] [--sandbox none|bwrap [--sandbox-hide PATH]…] [--stop-with-stdin] -- COMMAND [ARGS…]`
//!
//! Runs COMMAND under a PTY as one agent session of relay session ID: attaches it with its
//! capabilities, types delivered messages into it, turns its output into events, and answers
//! its permission prompts and questions with the permission manager's decisions. SIGTERM or
//! SIGINT (or, with `--stop-with-stdin`, standard input closing) stops the command and ends
//! the agent session in the registry before exiting.

use agent_harness::{HarnessSettings, Settings};
use clap::Parser;

fn main() -> Result<(), relay_bus::BoxError> {
    // First, so that --help and --version answer without a configuration.
    let args = Args::parse();
    let mut settings: Settings = relay_bus::settings::load()?;
    args.apply(&mut settings.harness)?;
    // The bus credentials stay here: read above, then gone from the environment every child
    // (the CLI, its tools' commands) inherits, and this process's memory and /proc files
    // closed to other processes of the same user.
    agent_harness::containment::keep_credentials_to_this_process();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run(settings))
}

async fn run(settings: Settings) -> Result<(), relay_bus::BoxError> {
    let _telemetry = relay_bus::telemetry::init("agent-harness", &settings.telemetry)?;
    // Its calls come from its agent (named once it attached), not from a service.
    relay_bus::context::set_identity(relay_bus::Caller::Agent(None));
    let nats = relay_bus::connect_nats(&settings.nats, "agent-harness").await?;
    let code = agent_harness::run(nats, settings.harness).await?;
    std::process::exit(code as i32);
}

/// Command-line flags override the configuration; everything after `--` is the command.
#[derive(Parser)]
#[command(
    name = "agent-harness",
    version,
    // As before clap: a repeated flag's last value wins.
    args_override_self = true,
    about = "Runs COMMAND under a PTY (or a structured protocol) as one agent session of the relay."
)]
struct Args {
    /// The relay session to attach to (created when missing).
    #[arg(long = "session", value_name = "ID", allow_hyphen_values = true)]
    session_id: Option<String>,
    /// Which output patterns to use: claude, codex, gemini or generic.
    #[arg(long, value_name = "NAME", allow_hyphen_values = true)]
    cli: Option<String>,
    /// The adapter name the agent is attached as (default: the cli).
    #[arg(long, value_name = "NAME", allow_hyphen_values = true)]
    adapter: Option<String>,
    #[arg(long, value_name = "DIR", allow_hyphen_values = true)]
    cwd: Option<String>,
    /// A CLI home the harness prepares and runs the CLI with.
    #[arg(long, value_name = "DIR", allow_hyphen_values = true)]
    home: Option<String>,
    /// pty, claude-stream-json, codex-app-server or acp.
    #[arg(long, value_name = "P", allow_hyphen_values = true)]
    protocol: Option<String>,
    /// Bind to this agent again instead of attaching a new one (with --resume).
    #[arg(long, value_name = "ID", allow_hyphen_values = true)]
    agent_id: Option<String>,
    #[arg(long, value_name = "HANDLE", allow_hyphen_values = true)]
    handle: Option<String>,
    /// The CLI's own session to continue.
    #[arg(long = "resume", value_name = "CLI_SESSION", allow_hyphen_values = true)]
    cli_session: Option<String>,
    /// Stop (as on SIGTERM) when standard input closes.
    #[arg(long)]
    stop_with_stdin: bool,
    /// The agent may spawn and stop workers in its session.
    #[arg(long)]
    delegate: bool,
    /// AG-UI capability additions, a JSON object.
    #[arg(long, value_name = "JSON", allow_hyphen_values = true)]
    capabilities: Option<String>,
    /// The lead agent whose `agent.spawn` started this one.
    #[arg(long, value_name = "AGENT", allow_hyphen_values = true)]
    spawned_by: Option<String>,
    /// The placement its spawner placed it with, as JSON.
    #[arg(long, value_name = "JSON", value_parser = placement, allow_hyphen_values = true)]
    placement: Option<relay_contracts::hosts::Placement>,
    /// A JSON file of the actions this agent exposes.
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    actions: Option<String>,
    /// none (default) or bwrap.
    #[arg(long, value_name = "none|bwrap", allow_hyphen_values = true)]
    sandbox: Option<String>,
    /// What the sandbox hides besides /tmp and the other agents' sockets (repeated).
    #[arg(long = "sandbox-hide", value_name = "PATH", allow_hyphen_values = true)]
    sandbox_hide: Vec<String>,
    /// The command and its arguments (else `harness.command` in the configuration).
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

fn placement(json: &str) -> Result<relay_contracts::hosts::Placement, String> {
    serde_json::from_str(json).map_err(|e| e.to_string())
}

impl Args {
    fn apply(self, h: &mut HarnessSettings) -> Result<(), String> {
        h.session_id = self.session_id.or(h.session_id.take());
        h.adapter = self.adapter.or(h.adapter.take());
        h.cwd = self.cwd.or(h.cwd.take());
        h.home = self.home.or(h.home.take());
        h.agent_id = self.agent_id.or(h.agent_id.take());
        h.handle = self.handle.or(h.handle.take());
        h.cli_session = self.cli_session.or(h.cli_session.take());
        h.capabilities = self.capabilities.or(h.capabilities.take());
        h.spawned_by = self.spawned_by.or(h.spawned_by.take());
        h.actions = self.actions.or(h.actions.take());
        h.cli = self.cli.unwrap_or(std::mem::take(&mut h.cli));
        h.protocol = self.protocol.unwrap_or(std::mem::take(&mut h.protocol));
        h.sandbox = self.sandbox.unwrap_or(std::mem::take(&mut h.sandbox));
        h.placement = self.placement.or(h.placement.take());
        h.sandbox_hide.extend(self.sandbox_hide);
        h.stop_with_stdin |= self.stop_with_stdin;
        h.delegate |= self.delegate;
        if !self.command.is_empty() {
            h.command = self.command;
        }
        if h.command.is_empty() {
            return Err(
                "no command to run: agent-harness … -- COMMAND [ARGS…] (or harness.command in the configuration)"
                    .into(),
            );
        }
        Ok(())
    }
}
