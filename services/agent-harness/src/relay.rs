//! How an agent sends and reads relay messages (`message.send`) without keystrokes:
//!
//! - the harness serves the agent's **relay tools** on a Unix socket that answers only its own
//!   CLI's processes (the peer's pid, from the kernel, must descend from the CLI); `relay-mcp` (an MCP stdio server, started by the CLI from the `--mcp-config` the
//!   harness gives it) turns the CLI's tool calls into requests on that socket. The harness
//!   makes the bus calls itself, as its agent, so the CLI never holds a credential;
//! - a CLI without MCP writes a line `->relay:@bob text`, `->relay:#ops text` or
//!   `->relay:reply text` (the **output convention**), which the harness sends for it;
//! - a relay message the agent gets is surfaced with a last line saying who sent it and how to
//!   answer; one held for a boundary (the agent is busy) can be read with `relay_inbox`
//!   instead, which reports it delivered then and takes it out of the terminal's queue.

use relay_contracts::actions::{ActionAnswer, ActionCall};
use relay_contracts::capabilities::DeliveryMode;
use relay_contracts::delivery::{MessageContext, ReceiptStatus};
use relay_contracts::messaging::{
    ChannelList, ListChannelsRequest, MembershipRequest, Priority, RelayContext, SendRequest, SendResponse, To,
};
use relay_contracts::session::{AgentListRequest, AgentListResponse, Message, MessageRole};
use relay_contracts::{WireError, rpc};
use relay_harness::{AgentSession, EventSink};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// What the agent sees of a message: its text, then (for a relay message) who sent it and how
/// to answer, then how urgent it is and until when it matters (seed 001), when the sender said.
pub fn surfaced(message: &Message) -> String {
    let mut text = match &message.relay {
        Some(r) => format!("{}\n{}", message.content_text, header(r)),
        None => message.content_text.clone(),
    };
    let relay = message.relay.as_ref();
    let priority = relay.and_then(|r| r.priority).or(message.priority);
    let deadline = relay
        .and_then(|r| r.deadline.as_deref())
        .or(message.deadline.as_deref());
    let mut notes = Vec::new();
    if let Some(p) = priority.filter(|p| matches!(p, Priority::High | Priority::Urgent)) {
        notes.push(format!("{} priority", p.as_str()));
    }
    if let Some(d) = deadline {
        notes.push(format!("it matters until {d}"));
    }
    if !notes.is_empty() {
        text.push_str(&format!("\n[{}]", notes.join(" · ")));
    }
    text
}

/// The last line of a surfaced relay message.
pub fn header(r: &RelayContext) -> String {
    let where_ = match (&r.channel, r.reason.as_str()) {
        (Some(c), _) => format!(" in #{c}"),
        (None, "dm") if r.conversation.matches(',').count() > 1 => " (group)".to_string(),
        _ => String::new(),
    };
    format!(
        "[relay {} from {}{where_} · message {} · answer with relay_reply]",
        r.reason,
        r.from.display(),
        r.message_id
    )
}

/// A request on the tools socket: one JSON line.
#[derive(Debug, Serialize, Deserialize)]
pub struct ToolCall {
    pub tool: String,
    #[serde(default)]
    pub args: Value,
}

/// Its answer: one JSON line.
#[derive(Debug, Serialize, Deserialize)]
pub struct ToolAnswer {
    pub ok: bool,
    pub text: String,
}

/// Relay messages a driver holds for a boundary, taken out for `relay_inbox`.
pub trait Inbox: Send + Sync + 'static {
    /// Removes and returns the held relay deliveries, oldest first: (delivery id, surfaced text).
    fn take_relay_held(&self) -> Vec<(String, String)>;
}

/// The relay state a harness shares between its driver, its socket and the convention.
#[derive(Default)]
pub struct Relay {
    /// The relay message surfaced (or held) last: what `relay_reply` answers by default.
    last: Mutex<Option<String>>,
    /// Text typed into the terminal lately: a convention line inside it is the agent's input
    /// echoed, not something the agent wrote.
    typed: Mutex<std::collections::VecDeque<String>>,
    /// Counts messages typed: the convention's idempotency keys are per message, so a line the
    /// CLI redraws is sent once.
    turn: std::sync::atomic::AtomicU64,
    /// The session the agent is attached to: where `relay_map_reduce` spawns its workers.
    session: std::sync::OnceLock<String>,
    /// Invocations of this agent's actions waiting for its `relay_answer`, by invocation id.
    calls: Mutex<std::collections::HashMap<String, tokio::sync::oneshot::Sender<ActionAnswer>>>,
    /// The `sequence` of the next `transcript.chunk`.
    transcript: std::sync::atomic::AtomicU64,
    /// Set once the CLI has started its `relay-mcp` (which says so first thing).
    bridge_started: std::sync::atomic::AtomicBool,
    /// Set once the CLI has listed the relay tools (its `relay-mcp` says so).
    listed: tokio::sync::watch::Sender<bool>,
}

impl Relay {
    /// Seed 000 `transcript.chunk`: a piece of the conversation as the adapter sees it (`user`:
    /// a message given to the agent; `agent`: its text), numbered in order per harness.
    pub fn chunk(&self, ev: &EventSink, role: &str, content: &str) {
        let sequence = self.transcript.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let chunk = serde_json::json!({
            "id": uuid::Uuid::now_v7().to_string(),
            "at": relay_bus::now_ms(),
            "role": role,
            "content": content,
            "sequence": sequence,
        });
        ev.send(&relay_contracts::agent_events::TranscriptChunk { chunk });
    }

    pub fn saw(&self, message: &Message) {
        if let Some(r) = &message.relay {
            *self.last.lock().expect("relay lock") = Some(r.message_id.clone());
        }
    }

    pub fn typed(&self, text: &str) {
        self.turn.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let mut typed = self.typed.lock().expect("relay lock");
        typed.push_back(text.to_string());
        while typed.len() > 16 {
            typed.pop_front();
        }
    }

    /// Waits until the CLI has listed the relay tools, at most `within`; false if it did not.
    /// A CLI that connects its MCP servers in the background (Claude Code's TUI) would
    /// otherwise take a first message before it has the tools.
    /// Whether the CLI started its `relay-mcp` at all: one run through a wrapper that drops the
    /// arguments never does, and nothing should wait for its listing.
    pub fn bridge_started(&self) -> bool {
        self.bridge_started.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub async fn tools_listed(&self, within: Duration) -> bool {
        let mut listed = self.listed.subscribe();
        tokio::time::timeout(within, listed.wait_for(|l| *l)).await.is_ok()
    }

    pub fn attached(&self, session_id: &str) {
        let _ = self.session.set(session_id.to_string());
    }

    fn last(&self) -> Option<String> {
        self.last.lock().expect("relay lock").clone()
    }

    /// A convention line the agent wrote (`->relay:@bob hi`), as a send; `None` for anything
    /// else, and for a line that is only the echo of text typed into the terminal.
    pub fn convention(&self, row: &str) -> Option<SendRequest> {
        let (to, text) = parse_convention(row)?;
        let line = Some((to.clone(), text.clone()));
        let echoed = self
            .typed
            .lock()
            .expect("relay lock")
            .iter()
            .any(|t| t.lines().any(|l| parse_convention(l) == line));
        if echoed {
            return None;
        }
        let turn = self.turn.load(std::sync::atomic::Ordering::SeqCst);
        let key = format!("convention:{turn}:{:016x}", fnv(row.trim()));
        let mut req = SendRequest {
            text,
            idempotency_key: Some(key),
            ..SendRequest::default()
        };
        match to.as_str() {
            "reply" => req.thread_id = Some(self.last()?),
            _ => req.to = Some(To::One(to)),
        }
        Some(req)
    }
}

/// `->relay:<@handle|#channel|reply> <text>` at the start of a row (after a TUI's bullet).
pub fn parse_convention(row: &str) -> Option<(String, String)> {
    let row = row.trim_start_matches(|c: char| c.is_whitespace() || "⏺●•✦│>*".contains(c));
    let rest = row.strip_prefix("->relay:")?;
    let (to, text) = rest.split_once(char::is_whitespace)?;
    let valid = to == "reply" || (to.len() > 1 && (to.starts_with('@') || to.starts_with('#')));
    let text = text.trim();
    (valid && !text.is_empty()).then(|| (to.to_string(), text.to_string()))
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// Delivery ids of action calls typed into the CLI like messages: they are no delivery of the
/// runner's, so nothing is reported for them.
pub const CALL_PREFIX: &str = "action-call:";

/// Reports a delivery to the runner (`delivery.report`), except an action call's.
pub async fn report(
    nats: &async_nats::Client,
    delivery_id: &str,
    status: ReceiptStatus,
    reason: Option<String>,
) -> Result<(), WireError> {
    if delivery_id.starts_with(CALL_PREFIX) {
        return Ok(());
    }
    let report = relay_harness::report(nats, delivery_id, status, reason);
    // In the trace the delivery came in, not a trace of its own.
    match relay_harness::delivery_trace(delivery_id) {
        Some(tp) => {
            let span = relay_bus::trace::continuing("delivery.report", Some(&tp));
            tracing::Instrument::instrument(report, span).await
        }
        None => report.await,
    }
}

/// An action this agent exposes (`--actions`) invoked by another participant: surfaced to the
/// CLI like a message when it is idle, with what to do and how to answer; the CLI's
/// `relay_answer` is the answer. No answer within the call's timeout is an error.
pub async fn serve_call<S: AgentSession>(agent: &S, relay: &Relay, call: ActionCall) -> ActionAnswer {
    let id = call.invocation_id.clone();
    let (tx, rx) = tokio::sync::oneshot::channel();
    relay.calls.lock().expect("relay lock").insert(id.clone(), tx);
    let text = format!(
        "Action call: {action} (invocation {id}, from {caller}).\nInput: {input}\nDo what the action asks, then answer with relay_answer: invocationId \"{id}\" and output (a JSON value), or error (a sentence) if you cannot. You have {secs} s.",
        action = call.action,
        caller = call.caller,
        input = call.input,
        secs = call.timeout_ms / 1000,
    );
    let delivery = format!("{CALL_PREFIX}{id}");
    let message = Message {
        message_id: delivery.clone(),
        session_id: relay.session.get().cloned().unwrap_or_default(),
        turn_id: None,
        role: MessageRole::User,
        blocks: Vec::new(),
        content_text: text,
        agent_id: None,
        adapter_message_id: None,
        adapter_session_id: None,
        edit_of: None,
        origin: None,
        timestamp: relay_bus::now_ms(),
        target_agent_ids: None,
        delivery_mode: Some(DeliveryMode::OnIdle),
        relay: None,
        priority: None,
        deadline: None,
    };
    let ctx = MessageContext {
        id: delivery,
        mode: DeliveryMode::OnIdle,
        reason: "action-call".into(),
        priority: None,
        deadline: None,
        idempotency_key: None,
        metadata: None,
    };
    let receipt = agent.receive_message(message, ctx).await;
    let answer = match receipt.status {
        ReceiptStatus::Failed => Err(receipt.reason.unwrap_or_else(|| "the agent cannot take it".into())),
        _ => match tokio::time::timeout(Duration::from_millis(call.timeout_ms), rx).await {
            Ok(Ok(answer)) => Ok(answer),
            _ => Err(format!(
                "the agent did not answer with relay_answer within {} ms",
                call.timeout_ms
            )),
        },
    };
    relay.calls.lock().expect("relay lock").remove(&id);
    answer.unwrap_or_else(|error| ActionAnswer {
        output: None,
        error: Some(error),
    })
}

/// Sends as this harness's agent; a line for the agent either way.
pub async fn send(nats: &async_nats::Client, req: &SendRequest) -> Result<String, WireError> {
    let sent: SendResponse = relay_bus::client::call::<rpc::MessageSend>(nats, req, CALL_TIMEOUT).await?;
    let list = |status: &str| -> Vec<String> {
        sent.recipients
            .iter()
            .filter(|r| r.status == status)
            .map(|r| match &r.error {
                Some(e) => format!("@{} ({e})", r.handle),
                None => format!("@{}", r.handle),
            })
            .collect()
    };
    let (queued, failed) = (list("queued"), list("failed"));
    let mut text = format!("sent message {} to {}", sent.message_id, sent.conversation);
    if !queued.is_empty() {
        text += &format!("; queued for {}", queued.join(", "));
    }
    if !failed.is_empty() {
        text += &format!("; failed for {}", failed.join(", "));
    }
    if queued.is_empty() && failed.is_empty() {
        text += "; nobody else is in it yet";
    }
    Ok(text)
}

/// The relay tools' socket at `path`, bound before the CLI starts: a CLI that starts its MCP
/// servers at once finds it listening (connections wait in its backlog until `serve`).
pub fn bind(path: &Path) -> std::io::Result<tokio::net::UnixListener> {
    use std::os::unix::fs::DirBuilderExt;
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("socket path has no directory"))?;
    std::fs::DirBuilder::new().mode(0o700).recursive(true).create(dir)?;
    tokio::net::UnixListener::bind(path)
}

/// Serves the relay tools on `listener` until the harness exits, to the processes of its own
/// CLI only (`cli_pid` and its descendants: its `relay-mcp`, the commands its tools run). Any
/// other process of the same Unix user — another agent's shell command above all — gets a
/// refusal: it would otherwise send as this agent.
pub fn serve(
    listener: tokio::net::UnixListener,
    nats: async_nats::Client,
    relay: Arc<Relay>,
    inbox: Arc<dyn Inbox>,
    cli_pid: Option<u32>,
) {
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            if let Err(refusal) = peer_is_own_cli(&stream, cli_pid) {
                tracing::warn!(%refusal, "relay tools socket: connection refused");
                tokio::spawn(refuse(stream, refusal));
                continue;
            }
            let (nats, relay, inbox) = (nats.clone(), relay.clone(), inbox.clone());
            tokio::spawn(async move {
                let (read, mut write) = stream.into_split();
                let mut lines = BufReader::new(read).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    let answer = match serde_json::from_str::<ToolCall>(&line) {
                        Ok(call) => match call_tool(&nats, &relay, inbox.as_ref(), call).await {
                            Ok(text) => ToolAnswer { ok: true, text },
                            Err(text) => ToolAnswer { ok: false, text },
                        },
                        Err(e) => ToolAnswer {
                            ok: false,
                            text: format!("not a tool call: {e}"),
                        },
                    };
                    let mut out = serde_json::to_vec(&answer).unwrap_or_default();
                    out.push(b'\n');
                    if write.write_all(&out).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
}

/// Whether the process at the other end of `stream` (its credentials taken by the kernel at
/// connect time, SO_PEERCRED) is this harness's CLI or one of its descendants.
fn peer_is_own_cli(stream: &tokio::net::UnixStream, cli_pid: Option<u32>) -> Result<(), String> {
    let cred = stream
        .peer_cred()
        .map_err(|e| format!("the peer's credentials cannot be read: {e}"))?;
    let own_uid = nix::unistd::Uid::effective().as_raw();
    if cred.uid() != own_uid {
        return Err(format!("uid {} is not this harness's user {own_uid}", cred.uid()));
    }
    let pid = match cred.pid() {
        Some(pid) if pid > 0 => pid as u32,
        _ => return Err("the kernel gave no pid for the peer".into()),
    };
    let cli = cli_pid.ok_or("this harness's CLI has no known pid")?;
    if descends_from(pid, cli) {
        Ok(())
    } else {
        Err(format!(
            "process {pid} is not this agent's CLI (pid {cli}) nor one of its descendants"
        ))
    }
}

/// Whether `pid` is `ancestor` or below it, following parents in /proc. A process whose
/// parent died was re-parented away from the CLI and no longer counts as its.
fn descends_from(mut pid: u32, ancestor: u32) -> bool {
    // A chain longer than this is a loop or nothing we started.
    for _ in 0..256 {
        if pid == ancestor {
            return true;
        }
        match parent_of(pid) {
            Some(parent) if parent > 1 && parent != pid => pid = parent,
            _ => return false,
        }
    }
    false
}

/// The parent pid from /proc/<pid>/stat (field 4; the command name before it is in
/// parentheses and may itself hold spaces or parentheses, hence the last ')').
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

/// Tells a refused peer why, in the socket's own answer format, then hangs up. Its request is
/// read first (at most one line, briefly): closing before it is written would break its pipe
/// and hide the answer.
async fn refuse(stream: tokio::net::UnixStream, refusal: String) {
    use tokio::io::AsyncReadExt;
    let (read, mut write) = stream.into_split();
    let mut request = String::new();
    let mut read = BufReader::new(read.take(64 * 1024));
    let _ = tokio::time::timeout(Duration::from_secs(2), read.read_line(&mut request)).await;
    let answer = ToolAnswer {
        ok: false,
        text: format!("refused: this relay tools socket serves only its own agent's CLI; {refusal}"),
    };
    let mut line = serde_json::to_vec(&answer).unwrap_or_default();
    line.push(b'\n');
    let _ = write.write_all(&line).await;
    let _ = write.shutdown().await;
}

fn str_arg(args: &Value, name: &str) -> Option<String> {
    args.get(name).and_then(Value::as_str).map(str::to_string)
}

async fn call_tool(
    nats: &async_nats::Client,
    relay: &Relay,
    inbox: &dyn Inbox,
    call: ToolCall,
) -> Result<String, String> {
    let wire = |e: WireError| format!("{}: {}", e.error.code.as_str(), e.error.message);
    let args = &call.args;
    match call.tool.as_str() {
        "started" => {
            relay.bridge_started.store(true, std::sync::atomic::Ordering::SeqCst);
            Ok(String::new())
        }
        "listed" => {
            relay.listed.send_replace(true);
            Ok(String::new())
        }
        "send" => {
            let text = str_arg(args, "text").ok_or("`text` is required")?;
            let to: Option<To> = args
                .get("to")
                .cloned()
                .map(serde_json::from_value)
                .transpose()
                .map_err(|e| e.to_string())?;
            let req = SendRequest {
                to,
                thread_id: str_arg(args, "threadId"),
                text,
                ..SendRequest::default()
            };
            send(nats, &req).await.map_err(wire)
        }
        "reply" => {
            let text = str_arg(args, "text").ok_or("`text` is required")?;
            let thread = str_arg(args, "messageId")
                .or_else(|| relay.last())
                .ok_or("no relay message to reply to yet: pass `messageId`")?;
            let req = SendRequest {
                thread_id: Some(thread),
                text,
                ..SendRequest::default()
            };
            send(nats, &req).await.map_err(wire)
        }
        "inbox" => {
            let held = inbox.take_relay_held();
            if held.is_empty() {
                return Ok("no new relay messages".into());
            }
            let mut out = Vec::new();
            for (delivery_id, text) in held {
                let delivered = relay_contracts::delivery::ReceiptStatus::Delivered;
                if let Err(e) = report(nats, &delivery_id, delivered, Some("read with relay_inbox".into())).await {
                    tracing::error!(delivery_id, error = %e, "delivery report refused");
                }
                out.push(text);
            }
            Ok(out.join("\n\n"))
        }
        "who" => {
            let req = AgentListRequest::default();
            let list: AgentListResponse = relay_bus::client::call::<rpc::AgentList>(nats, &req, CALL_TIMEOUT)
                .await
                .map_err(wire)?;
            Ok(list
                .agents
                .iter()
                .map(|a| {
                    format!(
                        "@{} ({}, {}, agent {})",
                        a.handle.as_deref().unwrap_or("?"),
                        a.adapter_name,
                        serde_json::to_value(a.status)
                            .ok()
                            .and_then(|v| v.as_str().map(String::from))
                            .unwrap_or_default(),
                        a.agent_id
                    )
                })
                .collect::<Vec<_>>()
                .join("\n"))
        }
        "channels" => {
            for (field, join) in [("join", true), ("leave", false)] {
                if let Some(channel) = str_arg(args, field) {
                    let req = MembershipRequest { channel, agent: None };
                    let changed = if join {
                        relay_bus::client::call::<rpc::ChannelJoin>(nats, &req, CALL_TIMEOUT).await
                    } else {
                        relay_bus::client::call::<rpc::ChannelLeave>(nats, &req, CALL_TIMEOUT).await
                    };
                    changed.map_err(wire)?;
                }
            }
            let list: ChannelList =
                relay_bus::client::call::<rpc::ChannelList>(nats, &ListChannelsRequest {}, CALL_TIMEOUT)
                    .await
                    .map_err(wire)?;
            Ok(list
                .channels
                .iter()
                .map(|c| {
                    format!(
                        "#{} ({} members){}",
                        c.name,
                        c.members,
                        c.topic.as_deref().map(|t| format!(": {t}")).unwrap_or_default()
                    )
                })
                .collect::<Vec<_>>()
                .join("\n"))
        }
        "actions" => {
            let req = relay_contracts::actions::ListActionsRequest {
                agent: str_arg(args, "agent"),
            };
            let list = relay_bus::client::call::<rpc::ActionList>(nats, &req, CALL_TIMEOUT)
                .await
                .map_err(wire)?;
            if list.actions.is_empty() {
                return Ok("no actions you may invoke".into());
            }
            Ok(list
                .actions
                .iter()
                .map(|a| {
                    format!(
                        "@{} {}{} input schema: {}",
                        a.handle.as_deref().unwrap_or(&a.agent_id),
                        a.name,
                        a.description
                            .as_deref()
                            .map_or_else(|| ";".into(), |d| format!(" — {d};")),
                        a.input_schema
                    )
                })
                .collect::<Vec<_>>()
                .join("\n"))
        }
        "invoke" => {
            let req = relay_contracts::actions::InvokeRequest {
                agent: str_arg(args, "agent").ok_or("`agent` is required")?,
                action: str_arg(args, "action").ok_or("`action` is required")?,
                input: args.get("input").cloned().filter(|v| !v.is_null()),
                ..Default::default()
            };
            let done = relay_bus::client::call::<rpc::ActionInvoke>(nats, &req, CALL_TIMEOUT)
                .await
                .map_err(wire)?;
            use relay_contracts::actions::InvocationStatus;
            match (done.status, done.error) {
                (InvocationStatus::Pending, _) => Ok(format!(
                    "{} on {} waits for a person to approve it (invocation {}); its result will come as an action-result relay message",
                    req.action, req.agent, done.invocation_id
                )),
                (_, None) => Ok(done.output.map(|o| o.to_string()).unwrap_or_default()),
                (InvocationStatus::Denied, Some(e)) => Err(format!("{} on {} was {e}", req.action, req.agent)),
                (_, Some(e)) => Err(format!("{} on {} failed: {e}", req.action, req.agent)),
            }
        }
        "vote" => {
            let req = relay_contracts::consensus::VoteRequest {
                proposal_id: str_arg(args, "proposalId").ok_or("`proposalId` is required")?,
                choice: str_arg(args, "choice").ok_or("`choice` is required")?,
                reason: str_arg(args, "reason"),
            };
            let p = relay_bus::client::call::<rpc::ConsensusVote>(nats, &req, CALL_TIMEOUT)
                .await
                .map_err(wire)?;
            let tally: Vec<String> = p.tally.iter().map(|(o, n)| format!("{o}: {n}")).collect();
            let mut text = format!("voted {} on {} ({})", req.choice, p.proposal_id, tally.join(", "));
            if let Some(outcome) = &p.outcome {
                text += &format!("; decided: {outcome}");
            }
            Ok(text)
        }
        "answer" => {
            let id = str_arg(args, "invocationId").ok_or("`invocationId` is required")?;
            let answer = ActionAnswer {
                output: args.get("output").cloned().filter(|v| !v.is_null()),
                error: str_arg(args, "error"),
            };
            let waiting = relay.calls.lock().expect("relay lock").remove(&id);
            match waiting.map(|tx| tx.send(answer)) {
                Some(Ok(())) => Ok(format!("answered invocation {id}")),
                _ => Err(format!(
                    "no call is waiting for invocation {id}: it was answered already or its time ran out"
                )),
            }
        }
        "map_reduce" => map_reduce(nats, relay, args).await,
        other => Err(format!("unknown relay tool {other:?}")),
    }
}

/// `relay_map_reduce`: the lead (this agent) runs `patterns::map_reduce` as itself: workers
/// spawned into its session, each asked with a relay message from it; their `relay_reply`
/// messages come back to it in the asks' threads, and are the answer.
async fn map_reduce(nats: &async_nats::Client, relay: &Relay, args: &Value) -> Result<String, String> {
    use relay_client::patterns::{MapReduce, map_reduce};
    let task = str_arg(args, "task").ok_or("`task` is required")?;
    let cli = str_arg(args, "cli").ok_or("`cli` is required: the kind of agent to spawn (e.g. claude)")?;
    let items: Vec<String> = args
        .get("items")
        .cloned()
        .map(serde_json::from_value)
        .transpose()
        .map_err(|e| format!("`items` must be a list of strings: {e}"))?
        .unwrap_or_default();
    if items.is_empty() || items.len() > MAX_ITEMS {
        return Err(format!("`items` takes 1 to {MAX_ITEMS} items, got {}", items.len()));
    }
    let session = relay.session.get().ok_or("this agent is not attached yet")?;
    let mut opts = MapReduce::new(task, items, cli);
    opts.session_id = Some(session.clone());
    opts.max_workers = args.get("maxWorkers").and_then(Value::as_u64).map(|n| n as usize);
    opts.timeout = Duration::from_secs(
        args.get("timeoutSecs")
            .and_then(Value::as_u64)
            .unwrap_or(MAP_REDUCE_ITEM_SECS)
            .clamp(1, MAP_REDUCE_ITEM_SECS),
    );
    let client = relay_client::Client::new(nats.clone()).with_timeout(CALL_TIMEOUT);
    let done = map_reduce(&client, opts).await.map_err(|e| e.to_string())?;
    let mut out: Vec<String> = done
        .results
        .iter()
        .map(|r| format!("## {}\n{}", r.item, r.result))
        .collect();
    out.extend(
        done.failures
            .iter()
            .map(|f| format!("## {} (failed after {} attempts)\n{}", f.item, f.attempts, f.error)),
    );
    Ok(out.join("\n\n"))
}

/// The most items one `relay_map_reduce` takes.
pub const MAX_ITEMS: usize = 50;
/// The longest one item may take (and the default).
pub const MAP_REDUCE_ITEM_SECS: u64 = 600;

/// How long `relay-mcp` waits for the harness's answer to `tool`. A delegation waits for its
/// workers, each item bounded by the harness; this only guards against a harness gone silent.
pub fn answer_within(tool: &str) -> Duration {
    match tool {
        "map_reduce" => Duration::from_secs(2 * 3600),
        // The mesh asks the policies, then waits up to 30 s for the exposing agent.
        "invoke" => Duration::from_secs(45),
        _ => Duration::from_secs(30),
    }
}

/// A tool call to the harness on `socket`, for `relay-mcp`.
pub async fn ask(socket: &Path, call: &ToolCall) -> ToolAnswer {
    let attempt = async {
        let stream = tokio::net::UnixStream::connect(socket).await?;
        let (read, mut write) = stream.into_split();
        let mut line = serde_json::to_vec(call)?;
        line.push(b'\n');
        write.write_all(&line).await?;
        let mut answer = String::new();
        BufReader::new(read).read_line(&mut answer).await?;
        Ok::<ToolAnswer, std::io::Error>(serde_json::from_str(&answer)?)
    };
    let within = answer_within(&call.tool);
    match tokio::time::timeout(within, attempt).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(e)) => ToolAnswer {
            ok: false,
            text: format!("the relay harness is not reachable: {e}"),
        },
        Err(_) => ToolAnswer {
            ok: false,
            text: format!("the relay harness did not answer in {} s", within.as_secs()),
        },
    }
}

/// What gives a CLI the relay tools: arguments and environment.
#[derive(Debug, Default)]
pub struct CliSetup {
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Files written for the CLI, removed with this value (when the harness ends).
    pub written: Option<Written>,
}

/// A directory of files written for the CLI, removed on drop.
#[derive(Debug)]
pub struct Written(PathBuf);

impl Drop for Written {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl CliSetup {
    /// Whether the CLI is given the relay tools at all (unknown CLIs are not).
    pub fn gives_tools(&self) -> bool {
        !self.args.is_empty() || !self.env.is_empty()
    }
}

/// The relay tools (`relay-mcp` on `socket`) for `cli`, configured the way that CLI takes MCP
/// servers; nothing for a CLI we do not know (it uses the output convention).
pub fn cli_setup(cli: &str, bridge: &Path, socket: &Path) -> CliSetup {
    if cli == "gemini" {
        return gemini_setup(bridge, socket).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "no relay tools for gemini: it uses the output convention");
            CliSetup::default()
        });
    }
    CliSetup {
        args: cli_args(cli, bridge, socket),
        ..CliSetup::default()
    }
}

/// The home directory of the user this process runs as (from the password database, not
/// `$HOME`, which a CLI's environment may point into a scratch directory).
fn own_home() -> std::io::Result<PathBuf> {
    match nix::unistd::User::from_uid(nix::unistd::getuid()) {
        Ok(Some(user)) if !user.dir.as_os_str().is_empty() => Ok(user.dir),
        Ok(_) => Err(std::io::Error::other("no home directory in the password database")),
        Err(e) => Err(std::io::Error::from(e)),
    }
}

/// Gemini CLI reads MCP servers from settings files only. A system-defaults file (the lowest
/// layer: the user's own settings still win) names ours; Gemini refuses one under a directory
/// others may write to (as /tmp), so it lives in `~/.cache/relay-mesh/harness/<id>` (0700) of
/// the user the harness runs as.
fn gemini_setup(bridge: &Path, socket: &Path) -> std::io::Result<CliSetup> {
    use std::os::unix::fs::DirBuilderExt;
    let dir = own_home()?
        .join(".cache/relay-mesh/harness")
        .join(uuid::Uuid::now_v7().to_string());
    std::fs::DirBuilder::new().mode(0o700).recursive(true).create(&dir)?;
    let defaults = serde_json::json!({"mcpServers": {"relay": {
        "command": bridge, "args": ["--socket", socket],
        // The relay tools act only through the mesh, under its own guards: no prompt.
        "trust": true,
    }}});
    let path = dir.join("gemini-system-defaults.json");
    std::fs::write(&path, defaults.to_string())?;
    Ok(CliSetup {
        args: Vec::new(),
        env: vec![(
            "GEMINI_CLI_SYSTEM_DEFAULTS_PATH".into(),
            path.to_string_lossy().into_owned(),
        )],
        written: Some(Written(dir)),
    })
}

/// Command-line arguments that give `cli` the relay tools (`relay-mcp` on `socket`).
fn cli_args(cli: &str, bridge: &Path, socket: &Path) -> Vec<String> {
    match cli {
        "claude" => {
            let config = serde_json::json!({"mcpServers": {"relay": {
                "command": bridge, "args": ["--socket", socket],
            }}});
            // The relay tools act only through the mesh, under its own guards: no prompt.
            vec![format!("--mcp-config={config}"), "--allowedTools=mcp__relay".into()]
        }
        "codex" => {
            // `-c` overrides of config.toml; JSON strings are TOML basic strings.
            let quote = |p: &Path| serde_json::to_string(&p.to_string_lossy()).unwrap_or_default();
            vec![
                "-c".into(),
                format!("mcp_servers.relay.command={}", quote(bridge)),
                "-c".into(),
                format!("mcp_servers.relay.args=[\"--socket\", {}]", quote(socket)),
                // The relay tools act only through the mesh, under its own guards: no prompt.
                "-c".into(),
                "mcp_servers.relay.default_tools_approval_mode=\"approve\"".into(),
            ]
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_convention_is_a_row_that_starts_with_the_marker() {
        assert_eq!(
            parse_convention("->relay:@bob hi there"),
            Some(("@bob".into(), "hi there".into()))
        );
        assert_eq!(
            parse_convention("⏺ ->relay:#ops  deploy done"),
            Some(("#ops".into(), "deploy done".into()))
        );
        assert_eq!(
            parse_convention("->relay:reply ok"),
            Some(("reply".into(), "ok".into()))
        );
        assert_eq!(parse_convention("> say ->relay:@bob hi"), None);
        assert_eq!(parse_convention("->relay:@bob"), None);
        assert_eq!(parse_convention("->relay:bob hi"), None);
    }

    #[test]
    fn a_process_descends_from_itself_and_its_ancestors_only() {
        let me = std::process::id();
        let parent = parent_of(me).expect("a parent in /proc");
        assert!(descends_from(me, me));
        assert!(descends_from(me, parent));
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        assert!(descends_from(child.id(), me));
        assert!(!descends_from(me, child.id()), "a parent is not its child's");
        assert!(!descends_from(parent, me));
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn an_echo_of_typed_text_is_not_sent() {
        let relay = Relay::default();
        relay.typed("please write\n->relay:@bob hi");
        assert!(relay.convention("->relay:@bob hi").is_none());
        assert!(relay.convention("> ->relay:@bob hi").is_none());
        // Text that makes the agent write a line is not that line.
        relay.typed("say ->relay:@dave yo");
        assert!(relay.convention("->relay:@dave yo").is_some());
        let sent = relay.convention("->relay:@carol hello").unwrap();
        assert_eq!(sent.to, Some(To::One("@carol".into())));
        // The same row redrawn is the same send.
        assert_eq!(
            relay.convention("->relay:@carol hello").unwrap().idempotency_key,
            sent.idempotency_key
        );
        // `reply` needs something to reply to.
        assert!(relay.convention("->relay:reply ok").is_none());
    }
}
