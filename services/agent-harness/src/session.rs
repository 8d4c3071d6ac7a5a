//! One agent CLI under a PTY as a seed-001 agent session.
//!
//! What the CLI shows is read on its rendered screen (screen.rs); messages are typed into the
//! terminal at the boundary their mode asks for, never before the CLI first shows its ready
//! prompt, as a bracketed paste (lines kept) followed by Enter once the CLI took the paste.
//! Permission menus and questions go to the permission manager and the decision is entered
//! with the keys that CLI's menu expects. While a menu shows, nothing else is typed: text
//! would answer it (an Enter picks the highlighted "allow"). Messages of every mode and a
//! person's keys wait in one queue, typed by one task only while no menu shows (as of the last
//! settle and on the live screen) and once the screen has been read since it last typed; the
//! decision's keys are the only keys typed into a menu, and what waited goes once the menu is
//! gone from the screen. A person's keys sent while a menu shows are refused.
//!
//! What a tool call did (`command.executed`, `file.*`) is reported once it completed, never for
//! a denied call. A tool that runs while the screen says the CLI does not ask, with no menu
//! seen for it, is `permission.bypassed` and the agent stays blocked.

use crate::driver::Driver;
use crate::parse::{Detected, Keys};
use crate::prompts::{Ask, Prompts};
use crate::screen::Screen;
use nix::sys::signal::Signal;
use relay_contracts::actions::{ActionAnswer, ActionCall};
use relay_contracts::agent_events::*;
use relay_contracts::capabilities::DeliveryMode;
use relay_contracts::delivery::*;
use relay_contracts::permission::Decision;
use relay_contracts::session::AgentStatus;
use relay_contracts::session::EventPayload as _;
use relay_contracts::session::Message;
use relay_contracts::{ErrorCode, WireError};
use relay_harness::typed;
use relay_harness::{AgentSession, EventSink, receipt};
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// Variables that make a CLI believe no one is at its terminal (Gemini CLI's `isHeadlessMode`,
/// the `is-in-ci` check of ink-based TUIs); they are not passed to a CLI under a PTY.
const CI_MARKERS: &[&str] = &["CI", "CONTINUOUS_INTEGRATION", "GITHUB_ACTIONS"];

/// What the harness was told to run.
pub struct Spawn {
    pub program: String,
    pub args: Vec<String>,
    pub cwd: Option<String>,
    pub rows: u16,
    pub cols: u16,
    /// Environment for the CLI on top of the harness's (the relay tools' settings).
    pub env: Vec<(String, String)>,
}

/// A message accepted and waiting for its boundary: (delivery id, text).
type Held = VecDeque<(String, String)>;

/// What the terminal shows and what waits for it, under one lock so a boundary and a new
/// message cannot miss each other.
#[derive(Default)]
struct State {
    /// The CLI has shown its ready prompt once (and listed the relay tools, when it was given
    /// them): before that, typed text would be lost or go to a CLI without its tools.
    ready: bool,
    /// The CLI was given the relay tools, started its relay-mcp (or has not shown its prompt
    /// yet) and has not listed them yet.
    tools_pending: bool,
    idle: bool,
    /// The permission or question menu showing: only its decision's keys are typed.
    menu: Option<Menu>,
    /// Menus seen so far (their ids).
    menus: u64,
    /// A permission menu was denied and its turn not yet over: nothing is typed before the
    /// CLI's ready prompt is back (Gemini CLI queues a prompt typed while it cancels the call,
    /// and may never run it).
    cancelling: bool,
    /// What the input task types, in order (messages handed to it, a person's keys); it waits
    /// while a menu shows.
    typing: VecDeque<Input>,
    /// The tool call on the screen: whether it was asked for, and what it did.
    call: Call,
    /// The screen says the CLI runs tools without asking.
    unasked: bool,
    /// A tool ran unasked (`permission.bypassed`): the agent stays blocked and takes no messages.
    bypassed: bool,
    next_tool_call: Held,
    next_message: Held,
    on_idle: Held,
    after_prompt: Held,
    /// Output parsed before the session was attached (no event sink yet).
    early: Vec<Detected>,
    /// Deliveries handed to the input task: id → typed yet. A runner asking again (after a
    /// crash or a lost receipt) gets the receipt, not a second copy in the terminal.
    handed: std::collections::HashMap<String, bool>,
    /// Held deliveries that are relay messages: `relay_inbox` may take them instead.
    relay_held: std::collections::HashSet<String>,
}

impl State {
    /// What waited for the ready prompt, in order, once the CLI is ready and idle.
    fn due_at_idle(&mut self) -> Vec<(String, String)> {
        self.ready = !self.tools_pending;
        if !self.ready {
            return Vec::new();
        }
        let mut due: Vec<_> = self.after_prompt.drain(..).collect();
        due.extend(self.on_idle.drain(..));
        due
    }

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

/// A menu on the screen, answered once.
struct Menu {
    id: u64,
    answered: bool,
}

/// The latest tool call the screen showed.
#[derive(Default)]
struct Call {
    /// Its row showed and its completion not yet.
    open: bool,
    tool: String,
    /// A permission menu showed for it (before its row too: Gemini shows a call once it ran).
    asked: bool,
    denied: bool,
    /// What it did (`command.executed`, `file.*` events), reported once it completed.
    did: Vec<(&'static str, serde_json::Value)>,
}

/// Input for the terminal, typed in order by one task.
enum Input {
    /// A message: pasted, then submitted; reported delivered (if it is a delivery) once typed.
    /// `pasted`: a menu opened after its paste, which may be waiting in the CLI's input.
    Message {
        text: String,
        delivery: Option<String>,
        pasted: bool,
    },
    /// A person's keys (`agent.input`), as they are.
    Keys(String),
}

/// Why a message was not typed.
enum NotTyped {
    /// A menu opened: it waits for the menu to close.
    Menu,
    Failed(std::io::Error),
}

pub struct PtyAgent {
    /// Bytes for the terminal, written by a thread of their own (PTY writes block).
    writer: std::sync::mpsc::Sender<Vec<u8>>,
    /// Wakes the input task: something to type, or a menu closed.
    wake: tokio::sync::Notify,
    screen: Arc<Mutex<Screen>>,
    /// Counts the chunks of output: a paste was taken when the CLI drew something after it.
    output_seen: tokio::sync::watch::Receiver<u64>,
    keys: Keys,
    /// The CLI's pid (also its process group: a PTY child leads its own session).
    pub pid: Option<u32>,
    killer: Mutex<Box<dyn portable_pty::ChildKiller + Send + Sync>>,
    /// The CLI has exited (and what it left behind was killed).
    exited: Arc<std::sync::atomic::AtomicBool>,
    state: Mutex<State>,
    prompts: Arc<Prompts>,
    events: Mutex<Option<EventSink>>,
    nats: async_nats::Client,
    /// Set by `release`: the process exit that follows is the release, not a crash.
    releasing: std::sync::atomic::AtomicBool,
    /// Relay messaging: what to reply to, what was typed, the output convention.
    pub relay: Arc<crate::relay::Relay>,
}

/// How long a paste may take to show in the CLI's input before it is typed again.
const PASTE_TAKEN: std::time::Duration = std::time::Duration::from_secs(5);
/// How long an Enter may take to empty the CLI's input before it is pressed again.
const ENTER_TAKEN: std::time::Duration = std::time::Duration::from_secs(1);
/// How long the next input waits for a settle to read what the CLI drew after the last one
/// (it may be a menu); a CLI that drew nothing at all does not hold it longer.
const READ_AFTER_TYPING: std::time::Duration = std::time::Duration::from_secs(1);

impl PtyAgent {
    /// Starts the command under a PTY. Returns the agent, the raw output and the exit status.
    #[allow(clippy::type_complexity)]
    pub fn spawn(
        spawn: &Spawn,
        nats: async_nats::Client,
        prompts: Arc<Prompts>,
        screen: Arc<Mutex<Screen>>,
        output_seen: tokio::sync::watch::Receiver<u64>,
        keys: Keys,
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
        for (k, v) in &spawn.env {
            cmd.env(k, v);
        }
        // The TUIs draw for the terminal they are told they have; a service has none of its own.
        if std::env::var_os("TERM").is_none_or(|t| t.is_empty() || t == "dumb") {
            cmd.env("TERM", "xterm-256color");
        }
        // A PTY is interactive by construction, but CLIs read CI markers inherited from the
        // harness's own environment as "headless" (Gemini CLI then never draws its TUI).
        for marker in CI_MARKERS {
            cmd.env_remove(marker);
        }
        if let Some(cwd) = &spawn.cwd {
            cmd.cwd(cwd);
        }
        let mut child = pair.slave.spawn_command(cmd).map_err(io_err)?;
        let pid = child.process_id();
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
        let exited = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let exited_too = exited.clone();
        std::thread::spawn(move || {
            // What the CLI started and left behind (a relaunched node, its MCP servers, its
            // tools' commands) goes with it: killed before the CLI is reaped, while its group id
            // cannot be anyone else's.
            if let Some(pid) = pid {
                use nix::sys::wait::{Id, WaitPidFlag, waitid};
                let pid = nix::unistd::Pid::from_raw(pid as i32);
                let _ = waitid(Id::Pid(pid), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT);
                let _ = nix::sys::signal::killpg(pid, Signal::SIGKILL);
            }
            exited_too.store(true, std::sync::atomic::Ordering::SeqCst);
            let code = child.wait().map_or(1, |s| s.exit_code());
            let _ = exit_tx.send(code);
        });
        let agent = Arc::new(PtyAgent {
            writer: in_tx,
            wake: tokio::sync::Notify::new(),
            screen,
            output_seen,
            keys,
            pid,
            killer: Mutex::new(killer),
            exited,
            state: Mutex::new(State::default()),
            prompts,
            events: Mutex::new(None),
            nats,
            releasing: Default::default(),
            relay: Default::default(),
        });
        tokio::spawn(agent.clone().type_input());
        Ok((agent, out_rx, exit_rx))
    }

    /// Types what is queued, one item after the other, each once no menu shows.
    async fn type_input(self: Arc<Self>) {
        let mut output = self.output_seen.clone();
        loop {
            match self.next_input(&mut output).await {
                Input::Keys(keys) => {
                    if let Err(e) = self.type_keys(&keys) {
                        tracing::error!(error = %e, "cannot type a person's keys");
                    }
                }
                Input::Message { text, delivery, pasted } => {
                    // Queued while the CLI worked, typed after it went idle: it works again, and
                    // says so, or the idle that ends this work would look like no change.
                    self.busy_again();
                    let typed = match self.submit(&text, pasted).await {
                        Ok(()) => Ok(()),
                        Err(NotTyped::Failed(e)) => Err(e),
                        Err(NotTyped::Menu) => {
                            tracing::info!("a menu opened while a message was typed: it waits for the menu to close");
                            let waiting = Input::Message {
                                text,
                                delivery,
                                pasted: true,
                            };
                            self.state.lock().expect("state lock").typing.push_front(waiting);
                            continue;
                        }
                    };
                    let Some(delivery_id) = delivery else { continue };
                    // What the CLI does now is this delivery's work: its events go in its trace.
                    if let Some(ev) = self.events() {
                        ev.set_trace(relay_harness::delivery_trace(&delivery_id));
                    }
                    {
                        // A message that did not go in is not ours any more: asked again, it is typed again.
                        let mut st = self.state.lock().expect("state lock");
                        match typed {
                            Ok(()) => st.handed.insert(delivery_id.clone(), true),
                            Err(_) => st.handed.remove(&delivery_id),
                        };
                    }
                    let (status, reason) = match typed {
                        Ok(()) => (ReceiptStatus::Delivered, None),
                        Err(e) => (
                            ReceiptStatus::Failed,
                            Some(format!("cannot write to the terminal: {e}")),
                        ),
                    };
                    // Off the input task: a report that waits for a runner must not hold up typing.
                    let nats = self.nats.clone();
                    tokio::spawn(async move {
                        if let Err(e) = crate::relay::report(&nats, &delivery_id, status, reason).await {
                            tracing::error!(delivery_id, error = %e, "delivery report refused");
                        }
                    });
                }
            }
        }
    }

    /// The next input to type, once nothing on the screen could take it for a menu's answer:
    /// no menu shows (settled or live) and a settle has read what the CLI drew after the last
    /// keys (or it drew nothing for a while).
    async fn next_input(&self, output: &mut tokio::sync::watch::Receiver<u64>) -> Input {
        let mut watching = true;
        loop {
            let mut retry_at = None;
            {
                let mut st = self.state.lock().expect("state lock");
                // While a denied call is cancelled a message waits (and what is queued behind
                // it); a person's keys at the head of the queue go in.
                let waits = st.cancelling && matches!(st.typing.front(), Some(Input::Message { .. }));
                if !st.typing.is_empty() && st.menu.is_none() && !waits {
                    let screen = self.screen.lock().expect("screen lock");
                    let unread = screen.unread_typing().map(|at| at + READ_AFTER_TYPING);
                    match unread.filter(|until| *until > std::time::Instant::now()) {
                        Some(until) => retry_at = Some(until),
                        None if !screen.menu_showing() => return st.typing.pop_front().expect("not empty"),
                        None => {}
                    }
                }
            }
            let retry = async {
                match retry_at {
                    Some(at) => tokio::time::sleep_until(at.into()).await,
                    None => std::future::pending().await,
                }
            };
            // Woken by new input or a menu that closed; a settle or a menu the live screen shows
            // ahead of its settle is watched on the output.
            tokio::select! {
                _ = self.wake.notified() => {}
                changed = output.changed(), if watching => watching = changed.is_ok(),
                _ = retry => {}
            }
        }
    }

    /// Whether the screen shows a menu now (typing would answer it).
    fn menu_open(&self) -> bool {
        self.state.lock().expect("state lock").menu.is_some() || self.screen.lock().expect("screen lock").menu_showing()
    }

    /// The text as a bracketed paste when the CLI asked for them (its lines kept), else typed
    /// on one line; then Enter as a keystroke of its own once the screen shows the text in the
    /// CLI's input (its empty input is gone) and the CLI's `enterDelayMs` passed (Gemini takes an
    /// Enter that follows a paste too closely as a newline). An Enter that left the text in the
    /// input (taken as a newline, or dropped) is pressed again. Before each keystroke the
    /// screen is checked for a menu: one that opened meanwhile stops the typing (`pasted`: the
    /// text may wait in the input, where it is submitted without a second paste).
    async fn submit(&self, text: &str, pasted: bool) -> Result<(), NotTyped> {
        let paste = {
            let mut screen = self.screen.lock().expect("screen lock");
            // Echoed in the input (and maybe in the CLI's output), the text is never its menu.
            screen.echo(text);
            screen.bracketed_paste()
        };
        let mut output = self.output_seen.clone();
        let mut shown = pasted && self.screen.lock().expect("screen lock").still_in_input(text);
        // A CLI still loading (a resumed session's history) drops what is typed: typed again
        // while its input stays empty. Only an input that stays empty is typed into again.
        for attempt in 0..3 {
            if shown {
                break;
            }
            if self.menu_open() {
                return Err(NotTyped::Menu);
            }
            output.borrow_and_update();
            let typed = if paste {
                self.type_keys(&format!("\x1b[200~{text}\x1b[201~"))
            } else {
                self.type_keys(&text.replace(['\r', '\n'], " "))
            };
            typed.map_err(NotTyped::Failed)?;
            if self.input_shows(&mut output, false, PASTE_TAKEN).await {
                shown = true;
                break;
            }
            tracing::warn!(attempt, "the CLI did not show the typed text; typing it again");
        }
        if !shown {
            return Err(NotTyped::Failed(std::io::Error::other(
                "the CLI never showed the typed text in its input",
            )));
        }
        let sees_input = self.screen.lock().expect("screen lock").sees_input();
        for attempt in 0..3 {
            tokio::time::sleep(self.keys.enter_delay).await;
            if self.menu_open() {
                return Err(NotTyped::Menu);
            }
            output.borrow_and_update();
            self.type_keys("\r").map_err(NotTyped::Failed)?;
            // Without a prompt pattern nothing tells a second Enter is needed: never guess.
            if !sees_input || self.input_shows(&mut output, true, ENTER_TAKEN).await {
                break;
            }
            if !self.screen.lock().expect("screen lock").still_in_input(text) {
                break;
            }
            tracing::warn!(
                attempt,
                "the text is still in the CLI's input after Enter; pressing it again"
            );
        }
        tracing::info!(chars = text.chars().count(), "message typed and submitted");
        Ok(())
    }

    /// Waits until the CLI's input is empty (`empty`) or holds text, at most `limit`.
    async fn input_shows(
        &self,
        output: &mut tokio::sync::watch::Receiver<u64>,
        empty: bool,
        limit: std::time::Duration,
    ) -> bool {
        let wait = async {
            while self.screen.lock().expect("screen lock").input_empty() != empty {
                if output.changed().await.is_err() {
                    return;
                }
            }
        };
        tokio::time::timeout(limit, wait).await.is_ok()
    }

    /// Marks the screen typed-into before the keys go: the CLI's answer may come back before
    /// this thread runs again, and must not be taken for the old screen.
    fn type_keys(&self, keys: &str) -> std::io::Result<()> {
        self.screen.lock().expect("screen lock").typed();
        self.write(keys)
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

    /// Queues a message for the input task (the caller holds the state lock).
    fn inject(&self, st: &mut State, text: &str, delivery: Option<String>) {
        if st.idle {
            st.idle = false;
            if let Some(ev) = self.events() {
                ev.status(AgentStatus::Active);
            }
        }
        if let Some(id) = &delivery {
            st.handed.insert(id.clone(), false);
            st.relay_held.remove(id);
        }
        self.relay.typed(text);
        if let Some(ev) = self.events() {
            self.relay.chunk(&ev, "user", text);
        }
        st.typing.push_back(Input::Message {
            text: text.to_string(),
            delivery,
            pasted: false,
        });
        self.wake.notify_one();
    }

    /// The agent is active again, if it was idle (what is typed now is new work for it).
    fn busy_again(&self) {
        let mut st = self.state.lock().expect("state lock");
        if st.idle {
            st.idle = false;
            if let Some(ev) = self.events() {
                ev.status(AgentStatus::Active);
            }
        }
    }

    /// Types held messages whose boundary came; each is reported once typed (`delivery.report`).
    fn type_and_report(&self, due: Vec<(String, String)>) {
        let mut st = self.state.lock().expect("state lock");
        for (delivery_id, text) in due {
            self.inject(&mut st, &text, Some(delivery_id));
        }
    }

    /// Holds what would be typed until the CLI has listed the relay tools, at most `within`
    /// (then it goes on without them, as a CLI that does not list them would).
    pub fn wait_for_tools(self: &Arc<Self>, within: std::time::Duration) {
        self.state.lock().expect("state lock").tools_pending = true;
        let agent = self.clone();
        tokio::spawn(async move {
            if agent.relay.tools_listed(within).await {
                tracing::info!("the CLI listed the relay tools");
            } else if agent.relay.bridge_started() {
                tracing::warn!(
                    secs = within.as_secs(),
                    "the CLI did not list the relay tools: going on without them"
                );
            }
            let due = {
                let mut st = agent.state.lock().expect("state lock");
                st.tools_pending = false;
                if !st.idle {
                    return;
                }
                st.due_at_idle()
            };
            agent.type_and_report(due);
        });
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
                    if let Some(req) = self.relay.convention(&text) {
                        let nats = self.nats.clone();
                        let ev = ev.clone();
                        tokio::spawn(async move {
                            // What the mesh refused is in the agent's log: it wrote no tool call to answer.
                            if let Err(e) = crate::relay::send(&nats, &req).await {
                                tracing::warn!(error = %e, "a relay line was not sent");
                                ev.send(&Log {
                                    level: "warn".into(),
                                    message: format!("relay line not sent: {e}"),
                                });
                            }
                        });
                    }
                    ev.send(&TerminalOutput {
                        stream: "combined".into(),
                        text,
                    });
                }
                Detected::Screen(text) => {
                    tracing::info!("the screen shows a ready prompt or a menu");
                    ev.send(&TerminalScreen { text });
                }
                Detected::Idle => {
                    // The ready prompt means no other prompt shows any more (it may have been
                    // answered with agent.input): what waited for either goes now, in order.
                    let (due, bypassed) = {
                        let mut st = self.state.lock().expect("state lock");
                        st.idle = true;
                        st.menu = None;
                        st.cancelling = false;
                        // The turn is over: a call whose completion never showed ends with it,
                        // and that was the tool-call boundary its waiting messages wanted.
                        let call = std::mem::take(&mut st.call);
                        let mut due: Vec<(String, String)> = Vec::new();
                        if call.open {
                            self.end_call(&ev, call, false);
                            due.extend(st.next_tool_call.drain(..));
                        }
                        // Ready with no relay-mcp started: this CLI does not take the tools.
                        if st.tools_pending && !self.relay.bridge_started() {
                            st.tools_pending = false;
                        }
                        due.extend(st.due_at_idle());
                        (due, st.bypassed)
                    };
                    // A bypass keeps the agent blocked until someone releases it.
                    if !bypassed {
                        ev.status(AgentStatus::Idle);
                    }
                    self.type_and_report(due);
                    self.wake.notify_one();
                }
                Detected::MenuClosed => {
                    // Gone from the screen (answered): what waited for it is typed now, or after
                    // a deny once the ready prompt is back.
                    let due = {
                        let mut st = self.state.lock().expect("state lock");
                        st.menu = None;
                        if st.cancelling {
                            Vec::new()
                        } else {
                            st.after_prompt.drain(..).collect()
                        }
                    };
                    self.type_and_report(due);
                    self.wake.notify_one();
                }
                Detected::Blocked { reason, screen } => {
                    tracing::warn!(reason, "the CLI shows a screen only a person can answer");
                    ev.status(AgentStatus::Blocked);
                    ev.send(&StatusBlocked {
                        reason: format!("the CLI asks what the harness cannot answer ({reason}): answer it with the agent's terminal input, or give it a prepared home (spawner.agents.<cli>.home)"),
                        screen,
                    });
                }
                Detected::Unasked(unasked) => {
                    if unasked {
                        tracing::warn!("the CLI shows a mode in which it runs tools without asking");
                    }
                    self.state.lock().expect("state lock").unasked = unasked;
                }
                Detected::ToolStarted { tool, input } => {
                    let item_id = uuid::Uuid::now_v7().to_string();
                    ev.send(&ItemStarted {
                        item_id: item_id.clone(),
                        kind: "tool".into(),
                        tool: tool.clone(),
                        input: input.clone().into(),
                    });
                    ev.send(&ToolCalled {
                        run: None,
                        tool: tool.clone(),
                        input: input.clone().into(),
                    });
                    let due = {
                        let mut st = self.state.lock().expect("state lock");
                        // A call whose completion never showed: what it did is reported now,
                        // unless it was denied; it was a tool-call boundary all the same.
                        let earlier = st.call.open.then(|| std::mem::take(&mut st.call));
                        st.call.open = true;
                        st.call.tool = tool.clone();
                        match earlier {
                            Some(earlier) => {
                                self.end_call(&ev, earlier, false);
                                st.next_tool_call.drain(..).collect()
                            }
                            None => Vec::new(),
                        }
                    };
                    self.type_and_report(due);
                }
                Detected::ToolCompleted { tool } => {
                    // The tool-call boundary: messages waiting for it are typed now, once the
                    // call is done — never as it starts, when its permission menu may open and
                    // take the typed keys for an answer.
                    let (mut call, due): (_, Vec<_>) = {
                        let mut st = self.state.lock().expect("state lock");
                        (std::mem::take(&mut st.call), st.next_tool_call.drain(..).collect())
                    };
                    call.tool = tool;
                    self.end_call(&ev, call, true);
                    self.type_and_report(due);
                }
                Detected::Tokens { input, output } => {
                    ev.send(&TokensUsed {
                        input_tokens: input,
                        output_tokens: output,
                        cache_read_tokens: None,
                        cache_write_tokens: None,
                        total_tokens: input + output,
                        model: None,
                    });
                }
                Detected::FileOperation { path, operation } => {
                    let (path_, op) = (path.clone(), operation.clone());
                    let mut did = vec![typed(&FileOperation {
                        path: path_,
                        operation: op,
                    })];
                    if matches!(operation.as_str(), "create" | "update" | "delete") {
                        did.push(typed(&FileChanged {
                            path: path.clone(),
                            operation: operation.clone(),
                        }));
                    }
                    self.did(&ev, did, &path);
                }
                Detected::Command { command } => {
                    let did = vec![typed(&CommandExecuted {
                        command: command.clone(),
                        exit_code: None,
                    })];
                    self.did(&ev, did, &command);
                }
                Detected::Permission {
                    tool,
                    command,
                    file_path,
                    description,
                } => {
                    let menu = self.open_menu(true);
                    let ask = Ask {
                        tool,
                        command,
                        file_path,
                        description,
                    };
                    tokio::spawn(self.clone().ask_permission(menu, ask));
                }
                Detected::Question { question, options } => {
                    let menu = self.open_menu(false);
                    tokio::spawn(self.clone().ask_question(menu, question, options));
                }
            }
        }
    }

    /// What a tool call did: held while the call is open (its menu may still deny it), else
    /// reported now (the row that says it ran came after its completion, or alone).
    fn did(&self, ev: &EventSink, did: Vec<(&'static str, serde_json::Value)>, what: &str) {
        let mut st = self.state.lock().expect("state lock");
        if st.call.open {
            if !st.call.denied {
                st.call.did.extend(did);
            }
            return;
        }
        let call = std::mem::take(&mut st.call);
        drop(st);
        self.check_asked(ev, &call, what);
        if !call.denied {
            for (kind, payload) in did {
                ev.emit(kind, payload);
            }
        }
    }

    fn report_call(&self, ev: &EventSink, call: Call) {
        if call.denied {
            return;
        }
        for (kind, payload) in call.did {
            ev.emit(kind, payload);
        }
    }

    /// A call completed (or its turn ended, or the next call started, with no completion shown):
    /// `tool.completed` (saying when it was denied), then what it did, unless denied; a call
    /// seen completing unasked is a bypass. Takes no lock: callers may hold the state's.
    fn end_call(&self, ev: &EventSink, call: Call, completed: bool) {
        let command = call
            .did
            .iter()
            .find_map(|(kind, p)| (*kind == CommandExecuted::TYPE).then(|| p["command"].as_str().map(String::from)))
            .flatten();
        ev.send(&ToolCompleted {
            run: None,
            tool: call.tool.clone(),
            output: None,
            denied: call.denied,
        });
        if completed {
            self.check_asked(ev, &call, command.as_deref().unwrap_or(&call.tool));
        }
        self.report_call(ev, call);
    }

    /// A tool ran: with no menu seen for it while the screen says the CLI does not ask, it ran
    /// unasked. Reported once, and the agent stays blocked: its tools are out of control.
    fn check_asked(&self, ev: &EventSink, call: &Call, what: &str) {
        {
            let mut st = self.state.lock().expect("state lock");
            if call.asked || !st.unasked || st.bypassed {
                return;
            }
            st.bypassed = true;
        }
        tracing::error!(what, "the CLI ran a tool without asking for permission");
        ev.send(&PermissionBypassed {
            ran: what.to_string(),
            reason: "the CLI ran a tool without a permission request: its screen shows a mode in which it does not ask"
                .into(),
        });
        ev.status(AgentStatus::Blocked);
    }

    /// A menu showed: nothing but its decision is typed until it is gone. Returns its id.
    fn open_menu(&self, permission: bool) -> u64 {
        let mut st = self.state.lock().expect("state lock");
        st.menus += 1;
        let id = st.menus;
        st.menu = Some(Menu { id, answered: false });
        st.idle = false;
        if permission {
            st.call.asked = true;
        }
        id
    }

    /// A permission menu: the manager's decision (now or a human's later), entered with the
    /// keys this CLI's menu takes for it.
    async fn ask_permission(self: Arc<Self>, menu: u64, ask: Ask) {
        let Some(ev) = self.events() else { return };
        let decision = self.prompts.permission(&ev, ask).await;
        let denied = decision != Decision::Approved;
        let keys = if !denied {
            self.keys.approve.clone()
        } else {
            // What the call would have done never happens: not reported.
            let mut st = self.state.lock().expect("state lock");
            st.call.denied = true;
            st.call.did.clear();
            self.keys.deny.clone()
        };
        self.answer_menu(menu, &keys, denied);
    }

    async fn ask_question(self: Arc<Self>, menu: u64, question: String, options: Vec<String>) {
        let Some(ev) = self.events() else { return };
        let answer = self.prompts.question(&ev, question, options.clone()).await;
        let keys = self.keys.answer(&answer, &options);
        self.answer_menu(menu, &keys, false);
    }

    /// Types the decision into its menu, if that menu still shows and was not answered yet.
    /// What waited for the menu goes once the screen shows it gone (`denies`: once the CLI's
    /// ready prompt is back).
    fn answer_menu(&self, menu: u64, keys: &str, denies: bool) {
        {
            let mut st = self.state.lock().expect("state lock");
            match &mut st.menu {
                Some(m) if m.id == menu && !m.answered => m.answered = true,
                _ => {
                    tracing::warn!("the menu is gone or answered already: its decision is not typed");
                    return;
                }
            }
            match self.type_keys(keys) {
                // A later answer in the same turn (a question) does not end a deny's cancel.
                Ok(()) => st.cancelling |= denies,
                Err(e) => tracing::error!(error = %e, "cannot type the answer to the menu"),
            }
            if st.bypassed {
                return;
            }
        }
        if let Some(ev) = self.events() {
            ev.status(AgentStatus::Active);
        }
    }
}

/// How long a hung-up CLI has to exit before its process group is killed.
const KILL_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// Signals the process group `pgid` (gone already: nothing to do).
fn signal_group(pgid: u32, signal: Signal) {
    let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid as i32), signal);
}

fn io_err(e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

impl AgentSession for PtyAgent {
    async fn receive_message(&self, message: Message, ctx: MessageContext) -> Receipt {
        let text = crate::relay::surfaced(&message);
        self.relay.saw(&message);
        let accepted = receipt(ReceiptStatus::Accepted, &ctx.id);
        let mut st = self.state.lock().expect("state lock");
        // Asked again while still held (the runner re-sent it): already ours.
        if st.holds(&ctx.id) {
            return accepted;
        }
        if let Some(r) = crate::driver::handed_receipt(&st.handed, &ctx.id) {
            return r;
        }
        if st.bypassed {
            return Receipt {
                reason: Some(
                    "the agent's CLI ran a tool without asking for permission (permission.bypassed): it takes no messages until it is released".into(),
                ),
                retryable: Some(false),
                ..receipt(ReceiptStatus::Failed, &ctx.id)
            };
        }
        // Before the CLI first shows its ready prompt, typing would be lost: wait for it.
        let prompt_open = st.menu.is_some() || st.cancelling || !st.ready;
        let idle = st.idle;
        let hold = match ctx.mode {
            DeliveryMode::NextToolCall => Some(&mut st.next_tool_call),
            DeliveryMode::NextMessage => Some(&mut st.next_message),
            DeliveryMode::OnIdle if !idle || prompt_open => Some(&mut st.on_idle),
            _ if prompt_open => Some(&mut st.after_prompt),
            _ => None,
        };
        if let Some(queue) = hold {
            queue.push_back((ctx.id.clone(), text));
            if message.relay.is_some() {
                st.relay_held.insert(ctx.id);
            }
            return accepted;
        }
        // A message of another mode is the next-message boundary: those waiting go first.
        // Every message is typed by the input task and reported delivered once typed.
        let riding: Vec<(String, String)> = st.next_message.drain(..).collect();
        for (id, t) in riding {
            self.inject(&mut st, &t, Some(id));
        }
        self.inject(&mut st, &text, Some(ctx.id.clone()));
        accepted
    }

    /// The CLI's interrupt keys, straight to the terminal (ahead of queued input: the CLI reads
    /// them while it works). Held deliveries stay held for the next boundary. Not while a menu
    /// shows: its Escape would deny it with no decision recorded (deny it in the inbox).
    async fn turn(&self, control: TurnControl) -> TurnState {
        let busy = {
            let st = self.state.lock().expect("state lock");
            st.ready && !st.idle
        };
        if !(busy && control.interrupt) || self.menu_open() {
            return TurnState {
                busy,
                interrupted: false,
            };
        }
        let interrupted = self.writer.send(self.keys.interrupt.as_bytes().to_vec()).is_ok();
        if let Some(ev) = self.events() {
            ev.send(&TurnInterrupted {
                reason: control.reason.clone(),
            });
        }
        TurnState { busy, interrupted }
    }

    /// Drops a held delivery before its boundary types it (what was typed stays typed).
    async fn cancel(&self, held: CancelHeld) -> bool {
        let mut guard = self.state.lock().expect("state lock");
        let st = &mut *guard;
        let mut removed = false;
        for q in [
            &mut st.next_tool_call,
            &mut st.next_message,
            &mut st.on_idle,
            &mut st.after_prompt,
        ] {
            let before = q.len();
            q.retain(|(id, _)| *id != held.delivery_id);
            removed |= q.len() != before;
        }
        st.relay_held.remove(&held.delivery_id);
        if removed {
            tracing::info!(delivery_id = %held.delivery_id, reason = ?held.reason, "held delivery cancelled");
        }
        removed
    }

    /// A person's keys, typed in turn with the messages already queued (never into the middle
    /// of one). Refused while a menu shows: typed keys would answer it with no decision recorded.
    async fn input(&self, data: String) -> Result<(), WireError> {
        let mut st = self.state.lock().expect("state lock");
        if st.menu.is_some() || self.screen.lock().expect("screen lock").menu_showing() {
            return Err(WireError::new(
                ErrorCode::Conflict,
                "a permission or question menu is open: decide it in the inbox (permission.approve, permission.deny, question.answer), not by typing",
            ));
        }
        st.typing.push_back(Input::Keys(data));
        self.wake.notify_one();
        Ok(())
    }

    async fn invoke_action(&self, call: ActionCall) -> ActionAnswer {
        crate::relay::serve_call(self, &self.relay, call).await
    }

    async fn release(&self, reason: Option<String>) {
        tracing::info!(?reason, "releasing: stopping the agent process");
        self.releasing.store(true, std::sync::atomic::Ordering::SeqCst);
        self.kill();
    }
}

impl Driver for PtyAgent {
    fn relay(&self) -> Arc<crate::relay::Relay> {
        self.relay.clone()
    }

    fn is_releasing(&self) -> bool {
        self.releasing.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Ends the command's whole process tree: the CLI leads its own session and process group
    /// (the PTY's), which its children share. SIGHUP first (the terminal hung up: the CLIs save
    /// their session), SIGKILL for what is still there a moment later.
    fn kill(&self) {
        let Some(pid) = self.pid else {
            let _ = self.killer.lock().expect("killer lock").kill();
            return;
        };
        signal_group(pid, Signal::SIGHUP);
        let exited = self.exited.clone();
        std::thread::spawn(move || {
            std::thread::sleep(KILL_GRACE);
            if !exited.load(std::sync::atomic::Ordering::SeqCst) {
                signal_group(pid, Signal::SIGKILL);
            }
        });
    }

    /// The event sink exists once the session is attached; what was parsed before is handled now.
    fn set_events(self: &Arc<Self>, events: EventSink) {
        *self.events.lock().expect("events lock") = Some(events);
        let early = std::mem::take(&mut self.state.lock().expect("state lock").early);
        self.on_output(early);
    }
}

impl crate::relay::Inbox for PtyAgent {
    fn take_relay_held(&self) -> Vec<(String, String)> {
        let mut st = self.state.lock().expect("state lock");
        let State {
            next_tool_call,
            next_message,
            on_idle,
            after_prompt,
            relay_held,
            handed,
            ..
        } = &mut *st;
        let mut taken = Vec::new();
        for queue in [next_tool_call, next_message, on_idle, after_prompt] {
            queue.retain(|(id, text)| {
                let relay = relay_held.remove(id);
                if relay {
                    taken.push((id.clone(), text.clone()));
                }
                !relay
            });
        }
        // Read now: asked again, the runner gets `delivered`, not a copy in the terminal.
        for (id, _) in &taken {
            handed.insert(id.clone(), true);
        }
        taken
    }
}
