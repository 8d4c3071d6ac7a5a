//! One agent CLI under a PTY as a seed-001 agent session.
//!
//! Output is parsed into events (parse.rs); messages are typed into the terminal at the
//! boundary their mode asks for; permission prompts and questions go to the permission
//! manager and its decision is typed back (`y`/`n`, or the answer). While a prompt shows,
//! nothing else is typed: text would answer it.

use crate::parse::Detected;
use crate::prompts::{Ask, Prompts};
use relay_contracts::capabilities::DeliveryMode;
use relay_contracts::delivery::*;
use relay_contracts::permission::Decision;
use relay_contracts::session::Message;
use relay_harness::{AgentSession, EventSink, receipt};
use serde_json::json;
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// What the harness was told to run.
pub struct Spawn {
    pub program: String,
    pub args: Vec<String>,
    pub cwd: Option<String>,
    pub rows: u16,
    pub cols: u16,
}

/// A message accepted and waiting for its boundary: (delivery id, text).
type Held = VecDeque<(String, String)>;

/// What the terminal shows and what waits for it, under one lock so a boundary and a new
/// message cannot miss each other.
#[derive(Default)]
struct State {
    idle: bool,
    /// A permission prompt or question is showing.
    prompt_open: bool,
    next_tool_call: Held,
    next_message: Held,
    on_idle: Held,
    after_prompt: Held,
    /// Output parsed before the session was attached (no event sink yet).
    early: Vec<Detected>,
}

impl State {
    fn holds(&self, id: &str) -> bool {
        [
            &self.next_tool_call,
            &self.next_message,
            &self.on_idle,
            &self.after_prompt,
        ]
        .iter()
        .any(|q| q.iter().any(|(held, _)| held == id))
    }
}

pub struct PtyAgent {
    /// Bytes for the terminal, written by a thread of their own (PTY writes block).
    writer: std::sync::mpsc::Sender<Vec<u8>>,
    killer: Mutex<Box<dyn portable_pty::ChildKiller + Send + Sync>>,
    state: Mutex<State>,
    prompts: Arc<Prompts>,
    events: Mutex<Option<EventSink>>,
    nats: async_nats::Client,
    /// Set by `release`: the process exit that follows is the release, not a crash.
    releasing: std::sync::atomic::AtomicBool,
}

/// Terminal input for a message: one line, submitted with Enter (a PTY takes one line per
/// submit, so inner newlines become spaces).
fn as_line(text: &str) -> String {
    format!("{}\r", text.replace(['\r', '\n'], " "))
}

impl PtyAgent {
    /// Starts the command under a PTY. Returns the agent, the raw output and the exit status.
    #[allow(clippy::type_complexity)]
    pub fn spawn(
        spawn: &Spawn,
        nats: async_nats::Client,
        prompts: Arc<Prompts>,
    ) -> std::io::Result<(
        Arc<PtyAgent>,
        tokio::sync::mpsc::UnboundedReceiver<Vec<u8>>,
        oneshot::Receiver<u32>,
    )> {
        use portable_pty::{CommandBuilder, PtySize, native_pty_system};
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: spawn.rows,
                cols: spawn.cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(io_err)?;
        let mut cmd = CommandBuilder::new(&spawn.program);
        cmd.args(&spawn.args);
        if let Some(cwd) = &spawn.cwd {
            cmd.cwd(cwd);
        }
        let mut child = pair.slave.spawn_command(cmd).map_err(io_err)?;
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().map_err(io_err)?;
        let mut writer = pair.master.take_writer().map_err(io_err)?;
        let killer = child.clone_killer();
        let (out_tx, out_rx) = tokio::sync::mpsc::unbounded_channel();
        // The PTY is blocking I/O: one thread reads it, one writes it, one waits for the child.
        std::thread::spawn(move || {
            let _master = pair.master; // closing the master early would hang up the child
            let mut buf = [0u8; 8192];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if out_tx.send(buf[..n].to_vec()).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        let (in_tx, in_rx) = std::sync::mpsc::channel::<Vec<u8>>();
        std::thread::spawn(move || {
            while let Ok(bytes) = in_rx.recv() {
                if let Err(e) = writer.write_all(&bytes).and_then(|_| writer.flush()) {
                    tracing::error!(error = %e, "cannot write to the agent's terminal");
                    break;
                }
            }
        });
        let (exit_tx, exit_rx) = oneshot::channel();
        std::thread::spawn(move || {
            let code = child.wait().map(|s| s.exit_code()).unwrap_or(1);
            let _ = exit_tx.send(code);
        });
        let agent = Arc::new(PtyAgent {
            writer: in_tx,
            killer: Mutex::new(killer),
            state: Mutex::new(State::default()),
            prompts,
            events: Mutex::new(None),
            nats,
            releasing: Default::default(),
        });
        Ok((agent, out_rx, exit_rx))
    }

    pub fn is_releasing(&self) -> bool {
        self.releasing.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Kills the command (the PTY's child).
    pub fn kill(&self) {
        let _ = self.killer.lock().expect("killer lock").kill();
    }

    /// The event sink exists once the session is attached; what was parsed before is handled now.
    pub fn set_events(self: &Arc<Self>, events: EventSink) {
        *self.events.lock().expect("events lock") = Some(events);
        let early = std::mem::take(&mut self.state.lock().expect("state lock").early);
        self.on_output(early);
    }

    fn events(&self) -> Option<EventSink> {
        self.events.lock().expect("events lock").clone()
    }

    /// Queues bytes for the terminal; fails once the terminal is gone.
    pub fn write(&self, data: &str) -> std::io::Result<()> {
        self.writer
            .send(data.as_bytes().to_vec())
            .map_err(|_| std::io::Error::other("the agent's terminal is closed"))
    }

    /// Types a message now (the caller holds the state lock).
    fn inject(&self, st: &mut State, text: &str) -> std::io::Result<()> {
        if st.idle {
            st.idle = false;
            if let Some(ev) = self.events() {
                ev.status(AgentStatus::Active);
            }
        }
        self.write(&as_line(text))
    }

    /// Types held messages whose boundary came and reports each (`delivery.report`).
    fn type_and_report(self: &Arc<Self>, due: Vec<(String, String)>) {
        for (delivery_id, text) in due {
            let typed = {
                let mut st = self.state.lock().expect("state lock");
                self.inject(&mut st, &text)
            };
            let nats = self.nats.clone();
            tokio::spawn(async move {
                let (status, reason) = match typed {
                    Ok(()) => (ReceiptStatus::Delivered, None),
                    Err(e) => (
                        ReceiptStatus::Failed,
                        Some(format!("cannot write to the terminal: {e}")),
                    ),
                };
                if let Err(e) = relay_harness::report(&nats, &delivery_id, status, reason).await {
                    tracing::error!(delivery_id, error = %e, "delivery report refused");
                }
            });
        }
    }

    /// Turns what the parser found into events and actions.
    pub fn on_output(self: &Arc<Self>, found: Vec<Detected>) {
        let Some(ev) = self.events() else {
            self.state.lock().expect("state lock").early.extend(found);
            return;
        };
        for d in found {
            match d {
                Detected::Line(text) => {
                    ev.emit("terminal.output", json!({ "stream": "combined", "text": text }));
                }
                Detected::Idle => {
                    // The ready prompt means no other prompt shows any more (it may have been
                    // answered with agent.input): what waited for either goes now, in order.
                    let due = {
                        let mut st = self.state.lock().expect("state lock");
                        st.idle = true;
                        st.prompt_open = false;
                        let mut due: Vec<_> = st.after_prompt.drain(..).collect();
                        due.extend(st.on_idle.drain(..));
                        due
                    };
                    ev.status(AgentStatus::Idle);
                    self.type_and_report(due);
                }
                Detected::ToolStarted { tool, input } => {
                    let item_id = uuid::Uuid::now_v7().to_string();
                    ev.emit(
                        "item.started",
                        json!({ "itemId": item_id, "kind": "tool", "tool": tool, "input": input }),
                    );
                    ev.emit("tool.called", json!({ "tool": tool, "input": input }));
                    // The tool-call boundary: messages waiting for it are typed now.
                    let due = self
                        .state
                        .lock()
                        .expect("state lock")
                        .next_tool_call
                        .drain(..)
                        .collect();
                    self.type_and_report(due);
                }
                Detected::ToolCompleted { tool } => {
                    ev.emit("tool.completed", json!({ "tool": tool }));
                }
                Detected::Tokens { input, output } => {
                    ev.emit(
                        "tokens.used",
                        json!({ "inputTokens": input, "outputTokens": output, "totalTokens": input + output }),
                    );
                }
                Detected::FileOperation { path, operation } => {
                    ev.emit("file.operation", json!({ "path": path, "operation": operation }));
                    if matches!(operation.as_str(), "create" | "update" | "delete") {
                        ev.emit("file.changed", json!({ "path": path, "operation": operation }));
                    }
                }
                Detected::Command { command } => {
                    ev.emit("command.executed", json!({ "command": command }));
                }
                Detected::Permission {
                    tool,
                    command,
                    file_path,
                    description,
                } => {
                    self.open_prompt();
                    let ask = Ask {
                        tool,
                        command,
                        file_path,
                        description,
                    };
                    tokio::spawn(self.clone().ask_permission(ask));
                }
                Detected::Question { question, options } => {
                    self.open_prompt();
                    tokio::spawn(self.clone().ask_question(question, options));
                }
            }
        }
    }

    fn open_prompt(&self) {
        let mut st = self.state.lock().expect("state lock");
        st.prompt_open = true;
        st.idle = false;
    }

    /// A permission prompt: the manager's decision (now or a human's later), typed back as y/n.
    async fn ask_permission(self: Arc<Self>, ask: Ask) {
        let Some(ev) = self.events() else { return };
        let decision = self.prompts.permission(&ev, ask).await;
        let answer = if decision == Decision::Approved { "y\r" } else { "n\r" };
        self.answer_prompt(answer);
    }

    async fn ask_question(self: Arc<Self>, question: String, options: Vec<String>) {
        let Some(ev) = self.events() else { return };
        let answer = self.prompts.question(&ev, question, options).await;
        self.answer_prompt(&as_line(&answer));
    }

    /// Types the answer to the prompt showing, then what waited for the prompt to close.
    fn answer_prompt(self: &Arc<Self>, answer: &str) {
        if let Err(e) = self.write(answer) {
            tracing::error!(error = %e, "cannot type the answer to the prompt");
        }
        let waiting = {
            let mut st = self.state.lock().expect("state lock");
            st.prompt_open = false;
            st.after_prompt.drain(..).collect()
        };
        if let Some(ev) = self.events() {
            ev.status(AgentStatus::Active);
        }
        self.type_and_report(waiting);
    }
}

fn io_err(e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

impl AgentSession for PtyAgent {
    async fn receive_message(&self, message: Message, ctx: MessageContext) -> Receipt {
        let text = message.content_text;
        let accepted = receipt(ReceiptStatus::Accepted, &ctx.id);
        let mut st = self.state.lock().expect("state lock");
        // Asked again while still held (the runner re-sent it): already ours.
        if st.holds(&ctx.id) {
            return accepted;
        }
        let prompt_open = st.prompt_open;
        let idle = st.idle;
        let hold = match ctx.mode {
            DeliveryMode::NextToolCall => Some(&mut st.next_tool_call),
            DeliveryMode::NextMessage => Some(&mut st.next_message),
            DeliveryMode::OnIdle if !idle || prompt_open => Some(&mut st.on_idle),
            _ if prompt_open => Some(&mut st.after_prompt),
            _ => None,
        };
        if let Some(queue) = hold {
            queue.push_back((ctx.id, text));
            return accepted;
        }
        // A message of another mode is the next-message boundary: those waiting go first.
        let riding: Vec<(String, String)> = st.next_message.drain(..).collect();
        let mut reports = Vec::new();
        for (id, t) in riding {
            let status = match self.inject(&mut st, &t) {
                Ok(()) => ReceiptStatus::Delivered,
                Err(_) => ReceiptStatus::Failed,
            };
            reports.push((id, status));
        }
        let typed = self.inject(&mut st, &text);
        drop(st);
        for (id, status) in reports {
            let nats = self.nats.clone();
            tokio::spawn(async move {
                let _ = relay_harness::report(&nats, &id, status, None).await;
            });
        }
        match typed {
            Ok(()) => receipt(ReceiptStatus::Delivered, &ctx.id),
            Err(e) => Receipt {
                reason: Some(format!("cannot write to the terminal: {e}")),
                retryable: Some(false),
                ..receipt(ReceiptStatus::Failed, &ctx.id)
            },
        }
    }

    async fn input(&self, data: String) -> Result<(), String> {
        self.write(&data)
            .map_err(|e| format!("cannot write to the terminal: {e}"))
    }

    async fn release(&self, reason: Option<String>) {
        tracing::info!(?reason, "releasing: stopping the agent process");
        self.releasing.store(true, std::sync::atomic::Ordering::SeqCst);
        self.kill();
    }
}
