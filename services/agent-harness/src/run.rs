//! Wires one PTY agent to the bus: attach, decisions, output, exit.

use crate::HarnessSettings;
use crate::driver::{Driver, capabilities};
use crate::env::cli_var;
use crate::error::HarnessError;
use crate::handover::{ATTACH_REFUSED, announce_resumable};
use crate::parse::{Keys, PatternSet};
use crate::prompts::Prompts;
use crate::screen::Screen;
use crate::session::{PtyAgent, Spawn};
use crate::structured::{Launch, Protocol, StructuredAgent};
use futures::StreamExt;
use futures::future::BoxFuture;
use relay_contracts::actions::{ActionSpec, ExposeRequest};
use relay_contracts::capabilities::*;
use relay_contracts::permission::{Decision, PermissionDecision, QuestionAnswer};
use relay_contracts::rpc;
use relay_contracts::session::AgentSelection;
use relay_contracts::session::AgentStatus;
use relay_contracts::{ErrorCode, WireError};
use relay_harness::{AttachOptions, Binding};
use std::sync::Arc;
use tracing::Instrument;

/// The actions of `--actions FILE`.
fn load_actions(path: &str) -> Result<Vec<ActionSpec>, HarnessError> {
    let text = std::fs::read_to_string(path).map_err(|e| HarnessError::Invalid(format!("--actions {path}: {e}")))?;
    serde_json::from_str(&text).map_err(|e| {
        HarnessError::Invalid(format!(
            "--actions {path}: not a list of actions ({e}); each is {{name, description?, inputSchema, availableTo?}}"
        ))
    })
}

/// Runs until the command exits or the session is released; returns the command's exit code.
pub async fn run(nats: async_nats::Client, h: HarnessSettings) -> Result<u32, HarnessError> {
    let protocol = Protocol::parse(&h.protocol).map_err(HarnessError::Invalid)?;
    let prompts = Arc::new(Prompts::new(nats.clone()));
    let (program, args) = h.command.split_first().expect("command checked at start");
    // Removed when this returns, whichever way (every exit of the harness but a kill comes back
    // through here; the spawner sweeps what a killed one left).
    let socket_dir = crate::socket_dir::SocketDir::new();
    let socket = socket_dir.socket();
    let listener = crate::relay::bind(&socket)?;
    let mut args = args.to_vec();
    let mut env = Vec::new();
    // Held until this function returns: what was written for the CLI goes with the harness.
    let mut _written = None;
    let mut tools_given = false;
    if h.relay_tools {
        let given = crate::relay::cli_setup(&h.cli, &relay_mcp(&h), &socket);
        tools_given = given.gives_tools();
        args.extend(given.args);
        env = given.env;
        _written = given.written;
    }
    // A home of its own, prepared so the CLI starts with no one at its terminal.
    if let Some(home) = &h.home {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let prepared = crate::homes::prepare(&h.cli, std::path::Path::new(home), &cli_cwd(&h)?, &var);
        env.extend(prepared.map_err(HarnessError::Invalid)?);
    }
    // In the sandbox (spawner.sandbox) the CLI reaches only its cwd, home and socket.
    let sandbox = crate::sandbox::Sandbox::parse(&h.sandbox, "harness.sandbox").map_err(HarnessError::Invalid)?;
    let jail = || jail(&h, &socket, program, &env, protocol != Protocol::Pty);
    let (program, args) = crate::sandbox::wrap(sandbox, jail, program, args).map_err(HarnessError::Invalid)?;
    let (program, args) = (&program, &args[..]);
    if protocol == Protocol::Pty {
        let patterns = PatternSet::builtin(&h.cli).merged(&h.patterns.get(&h.cli).cloned().unwrap_or_default());
        let mut screen = Screen::new(&patterns, ROWS, COLS).map_err(HarnessError::Patterns)?;
        if h.cli_session.is_some() {
            screen.resuming();
        }
        let screen = Arc::new(std::sync::Mutex::new(screen));
        let (outputs, output_seen) = tokio::sync::watch::channel(0u64);
        // A CLI that takes a session id of ours can be resumed by a restarted harness.
        let (cli_session, session_args) = patterns.session(h.cli_session.as_deref());
        let spawn = Spawn {
            program: program.clone(),
            args: args.iter().cloned().chain(session_args).collect(),
            cwd: h.cwd.clone(),
            rows: ROWS,
            cols: COLS,
            env: env.clone(),
        };
        let (agent, output, exit) = PtyAgent::spawn(
            &spawn,
            nats.clone(),
            prompts.clone(),
            screen.clone(),
            output_seen,
            Keys::from(&patterns),
        )?;
        if tools_given {
            agent.wait_for_tools(TOOLS_LISTED_WITHIN);
        }
        let pump = pty_pump(agent.clone(), screen, outputs, output, exit);
        let caps = capabilities(patterns.observes_usage());
        if cli_session.is_none() && h.cli == "codex" && h.cli_session.is_none() {
            // Codex names its own thread: found in its session files once it writes them.
            let cwd = cli_cwd(&h).ok().map(|d| d.display().to_string());
            let codex_home = cli_var(&env, "CODEX_HOME")
                .map(std::path::PathBuf::from)
                .or_else(|| cli_var(&env, "HOME").map(|h| std::path::PathBuf::from(h).join(".codex")));
            tokio::spawn(announce_codex_thread(codex_home, cwd.unwrap_or_default(), agent.pid));
        }
        let resumable = cli_session.map(|id| (id, agent.pid));
        serve_relay_tools(listener, &nats, &agent, agent.pid);
        return drive(nats, h, agent, pump, prompts, caps, resumable).await;
    }
    let cwd = cli_cwd(&h)?.to_string_lossy().into_owned();
    // Gemini CLI over ACP: usage from its log of every request (beside the tools socket).
    let usage_feed =
        (protocol == Protocol::Acp && h.cli == "gemini").then(|| socket.with_file_name("gemini-usage.fifo"));
    if let Some(feed) = &usage_feed {
        env.extend(crate::structured::gemini_usage_env(feed));
    }
    let launch = Launch {
        protocol,
        program: program.clone(),
        args: args.to_vec(),
        cwd,
        resume: h.cli_session.clone(),
        env,
        usage_feed,
    };
    let (agent, pump) = StructuredAgent::spawn(launch, nats.clone(), prompts.clone())?;
    serve_relay_tools(listener, &nats, &agent, agent.pid());
    // A structured CLI says it is resumable once its protocol names its session.
    drive(nats, h, agent, pump, prompts, crate::structured::capabilities(), None).await
}

/// What the sandboxed CLI may reach: its cwd (this process's when none is set), its homes,
/// its tools socket's directory; what it may not: the spawner's list, where it exists.
/// `piped`: a CLI on stdio gets a session of its own (a PTY CLI keeps its PTY's).
fn jail(
    h: &HarnessSettings,
    socket: &std::path::Path,
    program: &str,
    env: &[(String, String)],
    piped: bool,
) -> Result<crate::sandbox::Jail, String> {
    let cwd = cli_cwd(h).map_err(|e| format!("no working directory: {e}"))?;
    let cwd = cwd.canonicalize().map_err(|e| format!("cwd {}: {e}", cwd.display()))?;
    let socket_dir = socket.parent().ok_or("the tools socket has no directory")?;
    Ok(crate::sandbox::Jail {
        cwd,
        homes: crate::sandbox::homes(env),
        socket_dir: socket_dir
            .canonicalize()
            .map_err(|e| format!("{}: {e}", socket_dir.display()))?,
        hide: h
            .sandbox_hide
            .iter()
            .filter_map(|p| std::path::Path::new(p).canonicalize().ok())
            .collect(),
        new_session: piped,
        // The programs it runs stay in sight wherever they are installed (a checkout under
        // /tmp, say, which is the sandbox's own): the CLI's and the relay-mcp bridge's.
        programs: [crate::sandbox::which(program), Some(relay_mcp(h))]
            .into_iter()
            .flatten()
            .filter_map(|p| p.canonicalize().ok()?.parent().map(std::path::Path::to_path_buf))
            .collect(),
    })
}

/// The `relay-mcp` bridge: as configured, else beside this binary.
fn relay_mcp(h: &HarnessSettings) -> std::path::PathBuf {
    match &h.relay_mcp {
        Some(path) => path.into(),
        None => std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().map(|d| d.join("relay-mcp")))
            .unwrap_or_else(|| "relay-mcp".into()),
    }
}

/// The relay tools on their socket (which goes with the harness's process), for the processes
/// of the CLI `cli_pid` only.
fn serve_relay_tools<A: Driver>(
    listener: tokio::net::UnixListener,
    nats: &async_nats::Client,
    agent: &Arc<A>,
    cli_pid: Option<u32>,
) {
    let inbox: Arc<dyn crate::relay::Inbox> = agent.clone();
    crate::relay::serve(listener, nats.clone(), agent.relay(), inbox, cli_pid)
}

/// Prints the `agent session resumable` line for a Codex TUI once its thread shows up in
/// `<home>/sessions` (`$CODEX_HOME`; a rollout file started here in `cwd`), so the spawner can restart a
/// killed harness with `codex resume <thread>`.
async fn announce_codex_thread(home: Option<std::path::PathBuf>, cwd: String, pid: Option<u32>) {
    let since = std::time::SystemTime::now();
    let Some(sessions) = home.map(|h| h.join("sessions")) else {
        return;
    };
    loop {
        if let Some(thread) = codex_thread(&sessions, &cwd, since) {
            return announce_resumable(&thread, pid);
        }
        // Often: a kill before the announcement cannot be resumed.
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// The thread id of the newest rollout file (`YYYY/MM/DD/rollout-<time>-<thread>.jsonl`)
/// written since `since` whose session began in `cwd`.
fn codex_thread(sessions: &std::path::Path, cwd: &str, since: std::time::SystemTime) -> Option<String> {
    let dirs = |p: &std::path::Path| -> Vec<std::path::PathBuf> {
        let mut d: Vec<_> = std::fs::read_dir(p)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect();
        d.sort();
        d
    };
    // Today's directory is the newest; yesterday's matters only around midnight.
    let days: Vec<_> = dirs(sessions)
        .iter()
        .flat_map(|y| dirs(y))
        .flat_map(|m| dirs(&m))
        .rev()
        .take(2)
        .collect();
    let cwd_field = format!("\"cwd\":{}", serde_json::to_string(cwd).ok()?);
    days.iter().flat_map(|d| dirs(d)).rev().find_map(|file| {
        let name = file.file_name()?.to_str()?.to_string();
        let thread = name.strip_prefix("rollout-")?.strip_suffix(".jsonl")?;
        let thread = thread.get(thread.len().checked_sub(36)?..)?.to_string();
        let fresh = std::fs::metadata(&file)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t >= since);
        let first = std::fs::read_to_string(&file).ok()?.lines().next()?.to_string();
        (fresh && first.contains(&cwd_field)).then_some(thread)
    })
}

/// How long a TUI's first message waits for the CLI to list the relay tools (Claude Code
/// connects its MCP servers in the background, so its prompt shows before it has them).
const TOOLS_LISTED_WITHIN: std::time::Duration = std::time::Duration::from_secs(30);

/// The terminal the CLI draws on.
const ROWS: u16 = 50;
const COLS: u16 = 200;

/// The PTY's output onto the screen; the screen is read when the output pauses (and at least
/// every half second while it streams), until the command exits.
fn pty_pump(
    agent: Arc<PtyAgent>,
    screen: Arc<std::sync::Mutex<Screen>>,
    outputs: tokio::sync::watch::Sender<u64>,
    mut output: tokio::sync::mpsc::UnboundedReceiver<Vec<u8>>,
    mut exit: tokio::sync::oneshot::Receiver<u32>,
) -> BoxFuture<'static, u32> {
    use std::time::Duration;
    use tokio::time::Instant;
    const PAUSE: Duration = Duration::from_millis(100);
    const STREAMING: Duration = Duration::from_millis(500);
    Box::pin(async move {
        let mut last_output = Instant::now();
        let mut last_settle = Instant::now();
        // How far the quiet after the last output has been read: 0 none, 1 the pause, 2 idle,
        // 3 a resumed CLI idle without its `resumeLoaded` output.
        let mut stage = 0;
        let settle = |quiet: Duration| {
            let found = screen.lock().expect("screen lock").settle(quiet);
            agent.on_output(found);
        };
        loop {
            let next = match stage {
                0 => (last_output + PAUSE).min(last_settle + STREAMING),
                1 => last_output + crate::screen::IDLE_QUIET,
                // A resumed CLI that never showed `resumeLoaded` is idle after a longer quiet.
                2 if screen.lock().expect("screen lock").awaiting_resume() => last_output + crate::screen::RESUME_QUIET,
                _ => last_output + Duration::from_secs(3600),
            };
            tokio::select! {
                chunk = output.recv() => match chunk {
                    Some(bytes) => {
                        screen.lock().expect("screen lock").feed(&bytes);
                        outputs.send_modify(|n| *n += 1);
                        last_output = Instant::now();
                        stage = 0;
                    }
                    None => break (&mut exit).await.unwrap_or(1),
                },
                _ = tokio::time::sleep_until(next), if stage < 3 => {
                    let now = Instant::now();
                    settle(now - last_output);
                    last_settle = now;
                    if now - last_output >= PAUSE {
                        stage += 1;
                    }
                }
                code = &mut exit => {
                    // Read what the command showed before it exited.
                    while let Ok(bytes) = output.try_recv() {
                        screen.lock().expect("screen lock").feed(&bytes);
                    }
                    settle(Duration::ZERO);
                    break code.unwrap_or(1);
                }
            }
        }
    })
}

/// Attaches the agent (or binds again to the agent a killed harness left), routes decisions,
/// runs it until it exits, is released or is asked to stop, then ends the agent session.
async fn drive<A: Driver>(
    nats: async_nats::Client,
    h: HarnessSettings,
    agent: Arc<A>,
    pump: BoxFuture<'static, u32>,
    prompts: Arc<Prompts>,
    capabilities: AgentSessionCapabilities,
    resumable: Option<(String, Option<u32>)>,
) -> Result<u32, HarnessError> {
    let session_id = h.session_id.clone().unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
    let adapter = h.adapter.clone().unwrap_or_else(|| h.cli.clone());
    let exposed = h.actions.as_deref().map(load_actions).transpose()?;
    let mut capabilities = capabilities;
    if exposed.is_some() {
        capabilities.actions.get_or_insert_with(Default::default).expose = Some(true);
    }
    let declared = crate::discovery::declared(&h, &capabilities).map_err(HarnessError::Invalid)?;
    let mut opts = AttachOptions::new(
        session_id,
        AgentSelection {
            cwd: h.cwd.clone(),
            ..AgentSelection::adapter(adapter)
        },
        capabilities,
    );
    opts.agent_id = h.agent_id.clone();
    opts.attach.handle = h.handle.clone();
    opts.attach.agent_capabilities = Some(declared);
    opts.attach.spawned_by = h.spawned_by.clone();
    opts.attach.placement = h.placement.clone();
    // Attaching is part of the spawn request's trace, when a spawner started this harness.
    let traceparent = std::env::var(crate::handover::TRACEPARENT_ENV).ok();
    let span = relay_bus::trace::continuing("attach", traceparent.as_deref());
    let binding = match Binding::attach(nats.clone(), opts, agent.clone())
        .instrument(span)
        .await
    {
        Ok(binding) => binding,
        Err(e) => {
            // For the spawner, which answers the spawn with the registry's refusal (a taken
            // handle is a conflict), not with "exited before attaching".
            println!("{}", serde_json::json!({ "message": ATTACH_REFUSED, "error": e }));
            return Err(e.into());
        }
    };
    agent.relay().attached(&binding.session_id);
    if let Some(actions) = exposed {
        let req = ExposeRequest {
            agent_id: binding.agent_id.clone(),
            actions,
        };
        relay_bus::client::call::<rpc::ActionExpose>(&nats, &req, std::time::Duration::from_secs(10)).await?;
    }
    let events = binding.events();
    // Until a delivery or decision says otherwise, the agent works in the spawn's trace.
    events.set_trace(traceparent.clone());
    events.status(AgentStatus::Starting);
    agent.set_events(events.clone());
    // Decisions for prompts the permission manager could not decide at once.
    let decisions = nats
        .subscribe(rpc::agent::permission(&binding.agent_id))
        .await
        .map_err(|e| WireError::new(ErrorCode::Unavailable, e.to_string()))?;
    let answers = nats
        .subscribe(rpc::agent::question(&binding.agent_id))
        .await
        .map_err(|e| WireError::new(ErrorCode::Unavailable, e.to_string()))?;
    tokio::spawn(route_decisions(nats.clone(), prompts, decisions, answers));
    println!(
        "{}",
        serde_json::json!({ "message": "agent session attached", "agentId": binding.agent_id, "sessionId": binding.session_id })
    );
    if let Some((cli_session, pid)) = resumable {
        announce_resumable(&cli_session, pid);
    }

    let stop = stop_requested(h.stop_with_stdin);
    tokio::pin!(stop);
    let mut pump = pump;
    let mut stopped = None;
    let code = tokio::select! {
        code = &mut pump => code,
        _ = binding.released() => 0,
        why = &mut stop => {
            tracing::info!(why, "asked to stop: stopping the agent process");
            agent.kill();
            stopped = Some(why);
            0
        }
    };
    let ending = async {
        // Killed by a release: let the release finish (events, registry, reply) before exiting.
        let code = if agent.is_releasing() {
            let _ = tokio::time::timeout(STOP_GRACE, binding.released()).await;
            0
        } else {
            // Exited or stopped: the registry must not keep listing it as attached.
            let reason = match stopped {
                Some(why) => format!("the harness was stopped ({why})"),
                None => format!("the agent process exited with code {code}"),
            };
            binding.ended(reason).await;
            code
        };
        events.status(AgentStatus::Offline);
        events.send(&relay_contracts::agent_events::SessionEnded {
            session_id: binding.session_id.clone(),
            exit_code: code,
        });
        events.flush().await;
        code
    };
    // Events are retried until the log takes them, but a harness asked to stop (before or
    // while ending) must exit even when the bus is gone for good.
    tokio::pin!(ending);
    let bounded = |ending| async move {
        match tokio::time::timeout(STOP_GRACE, ending).await {
            Ok(code) => code,
            Err(_) => {
                tracing::warn!("the bus did not take the last events in time; exiting without them");
                0
            }
        }
    };
    let code = if stopped.is_some() {
        bounded(ending).await
    } else {
        tokio::select! {
            code = &mut ending => code,
            why = &mut stop => {
                tracing::info!(why, "asked to stop while ending");
                bounded(ending).await
            }
        }
    };
    tracing::info!(code, "agent process ended");
    Ok(code)
}

/// How long a stopping harness waits for its release or its last events.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// Resolves with the reason once the harness is asked to stop: SIGTERM, SIGINT, or (when
/// `stdin` is watched) standard input closing, which is how a spawner's exit reaches it.
async fn stop_requested(watch_stdin: bool) -> &'static str {
    use tokio::io::AsyncReadExt;
    use tokio::signal::unix::{SignalKind, signal};
    let stdin_closed = async {
        if !watch_stdin {
            return std::future::pending().await;
        }
        let mut stdin = tokio::io::stdin();
        let mut buf = [0u8; 256];
        while matches!(stdin.read(&mut buf).await, Ok(n) if n > 0) {}
    };
    let term = async {
        match signal(SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = term => "SIGTERM",
        _ = tokio::signal::ctrl_c() => "SIGINT",
        _ = stdin_closed => "standard input closed: the spawner is gone",
    }
}

/// `agent.<id>.permission` {requestId, decision} and `agent.<id>.question` {questionId, answer}.
async fn route_decisions(
    nats: async_nats::Client,
    prompts: Arc<Prompts>,
    decisions: async_nats::Subscriber,
    answers: async_nats::Subscriber,
) {
    let mut both = futures::stream::select(decisions.map(|m| (true, m)), answers.map(|m| (false, m)));
    while let Some((is_permission, msg)) = both.next().await {
        // A human's decision reaches the agent in the trace of the request that made it.
        let span = relay_bus::trace::message_span(&msg.subject, msg.headers.as_ref());
        let resolved = span.in_scope(|| {
            if is_permission {
                serde_json::from_slice::<PermissionDecision>(&msg.payload).map(|d| {
                    let value = if d.decision == Decision::Approved {
                        "approved"
                    } else {
                        "denied"
                    };
                    prompts.resolve(&d.request_id, value.into())
                })
            } else {
                serde_json::from_slice::<QuestionAnswer>(&msg.payload)
                    .map(|a| prompts.resolve(&a.question_id, a.answer))
            }
        });
        let Some(reply) = msg.reply else { continue };
        let err = match resolved {
            Ok(true) => {
                let _ = nats.publish(reply, r#"{"success":true}"#.into()).await;
                continue;
            }
            Ok(false) => WireError::new(ErrorCode::NotFound, "no prompt of this agent waits for that id"),
            Err(e) => WireError::new(ErrorCode::InvalidRequest, e.to_string()),
        };
        // Cut as the services' are: serde echoes a bad value whole.
        let err = relay_bus::service::fit_error(err, nats.server_info().max_payload);
        let headers = relay_bus::service::error_headers(&err);
        let _ = nats
            .publish_with_headers(reply, headers, serde_json::to_vec(&err).unwrap_or_default().into())
            .await;
    }
}

/// The CLI's working directory: `cwd`, else the harness's own.
fn cli_cwd(h: &HarnessSettings) -> std::io::Result<std::path::PathBuf> {
    match &h.cwd {
        Some(cwd) => Ok(cwd.into()),
        None => std::env::current_dir(),
    }
}
