//! `agent-harness [--session ID] [--cli claude|codex|gemini|generic] [--adapter NAME] [--cwd DIR] [--home DIR] [--protocol P] [--agent-id ID --resume CLI_SESSION] [--delegate] [--capabilities JSON] [--spawned-by AGENT] [--placement JSON] [--actions FILE] [--sandbox none|bwrap [--sandbox-hide PATH]…] [--stop-with-stdin] -- COMMAND [ARGS…]`
//!
//! Runs COMMAND under a PTY as one agent session of relay session ID: attaches it with its
//! capabilities, types delivered messages into it, turns its output into events, and answers
//! its permission prompts and questions with the permission manager's decisions. SIGTERM or
//! SIGINT (or, with `--stop-with-stdin`, standard input closing) stops the command and ends
//! the agent session in the registry before exiting.

use agent_harness::{HarnessSettings, Settings};

fn main() -> Result<(), relay_bus::BoxError> {
    let mut settings: Settings = relay_bus::settings::load()?;
    apply_args(&mut settings.harness, std::env::args().skip(1))?;
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
fn apply_args(h: &mut HarnessSettings, mut args: impl Iterator<Item = String>) -> Result<(), String> {
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--session" => h.session_id = Some(value("--session")?),
            "--cli" => h.cli = value("--cli")?,
            "--adapter" => h.adapter = Some(value("--adapter")?),
            "--cwd" => h.cwd = Some(value("--cwd")?),
            "--home" => h.home = Some(value("--home")?),
            "--protocol" => h.protocol = value("--protocol")?,
            "--agent-id" => h.agent_id = Some(value("--agent-id")?),
            "--handle" => h.handle = Some(value("--handle")?),
            "--resume" => h.cli_session = Some(value("--resume")?),
            "--stop-with-stdin" => h.stop_with_stdin = true,
            "--delegate" => h.delegate = true,
            "--capabilities" => h.capabilities = Some(value("--capabilities")?),
            "--spawned-by" => h.spawned_by = Some(value("--spawned-by")?),
            "--placement" => {
                let json = value("--placement")?;
                let placement = serde_json::from_str(&json).map_err(|e| format!("--placement {json}: {e}"))?;
                h.placement = Some(placement);
            }
            "--actions" => h.actions = Some(value("--actions")?),
            "--sandbox" => h.sandbox = value("--sandbox")?,
            "--sandbox-hide" => h.sandbox_hide.push(value("--sandbox-hide")?),
            "--" => {
                h.command = args.collect();
                break;
            }
            other => {
                return Err(format!(
                    "unknown argument {other}; usage: agent-harness [--session ID] [--cli NAME] [--adapter NAME] [--cwd DIR] [--home DIR] [--protocol pty|claude-stream-json|codex-app-server|acp] [--agent-id ID --resume CLI_SESSION] [--delegate] [--capabilities JSON] [--spawned-by AGENT] [--placement JSON] [--actions FILE] [--sandbox none|bwrap [--sandbox-hide PATH]…] [--stop-with-stdin] -- COMMAND [ARGS…]"
                ));
            }
        }
    }
    if h.command.is_empty() {
        return Err(
            "no command to run: agent-harness … -- COMMAND [ARGS…] (or harness.command in the configuration)".into(),
        );
    }
    Ok(())
}
