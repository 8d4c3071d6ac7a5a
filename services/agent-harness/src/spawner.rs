//! `agent.spawn`: starts an agent CLI under its own agent-harness process, for the gateway's
//! `POST /api/v1/sessions` with `cli` (seed 003 §2.1).
//!
//! Each spawn is a child process `agent-harness --session … --cli … -- <command>`, so an agent
//! that crashes takes nothing else down. The reply waits until the harness has attached the agent
//! to the session (it prints the agent id), then the task is sent as the first message. The
//! spawner is a queue-group service: run it on every machine that may host agents.

use crate::HarnessError;
use relay_bus::service::{ServiceError, ServiceHost};
use relay_contracts::delivery::{SpawnRequest, SpawnResponse};
use relay_contracts::session::{AgentTargets, SendMessageRequest, SendMessageResponse};
use relay_contracts::subjects;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::Semaphore;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct SpawnerSettings {
    /// The command (program and arguments) each `cli` runs.
    pub commands: BTreeMap<String, Vec<String>>,
    /// The agent-harness binary; empty: the one beside this executable.
    pub harness_bin: String,
    /// Agents this spawner runs at once; past it, `agent.spawn` answers `unavailable`.
    pub max_agents: usize,
    /// How long an agent may take to attach before the spawn fails and it is killed.
    pub attach_timeout_ms: u64,
}

impl Default for SpawnerSettings {
    fn default() -> Self {
        let command = |argv: &[&str]| argv.iter().map(|s| s.to_string()).collect();
        SpawnerSettings {
            commands: BTreeMap::from([
                ("claude".into(), command(&["claude"])),
                ("codex".into(), command(&["codex"])),
                ("gemini".into(), command(&["gemini"])),
                ("aider".into(), command(&["aider"])),
                ("goose".into(), command(&["goose", "session"])),
            ]),
            harness_bin: String::new(),
            max_agents: 16,
            attach_timeout_ms: 30_000,
        }
    }
}

#[derive(Clone)]
pub struct Spawner {
    nats: async_nats::Client,
    settings: Arc<SpawnerSettings>,
    harness: PathBuf,
    slots: Arc<Semaphore>,
}

impl Spawner {
    pub fn new(nats: async_nats::Client, settings: SpawnerSettings) -> std::io::Result<Spawner> {
        let harness = if settings.harness_bin.is_empty() {
            std::env::current_exe()?.with_file_name("agent-harness")
        } else {
            PathBuf::from(&settings.harness_bin)
        };
        Ok(Spawner {
            nats,
            slots: Arc::new(Semaphore::new(settings.max_agents)),
            settings: Arc::new(settings),
            harness,
        })
    }
}

pub async fn serve(spawner: Spawner) -> Result<ServiceHost, ServiceError> {
    let mut host = ServiceHost::start(
        spawner.nats.clone(),
        "agent-spawner",
        env!("CARGO_PKG_VERSION"),
        "starts agent CLIs under agent-harness processes on agent.spawn",
    )
    .await?;
    host.endpoint(subjects::agent::SPAWN, spawner, spawn).await?;
    Ok(host)
}

/// Starts the agent, waits for it to attach, sends the task; the reply is its agent id.
pub async fn spawn(s: Spawner, req: SpawnRequest) -> Result<SpawnResponse, HarnessError> {
    let command = s
        .settings
        .commands
        .get(&req.cli)
        .filter(|c| !c.is_empty())
        .ok_or_else(|| {
            let known: Vec<&str> = s.settings.commands.keys().map(String::as_str).collect();
            HarnessError::Invalid(format!(
                "no command for cli {:?}; configured: {}",
                req.cli,
                known.join(", ")
            ))
        })?;
    if let Some(cwd) = &req.cwd
        && !std::path::Path::new(cwd).is_dir()
    {
        return Err(HarnessError::Invalid(format!(
            "cwd {cwd} is not a directory on the agent host"
        )));
    }
    let slot = s.slots.clone().try_acquire_owned().map_err(|_| {
        HarnessError::Busy(format!(
            "{} agents are running here, the configured maximum",
            s.settings.max_agents
        ))
    })?;
    // Output patterns: the three CLIs the parser knows, generic for the others.
    let patterns = match req.cli.as_str() {
        cli @ ("claude" | "codex" | "gemini") => cli,
        _ => "generic",
    };
    let mut cmd = tokio::process::Command::new(&s.harness);
    cmd.args([
        "--session",
        &req.session_id,
        "--cli",
        patterns,
        "--adapter",
        &req.cli,
        "--stop-with-stdin",
    ]);
    if let Some(cwd) = &req.cwd {
        cmd.args(["--cwd", cwd]);
    }
    cmd.arg("--").args(command);
    // The harness reads its NATS and telemetry settings from the same environment and file.
    // Its stdin is a pipe nobody writes to: when this process ends, however it ends, the pipe
    // closes and the harness stops its agent and ends the session.
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut child = cmd
        .spawn()
        .map_err(|e| HarnessError::NotStarted(format!("cannot run the harness {}: {e}", s.harness.display())))?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let stdin = child.stdin.take().expect("stdin is piped");
    let mut lines = BufReader::new(stdout).lines();

    let timeout = Duration::from_millis(s.settings.attach_timeout_ms);
    let attached = tokio::time::timeout(timeout, async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(id) = attached_agent(&line) {
                return Some(id);
            }
        }
        None
    })
    .await;
    let agent_id = match attached {
        Ok(Some(id)) => id,
        Ok(None) => {
            let status = child.wait().await.map(|s| s.to_string()).unwrap_or_default();
            return Err(HarnessError::NotStarted(format!(
                "the {} agent exited before attaching ({status})",
                req.cli
            )));
        }
        Err(_) => {
            let _ = child.kill().await;
            return Err(HarnessError::NotStarted(format!(
                "the {} agent did not attach within {timeout:?}",
                req.cli
            )));
        }
    };
    tracing::info!(agent_id, session_id = req.session_id, cli = req.cli, "agent spawned");

    // Keep reading the harness's output (so it never blocks on a full pipe) until it exits,
    // then give the slot back.
    let id = agent_id.clone();
    tokio::spawn(async move {
        // Its log lines join the spawner's own log stream as they are.
        while let Ok(Some(line)) = lines.next_line().await {
            println!("{line}");
        }
        let status = child.wait().await.map(|s| s.to_string()).unwrap_or_default();
        tracing::info!(agent_id = id, %status, "agent harness exited");
        drop((slot, stdin));
    });

    if let Some(task) = req.task {
        let send = SendMessageRequest {
            agent_ids: Some(AgentTargets::Ids(vec![agent_id.clone()])),
            // A spawn retried by the caller is a new agent; this id only guards the bus retry.
            message_id: Some(format!("{agent_id}-task")),
            ..SendMessageRequest::text(&req.session_id, task)
        };
        let _: SendMessageResponse =
            relay_bus::client::request(&s.nats, subjects::session::SEND_MESSAGE, &send, timeout).await?;
    }
    Ok(SpawnResponse { agent_id })
}

/// The agent id from the harness's `agent session attached` line.
fn attached_agent(line: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    (v["message"] == "agent session attached")
        .then(|| v["agentId"].as_str().map(String::from))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_attach_line_gives_the_agent_id_and_log_lines_do_not() {
        let line = r#"{"message":"agent session attached","agentId":"a-1","sessionId":"s"}"#;
        assert_eq!(attached_agent(line).as_deref(), Some("a-1"));
        assert_eq!(attached_agent(r#"{"message":"starting","agentId":"a-1"}"#), None);
        assert_eq!(attached_agent("Welcome to claude"), None);
    }

    #[test]
    fn the_example_config_file_loads_with_the_default_spawner_settings() {
        let s: crate::Settings = relay_bus::settings::load_example().unwrap();
        let d = SpawnerSettings::default();
        assert_eq!(s.spawner.commands, d.commands);
        assert_eq!(s.spawner.max_agents, d.max_agents);
        assert_eq!(s.spawner.attach_timeout_ms, d.attach_timeout_ms);
        assert_eq!(s.spawner.harness_bin, d.harness_bin);
    }
}
