//! An agent CLI driven through its own structured protocol (JSON lines over stdio) instead of
//! a terminal: Claude Code's stream-json with the stdio permission tool, Codex's app-server,
//! the Agent Client Protocol (Gemini CLI `--acp`, and any agent that speaks it).
//!
//! A [`Codec`] turns the protocol's lines into [`Seen`] observations and harness decisions back
//! into lines; [`StructuredAgent`] does the rest the same way for every protocol: one message
//! per turn (the next waits for the turn to end), permission prompts and questions through the
//! permission manager, usage as `tokens.used`, status from the turn's start and end.

mod acp;
mod claude;
mod codex;

use crate::driver::Driver;
use crate::prompts::{Ask, Prompts};
use relay_contracts::actions::{ActionAnswer, ActionCall};
use relay_contracts::agent_events::*;
use relay_contracts::capabilities::*;
use relay_contracts::delivery::*;
use relay_contracts::permission::Decision;
use relay_contracts::session::AgentStatus;
use relay_contracts::session::Message;
use relay_harness::{AgentSession, EventSink, receipt};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// How the harness talks to the agent CLI.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::VariantNames,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Protocol {
    /// A terminal: output parsed by per-CLI patterns, input typed.
    #[default]
    Pty,
    /// `claude -p --input-format stream-json --output-format stream-json --permission-prompt-tool stdio`.
    ClaudeStreamJson,
    /// `codex app-server`: JSON-RPC over stdio.
    CodexAppServer,
    /// The Agent Client Protocol over stdio (`gemini --acp`, any ACP agent).
    Acp,
}

impl Protocol {
    pub fn parse(name: &str) -> Result<Protocol, String> {
        use strum::VariantNames;
        name.parse()
            .map_err(|_| format!("unknown protocol {name:?}; known: {}", Protocol::VARIANTS.join(", ")))
    }

    pub fn as_str(self) -> &'static str {
        self.into()
    }

    fn codec(self) -> Box<dyn Codec> {
        match self {
            Protocol::ClaudeStreamJson => Box::new(claude::Claude::default()),
            Protocol::CodexAppServer => Box::new(codex::Codex::default()),
            Protocol::Acp | Protocol::Pty => Box::new(acp::Acp::default()),
        }
    }
}

/// What a line from the agent meant.
#[derive(Debug, Clone, PartialEq)]
pub enum Seen {
    /// A line the codec must send back (a handshake step, a protocol-level reply).
    Write(Value),
    /// The CLI takes messages now; `cli_session` is its own session id, to resume it later.
    Ready {
        cli_session: String,
    },
    /// The message sent last was taken by the agent (its turn started).
    Taken,
    /// Agent text, as the model wrote it.
    Text(String),
    ToolCalled {
        id: String,
        tool: String,
        input: Value,
    },
    ToolCompleted {
        id: String,
        tool: String,
        ok: bool,
        output: Option<String>,
    },
    Command {
        command: String,
        exit_code: Option<i64>,
    },
    File {
        path: String,
        operation: String,
    },
    /// A permission prompt; `token` goes back to [`Codec::decide`].
    Permission {
        token: Value,
        ask: Ask,
    },
    /// A question for the user; `token` goes back to [`Codec::answer`].
    Question {
        token: Value,
        question: String,
        options: Vec<String>,
    },
    Usage(Usage),
    /// The turn ended (an error says why it ended early).
    TurnDone {
        error: Option<String>,
    },
    /// Something the protocol reported as wrong, logged.
    Error(String),
}

/// Tokens of one turn, as the CLI reported them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub model: Option<String>,
}

/// One structured protocol: pure translation between lines and observations, so it can be
/// tested on captured lines without a CLI.
pub trait Codec: Send {
    /// Arguments added after the configured command; `resume` is the CLI session to continue.
    fn args(&mut self, resume: Option<&str>) -> Vec<String>;
    /// Lines written first.
    fn start(&mut self, cwd: &str, resume: Option<&str>) -> Vec<Value>;
    /// How long to wait before continuing `resume` (a CLI that cannot continue a session yet).
    fn resume_delay(&self, _resume: &str) -> std::time::Duration {
        std::time::Duration::ZERO
    }
    /// Lines that hand the agent a user message (only called when it is ready and not in a turn).
    fn send(&mut self, text: &str) -> Vec<Value>;
    /// One line from the agent.
    fn read(&mut self, line: Value) -> Vec<Seen>;
    /// The decision on a permission prompt.
    fn decide(&mut self, token: &Value, approved: bool) -> Vec<Value>;
    /// The answer to a question.
    fn answer(&mut self, token: &Value, answer: &str) -> Vec<Value>;
    /// Lines that interrupt the running turn (the protocol's own cancel).
    fn interrupt(&mut self) -> Vec<Value>;
}

/// A message accepted and waiting for the agent's current turn to end.
struct Held {
    delivery_id: String,
    text: String,
}

#[derive(Default)]
struct State {
    ready: bool,
    /// A turn is running: the next message waits for its end.
    busy: bool,
    queue: VecDeque<Held>,
    /// `next-message` deliveries: they go just ahead of the next message of another mode.
    next_message: VecDeque<Held>,
    /// The message sent last, until the agent shows it took it (then it is delivered).
    in_flight: Option<String>,
    /// Deliveries handed to the agent: id → taken yet. A runner asking again gets the
    /// receipt, not a second turn.
    handed: std::collections::HashMap<String, bool>,
    /// Observations before the session was attached (no event sink yet).
    early: Vec<Seen>,
    /// Queued deliveries that are relay messages: `relay_inbox` may take them instead.
    relay_held: std::collections::HashSet<String>,
}

impl State {
    fn holds(&self, id: &str) -> bool {
        self.queue.iter().chain(&self.next_message).any(|h| h.delivery_id == id)
    }
}

/// What a structured agent can honestly do: every message is one turn, taken when the
/// previous one ended; usage is reported per turn; no raw terminal.
pub fn capabilities() -> AgentSessionCapabilities {
    use AgentSessionEventType::*;
    let modes = vec![
        DeliveryMode::Immediate,
        DeliveryMode::NextMessage,
        DeliveryMode::OnIdle,
        DeliveryMode::Manual,
    ];
    let emits = vec![
        StatusChanged,
        ToolCalled,
        ToolCompleted,
        MessageReceived,
        TranscriptChunk,
        UsageUpdated,
        SessionStarted,
        SessionReleased,
    ];
    crate::driver::text_agent(modes, emits)
}

/// The labels of a question's options (`[{label, description}]`), as Claude and Codex send them.
fn labels(options: &Value) -> Vec<String> {
    options
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| o["label"].as_str().map(String::from))
        .collect()
}

pub struct StructuredAgent {
    lines: mpsc::UnboundedSender<Value>,
    codec: Mutex<Box<dyn Codec>>,
    state: Mutex<State>,
    prompts: Arc<Prompts>,
    events: Mutex<Option<EventSink>>,
    nats: async_nats::Client,
    pid: Option<u32>,
    releasing: AtomicBool,
    /// Usage comes from the CLI's request log, not from its protocol (which counts less).
    usage_fed: bool,
    /// Relay messaging: what to reply to by default.
    pub relay: Arc<crate::relay::Relay>,
}

/// What runs the agent: the command, where, and which CLI session to continue.
pub struct Launch {
    pub protocol: Protocol,
    pub program: String,
    pub args: Vec<String>,
    pub cwd: String,
    pub resume: Option<String>,
    /// Environment for the CLI on top of the harness's (the relay tools' settings).
    pub env: Vec<(String, String)>,
    /// A FIFO where the CLI logs every model request it makes (Gemini CLI's telemetry file,
    /// see [`gemini_usage_env`]): usage is counted from it instead of from the protocol.
    pub usage_feed: Option<std::path::PathBuf>,
}

/// Gemini CLI's ACP replies count only the main model's calls of a prompt, not its router and
/// utility calls (`_meta.quota`); its telemetry logs every request (`gemini_cli.api_response`).
/// The environment that sends that telemetry to `feed` (a FIFO the harness reads, so nothing
/// piles up on disk), without prompts, flushed every 200 ms so usage follows the turn closely.
/// It replaces whatever telemetry target the user's own settings name.
pub fn gemini_usage_env(feed: &std::path::Path) -> Vec<(String, String)> {
    [
        ("GEMINI_TELEMETRY_ENABLED", "true"),
        ("GEMINI_TELEMETRY_TARGET", "local"),
        ("GEMINI_TELEMETRY_USE_COLLECTOR", "false"),
        ("GEMINI_TELEMETRY_LOG_PROMPTS", "false"),
        ("OTEL_BLRP_SCHEDULE_DELAY", "200"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .chain([("GEMINI_TELEMETRY_OUTFILE".to_string(), feed.display().to_string())])
    .collect()
}

/// Creates the FIFO at `path` and opens it for reading; opened read-write, so it neither
/// blocks nor ends while the CLI has not opened it yet or reopens it.
fn open_feed(path: &std::path::Path) -> std::io::Result<tokio::net::unix::pipe::Receiver> {
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR)?;
    tokio::net::unix::pipe::OpenOptions::new()
        .read_write(true)
        .open_receiver(path)
}

impl StructuredAgent {
    /// The CLI's process id: its processes alone may use the relay tools socket.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Starts the CLI. Returns the agent and the future that reads it until it exits (its code).
    pub fn spawn(
        launch: Launch,
        nats: async_nats::Client,
        prompts: Arc<Prompts>,
    ) -> std::io::Result<(Arc<StructuredAgent>, futures::future::BoxFuture<'static, u32>)> {
        let mut codec = launch.protocol.codec();
        // Open before the CLI starts, so its first request is read too.
        let feed = launch.usage_feed.as_deref().map(open_feed).transpose()?;
        let mut cmd = tokio::process::Command::new(&launch.program);
        cmd.args(&launch.args)
            .args(codec.args(launch.resume.as_deref()))
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&launch.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group: a stop reaches the commands its tools run, too.
            .process_group(0)
            .kill_on_drop(true);
        let mut child = cmd.spawn()?;
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let (tx, mut rx) = mpsc::unbounded_channel::<Value>();
        tokio::spawn(async move {
            while let Some(line) = rx.recv().await {
                let mut bytes = serde_json::to_vec(&line).unwrap_or_default();
                bytes.push(b'\n');
                tracing::debug!(line = %String::from_utf8_lossy(&bytes).trim_end(), "to agent");
                if let Err(e) = stdin.write_all(&bytes).await.and(stdin.flush().await) {
                    tracing::error!(error = %e, "cannot write to the agent's stdin");
                    break;
                }
            }
        });
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::info!(stderr = %line, "agent stderr");
            }
        });
        let delay = launch
            .resume
            .as_deref()
            .map(|r| codec.resume_delay(r))
            .unwrap_or_default();
        let start = codec.start(&launch.cwd, launch.resume.as_deref());
        let first = tx.clone();
        tokio::spawn(async move {
            if !delay.is_zero() {
                tracing::info!(?delay, "waiting before the CLI can continue its session");
                tokio::time::sleep(delay).await;
            }
            for line in start {
                let _ = first.send(line);
            }
        });
        let agent = Arc::new(StructuredAgent {
            lines: tx,
            codec: Mutex::new(codec),
            state: Mutex::new(State::default()),
            prompts,
            events: Mutex::new(None),
            nats,
            pid: child.id(),
            releasing: AtomicBool::new(false),
            usage_fed: feed.is_some(),
            relay: Default::default(),
        });
        if let Some(feed) = feed {
            tokio::spawn(read_usage_feed(feed, agent.clone()));
        }
        let reader = agent.clone();
        let pump = async move {
            let mut lines = BufReader::new(stdout).lines();
            loop {
                match lines.next_line().await {
                    Ok(Some(line)) => reader.on_line(&line),
                    Ok(None) => break,
                    Err(e) => {
                        tracing::warn!(error = %e, "cannot read the agent's stdout");
                        break;
                    }
                }
            }
            let status = child.wait().await;
            tracing::info!(?status, "agent process exited");
            match status {
                Ok(s) => s.code().unwrap_or(1) as u32,
                Err(_) => 1,
            }
        };
        Ok((agent, Box::pin(pump)))
    }

    fn events(&self) -> Option<EventSink> {
        self.events.lock().expect("events lock").clone()
    }

    fn write(&self, lines: Vec<Value>) {
        for line in lines {
            let _ = self.lines.send(line);
        }
    }

    fn on_line(self: &Arc<Self>, line: &str) {
        let line = line.trim();
        if line.is_empty() {
            return;
        }
        tracing::debug!(line, "from agent");
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            // Not protocol: a CLI's stray print. Kept visible, never fatal.
            if let Some(ev) = self.events() {
                ev.send(&TerminalOutput {
                    stream: "stdout".into(),
                    text: line.to_string(),
                });
            }
            return;
        };
        let seen = self.codec.lock().expect("codec lock").read(value);
        for s in seen {
            if self.usage_fed && matches!(s, Seen::Usage(_)) {
                // Counted request by request from the feed instead.
                continue;
            }
            self.on_seen(s);
        }
    }

    fn on_seen(self: &Arc<Self>, seen: Seen) {
        if let Seen::Write(line) = seen {
            return self.write(vec![line]);
        }
        let Some(ev) = self.events() else {
            self.state.lock().expect("state lock").early.push(seen);
            return;
        };
        match seen {
            Seen::Write(_) => {}
            Seen::Ready { cli_session } => {
                crate::handover::announce_resumable(&cli_session, self.pid);
                self.state.lock().expect("state lock").ready = true;
                self.next_turn(&ev);
            }
            Seen::Taken => self.settle_in_flight(ReceiptStatus::Delivered, None),
            Seen::Text(text) => self.relay.chunk(&ev, "agent", &text),
            Seen::ToolCalled { id, tool, input } => {
                ev.send(&ItemStarted {
                    item_id: id.clone(),
                    kind: "tool".into(),
                    tool: tool.clone(),
                    input: input.clone(),
                });
                ev.send(&ToolCalled {
                    run: Some(id.clone()),
                    tool: tool.clone(),
                    input: input.clone(),
                });
            }
            Seen::ToolCompleted { id, tool, ok, output } => {
                ev.send(&ItemCompleted {
                    item_id: id.clone(),
                    tool: tool.clone(),
                    ok,
                });
                if ok {
                    ev.send(&ToolCompleted {
                        run: Some(id.clone()),
                        tool: tool.clone(),
                        output: output.clone(),
                        denied: false,
                    });
                } else {
                    ev.send(&ToolFailed {
                        run: Some(id.clone()),
                        tool: tool.clone(),
                        error: output.clone().unwrap_or_default(),
                    });
                }
            }
            Seen::Command { command, exit_code } => {
                ev.send(&CommandExecuted {
                    command: command.clone(),
                    exit_code,
                });
            }
            Seen::File { path, operation } => {
                ev.send(&FileOperation {
                    path: path.clone(),
                    operation: operation.clone(),
                });
                if matches!(operation.as_str(), "create" | "update" | "delete") {
                    ev.send(&FileChanged {
                        path: path.clone(),
                        operation: operation.clone(),
                    });
                }
            }
            Seen::Permission { token, ask } => {
                let agent = self.clone();
                tokio::spawn(async move {
                    let decision = agent.prompts.permission(&ev, ask).await;
                    let approved = decision == Decision::Approved;
                    let lines = agent.codec.lock().expect("codec lock").decide(&token, approved);
                    agent.write(lines);
                    ev.status(AgentStatus::Active);
                });
            }
            Seen::Question {
                token,
                question,
                options,
            } => {
                let agent = self.clone();
                tokio::spawn(async move {
                    let answer = agent.prompts.question(&ev, question, options).await;
                    let lines = agent.codec.lock().expect("codec lock").answer(&token, &answer);
                    agent.write(lines);
                    ev.status(AgentStatus::Active);
                });
            }
            Seen::Usage(u) => {
                ev.send(&TokensUsed {
                    input_tokens: u.input,
                    output_tokens: u.output,
                    cache_read_tokens: Some(u.cache_read),
                    cache_write_tokens: Some(u.cache_write),
                    total_tokens: u.input + u.output + u.cache_read + u.cache_write,
                    model: u.model.clone(),
                });
            }
            Seen::TurnDone { error } => {
                // A turn that ended took its message, unless it ended refusing it.
                match &error {
                    Some(e) => self.settle_in_flight(ReceiptStatus::Failed, Some(e.clone())),
                    None => self.settle_in_flight(ReceiptStatus::Delivered, None),
                }
                if let Some(error) = error {
                    ev.send(&Error { error: error.clone() });
                }
                self.state.lock().expect("state lock").busy = false;
                self.next_turn(&ev);
            }
            Seen::Error(e) => {
                tracing::warn!(error = %e, "agent protocol error");
                ev.send(&Log {
                    level: "warn".into(),
                    message: e.clone(),
                });
            }
        }
    }

    /// Between turns: the next held message goes, or the agent is idle.
    fn next_turn(&self, ev: &EventSink) {
        let next = {
            let mut st = self.state.lock().expect("state lock");
            if !st.ready || st.busy {
                return;
            }
            let next = st.queue.pop_front();
            if next.is_some() {
                st.busy = true;
            }
            next
        };
        match next {
            Some(held) => self.send_now(ev, held),
            None => ev.status(AgentStatus::Idle),
        }
    }

    /// Hands the agent a message (the caller marked the state busy); it is reported delivered
    /// once the agent shows it took it.
    fn send_now(&self, ev: &EventSink, held: Held) {
        // The turn is this delivery's work: its events go in the delivery's trace.
        ev.set_trace(relay_harness::delivery_trace(&held.delivery_id));
        {
            let mut st = self.state.lock().expect("state lock");
            st.in_flight = Some(held.delivery_id.clone());
            st.relay_held.remove(&held.delivery_id);
            st.handed.insert(held.delivery_id, false);
        }
        self.relay.typed(&held.text);
        self.relay.chunk(ev, "user", &held.text);
        ev.status(AgentStatus::Active);
        let lines = self.codec.lock().expect("codec lock").send(&held.text);
        self.write(lines);
    }

    /// The message in flight was taken (or refused): its receipt goes to the runner.
    fn settle_in_flight(&self, status: ReceiptStatus, reason: Option<String>) {
        let delivery_id = {
            let mut st = self.state.lock().expect("state lock");
            let Some(id) = st.in_flight.take() else { return };
            st.handed.insert(id.clone(), status == ReceiptStatus::Delivered);
            id
        };
        let nats = self.nats.clone();
        tokio::spawn(async move {
            if let Err(e) = crate::relay::report(&nats, &delivery_id, status, reason).await {
                tracing::error!(delivery_id, error = %e, "delivery report refused");
            }
        });
    }
}

impl AgentSession for StructuredAgent {
    async fn receive_message(&self, message: Message, ctx: MessageContext) -> Receipt {
        let text = crate::relay::surfaced(&message);
        self.relay.saw(&message);
        let accepted = receipt(ReceiptStatus::Accepted, &ctx.id);
        let ev = self.events();
        let mut st = self.state.lock().expect("state lock");
        if st.holds(&ctx.id) {
            return accepted;
        }
        if let Some(r) = crate::driver::handed_receipt(&st.handed, &ctx.id) {
            return r;
        }
        let held = Held {
            delivery_id: ctx.id.clone(),
            text,
        };
        if message.relay.is_some() {
            st.relay_held.insert(ctx.id.clone());
        }
        if ctx.mode == DeliveryMode::NextMessage {
            st.next_message.push_back(held);
            return accepted;
        }
        // A message of another mode is the next-message boundary: those waiting ride first.
        let riding: Vec<Held> = st.next_message.drain(..).collect();
        st.queue.extend(riding);
        st.queue.push_back(held);
        let free = st.ready && !st.busy;
        drop(st);
        // Sent now if the agent is between turns; either way reported once the agent took it.
        if let (true, Some(ev)) = (free, ev) {
            self.next_turn(&ev);
        }
        accepted
    }

    async fn invoke_action(&self, call: ActionCall) -> ActionAnswer {
        crate::relay::serve_call(self, &self.relay, call).await
    }

    /// Drops a queued delivery before its turn starts (a turn already sent is not taken back).
    async fn cancel(&self, held: CancelHeld) -> bool {
        let mut st = self.state.lock().expect("state lock");
        let before = st.queue.len() + st.next_message.len();
        st.queue.retain(|h| h.delivery_id != held.delivery_id);
        st.next_message.retain(|h| h.delivery_id != held.delivery_id);
        st.relay_held.remove(&held.delivery_id);
        let removed = st.queue.len() + st.next_message.len() != before;
        if removed {
            tracing::info!(delivery_id = %held.delivery_id, reason = ?held.reason, "queued delivery cancelled");
        }
        removed
    }

    /// The protocol's own cancel; the turn then ends as the agent reports it, and the queued
    /// messages follow as usual.
    async fn turn(&self, control: TurnControl) -> TurnState {
        let busy = self.state.lock().expect("state lock").busy;
        if !(busy && control.interrupt) {
            return TurnState {
                busy,
                interrupted: false,
            };
        }
        let lines = self.codec.lock().expect("codec lock").interrupt();
        let interrupted = !lines.is_empty();
        self.write(lines);
        if let Some(ev) = self.events() {
            ev.send(&TurnInterrupted {
                reason: control.reason.clone(),
            });
        }
        TurnState { busy, interrupted }
    }

    async fn release(&self, reason: Option<String>) {
        tracing::info!(?reason, "releasing: stopping the agent process");
        self.releasing.store(true, Ordering::SeqCst);
        self.kill();
    }
}

/// Reads the CLI's request log (a stream of JSON records, pretty-printed one after another)
/// for as long as the harness runs; each record of a model request is that request's usage.
async fn read_usage_feed(mut feed: tokio::net::unix::pipe::Receiver, agent: Arc<StructuredAgent>) {
    use tokio::io::AsyncReadExt;
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = match feed.read(&mut chunk).await {
            // Never while we hold the write end too; if it happens, there is nothing more.
            Ok(0) => return,
            Ok(n) => n,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the CLI's usage log");
                return;
            }
        };
        buf.extend_from_slice(&chunk[..n]);
        let mut records = serde_json::Deserializer::from_slice(&buf).into_iter::<Value>();
        let mut used = 0;
        loop {
            match records.next() {
                Some(Ok(record)) => {
                    used = records.byte_offset();
                    if let Some(usage) = acp::telemetry_usage(&record) {
                        agent.on_seen(Seen::Usage(usage));
                    }
                }
                // A record not complete yet: the rest comes with the next read.
                Some(Err(e)) if e.is_eof() => break,
                Some(Err(e)) => {
                    // Not a record: skip to the next line that starts one.
                    tracing::warn!(error = %e, "unreadable record in the CLI's usage log");
                    let from = used + 1;
                    used = buf[from.min(buf.len())..]
                        .windows(2)
                        .position(|w| w == b"\n{")
                        .map_or(buf.len(), |i| from + i + 1);
                    break;
                }
                None => break,
            }
        }
        buf.drain(..used.min(buf.len()));
    }
}

/// A JSON-RPC 2.0 request line.
fn rpc(id: u64, method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

/// A JSON-RPC 2.0 result line answering the agent's request `id`.
fn rpc_result(id: &Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

impl Driver for StructuredAgent {
    fn relay(&self) -> Arc<crate::relay::Relay> {
        self.relay.clone()
    }

    fn is_releasing(&self) -> bool {
        self.releasing.load(Ordering::SeqCst)
    }

    /// Stops the CLI and what its tools run (its process group) with SIGTERM; the pump sees
    /// it exit. Its transcript is written as it goes, so a stop between turns loses nothing.
    fn kill(&self) {
        if let Some(pid) = self.pid {
            // The process group of our own child.
            if let Some(pgid) = crate::env::child_pid(pid) {
                let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGTERM);
            }
        }
    }

    /// The event sink exists once the session is attached; what was seen before is handled now.
    fn set_events(self: &Arc<Self>, events: EventSink) {
        *self.events.lock().expect("events lock") = Some(events);
        let early = std::mem::take(&mut self.state.lock().expect("state lock").early);
        for seen in early {
            self.on_seen(seen);
        }
    }
}

impl crate::relay::Inbox for StructuredAgent {
    fn take_relay_held(&self) -> Vec<(String, String)> {
        let mut st = self.state.lock().expect("state lock");
        let State {
            queue,
            next_message,
            relay_held,
            handed,
            ..
        } = &mut *st;
        let mut taken = Vec::new();
        for q in [queue, next_message] {
            q.retain(|h| {
                let relay = relay_held.remove(&h.delivery_id);
                if relay {
                    taken.push((h.delivery_id.clone(), h.text.clone()));
                }
                !relay
            });
        }
        for (id, _) in &taken {
            handed.insert(id.clone(), true);
        }
        taken
    }
}
