//! `POST /api/v1/agents/{name}/agui`: one turn of an agent as an AG-UI run (protocol 1.0, the
//! endpoint `@ag-ui/client`'s `HttpAgent` posts `RunAgentInput` to and reads SSE from).
//!
//! The last user message of the input is sent to the agent's session; the agent's events from
//! the log are then translated as they commit: `tool.called`/`tool.completed` →
//! `TOOL_CALL_START/ARGS/END/RESULT`, the agent's `transcript.chunk` (structured CLIs) or, for a
//! terminal CLI, its final screen → `TEXT_MESSAGE_START/CONTENT/END`. A permission request or a
//! question ends the run with the `interrupt` outcome; the next run's `resume` entries answer
//! them (`{approved: bool}` or `{answer: string}`) and the agent carries on. The run finishes
//! when the agent is idle again, and fails (`RUN_ERROR`) when its delivery fails, the agent goes
//! away, or `gateway.run_timeout_ms` passes.

use crate::extract::Path;
use crate::ops::call;
use crate::sse::{Filter, Live, Start, follow};
use crate::{ApiError, AppState};
use axum::body::Bytes;
use axum::extract::State;
use axum::response::Response;
use relay_contracts::permission::AnswerRequest;
use relay_contracts::rpc;
use relay_contracts::session::{AgentGetRequest, AgentTargets, SendMessageRequest};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// The AG-UI protocol version this endpoint speaks.
pub const PROTOCOL_VERSION: &str = "1.0";

/// What `HttpAgent` posts; fields this endpoint does not use (tools, context, state,
/// forwardedProps) are accepted and ignored.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RunAgentInput {
    thread_id: String,
    run_id: String,
    #[serde(default)]
    messages: Vec<InputMessage>,
    #[serde(default)]
    resume: Vec<ResumeEntry>,
}

#[derive(Debug, Deserialize)]
struct InputMessage {
    role: String,
    #[serde(default)]
    content: Value,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResumeEntry {
    interrupt_id: String,
    status: String,
    #[serde(default)]
    payload: Value,
}

/// Interrupt ids say what they answer: `permission:<requestId>` or `question:<questionId>`.
const PERMISSION: &str = "permission:";
const QUESTION: &str = "question:";

pub async fn run(State(s): State<AppState>, Path(name): Path<String>, body: Bytes) -> Result<Response, ApiError> {
    let input: RunAgentInput =
        serde_json::from_slice(&body).map_err(|e| ApiError::Invalid(format!("not an AG-UI RunAgentInput: {e}")))?;
    // A run sends (or decides) as the caller: a viewer is refused before anything is looked up.
    crate::auth::check_role(<rpc::SessionSendMessage as relay_contracts::Rpc>::SUBJECT)?;
    let agent = call::<rpc::AgentGet>(&s, &AgentGetRequest { agent: name }).await?;
    // Follow before acting, so nothing the agent does in answer is missed.
    let filter = Filter {
        agent: Some(agent.agent_id.clone()),
        workspace: relay_bus::context::outgoing().scope().map(String::from),
        ..Default::default()
    };
    let events = follow(&s, Start::Live, filter)?;
    let resumed = !input.resume.is_empty();
    let mut message_id = None;
    if resumed {
        for entry in &input.resume {
            answer(&s, entry).await?;
        }
    } else {
        let text = last_user_text(&input.messages)
            .ok_or_else(|| ApiError::Invalid("messages: no user message with text to send the agent".into()))?;
        let send = SendMessageRequest {
            agent_ids: Some(AgentTargets::Ids(vec![agent.agent_id.clone()])),
            ..SendMessageRequest::text(agent.session_id.clone(), text)
        };
        message_id = Some(call::<rpc::SessionSendMessage>(&s, &send).await?.message_id);
    }

    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let turn = Turn {
        thread_id: input.thread_id,
        run_id: input.run_id,
        out: tx,
        busy: resumed,
        message_id,
        text_seen: false,
        screen: None,
        tool_calls: Vec::new(),
    };
    let snapshot = json!({
        "sessionId": agent.session_id,
        "agentId": agent.agent_id,
        "handle": agent.handle,
        "adapter": agent.adapter_name,
    });
    let timeout = Duration::from_millis(s.settings.run_timeout_ms.max(1));
    tokio::spawn(turn.drive(events, snapshot, timeout));
    Ok(crate::sse::from_channel(rx))
}

/// Answers one interrupt of an earlier run: a permission decision or a question's answer.
async fn answer(s: &AppState, entry: &ResumeEntry) -> Result<(), ApiError> {
    let resolved = entry.status == "resolved";
    if let Some(request_id) = entry.interrupt_id.strip_prefix(PERMISSION) {
        let approved = resolved && entry.payload.get("approved").and_then(Value::as_bool).unwrap_or(true);
        let reason = entry.payload.get("reason").and_then(Value::as_str).map(String::from);
        crate::ops::decide_permission(s, request_id.into(), approved, reason).await?;
        return Ok(());
    }
    if let Some(question_id) = entry.interrupt_id.strip_prefix(QUESTION) {
        if !resolved {
            return Err(ApiError::Invalid(format!(
                "interrupt {}: a question cannot be cancelled, only answered",
                entry.interrupt_id
            )));
        }
        let answer = match &entry.payload {
            Value::String(a) => a.clone(),
            p => p.get("answer").and_then(Value::as_str).unwrap_or_default().to_string(),
        };
        let req = AnswerRequest {
            question_id: question_id.into(),
            answer,
        };
        call::<rpc::QuestionAnswer>(s, &req).await?;
        return Ok(());
    }
    Err(ApiError::Invalid(format!(
        "resume: interrupt {:?} is not one this endpoint raised",
        entry.interrupt_id
    )))
}

/// The text of the last user message: a string, or the text parts of a content list.
fn last_user_text(messages: &[InputMessage]) -> Option<String> {
    let m = messages.iter().rev().find(|m| m.role == "user")?;
    let text = match &m.content {
        Value::String(t) => t.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    (!text.trim().is_empty()).then_some(text)
}

/// One run being translated.
struct Turn {
    thread_id: String,
    run_id: String,
    out: mpsc::Sender<Bytes>,
    /// The agent was given this run's message (it was typed or delivered, or it called a
    /// tool), so its next idle ends the run; an agent still starting up shows statuses and an
    /// idle before that.
    busy: bool,
    text_seen: bool,
    /// A terminal CLI's latest screen: its answer, when it gives no transcript.
    screen: Option<String>,
    /// The message this run sent (none when it resumed): another's failed delivery is not its.
    message_id: Option<String>,
    /// Tool calls started and not yet answered: (tool, toolCallId).
    tool_calls: Vec<(String, String)>,
}

/// How a run ends.
enum End {
    Finished(Value),
    Error(String, &'static str),
}

impl Turn {
    async fn drive(mut self, mut events: mpsc::Receiver<Arc<Live>>, snapshot: Value, timeout: Duration) {
        let started = json!({"type": "RUN_STARTED", "threadId": self.thread_id, "runId": self.run_id});
        if !self.send(started).await || !self.send(json!({"type": "STATE_SNAPSHOT", "snapshot": snapshot})).await {
            return;
        }
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        let end = loop {
            tokio::select! {
                next = events.recv() => match next {
                    Some(live) => {
                        if let Some(end) = self.translate(&live).await {
                            break end;
                        }
                    }
                    None => break End::Error("the event log could not be followed".into(), "unavailable"),
                },
                _ = &mut deadline => break End::Error("the agent did not finish within gateway.run_timeout_ms".into(), "timeout"),
                _ = self.out.closed() => return,
            }
        };
        let last = match end {
            End::Finished(outcome) => {
                if !self.text_seen
                    && outcome["type"] == "success"
                    && let Some(screen) = self.screen.take()
                {
                    self.text(&format!("screen-{}", self.run_id), &screen).await;
                }
                json!({"type": "RUN_FINISHED", "threadId": self.thread_id, "runId": self.run_id, "outcome": outcome})
            }
            End::Error(message, code) => json!({"type": "RUN_ERROR", "message": message, "code": code}),
        };
        self.send(last).await;
    }

    /// Emits what one committed event means for the run; `Some` when it ends the run.
    async fn translate(&mut self, live: &Live) -> Option<End> {
        let e = &live.event;
        let p = &e.payload;
        let str_of = |k: &str| p.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
        match e.event_type.as_str() {
            "tool.called" => {
                self.busy = true;
                let id = format!("call-{}", e.seq);
                let tool = str_of("tool");
                let args = json!({ "input": p.get("input").cloned().unwrap_or(Value::Null) }).to_string();
                self.send(json!({"type": "TOOL_CALL_START", "toolCallId": id, "toolCallName": tool}))
                    .await;
                self.send(json!({"type": "TOOL_CALL_ARGS", "toolCallId": id, "delta": args}))
                    .await;
                self.send(json!({"type": "TOOL_CALL_END", "toolCallId": id})).await;
                self.tool_calls.push((tool, id));
            }
            "tool.completed" => {
                let tool = str_of("tool");
                if let Some(i) = self.tool_calls.iter().rposition(|(t, _)| *t == tool) {
                    let (_, id) = self.tool_calls.remove(i);
                    let content = match p.get("output") {
                        Some(Value::String(o)) if !o.is_empty() => o.clone(),
                        Some(o) if !o.is_null() => o.to_string(),
                        _ => format!("{tool} completed"),
                    };
                    self.send(json!({"type": "TOOL_CALL_RESULT", "messageId": format!("result-{}", e.seq), "toolCallId": id, "content": content, "role": "tool"}))
                        .await;
                }
            }
            "transcript.chunk" => {
                let chunk = p.get("chunk").cloned().unwrap_or_default();
                let content = chunk.get("content").and_then(Value::as_str).unwrap_or_default();
                match chunk.get("role").and_then(Value::as_str) {
                    // The harness typed a message into the CLI (in its own event order, so
                    // before the idle that follows the work on it).
                    Some("user") => self.busy = true,
                    Some("agent") if !content.is_empty() => {
                        self.busy = true;
                        self.text_seen = true;
                        self.text(&format!("text-{}", e.seq), content).await;
                    }
                    _ => {}
                }
            }
            "terminal.screen" => self.screen = Some(str_of("text")),
            "permission.requested" => {
                let id = str_of("requestId");
                let message = p.get("description").and_then(Value::as_str).map_or_else(
                    || {
                        format!(
                            "{} wants to run {}",
                            e.agent_name.as_deref().unwrap_or("the agent"),
                            str_of("tool")
                        )
                    },
                    String::from,
                );
                let interrupt = json!({
                    "id": format!("{PERMISSION}{id}"),
                    "reason": "tool_approval",
                    "message": message,
                    "responseSchema": {"type": "object", "properties": {"approved": {"type": "boolean"}, "reason": {"type": "string"}}, "required": ["approved"]},
                    "metadata": {"tool": str_of("tool"), "requestId": id},
                });
                return Some(End::Finished(json!({"type": "interrupt", "interrupts": [interrupt]})));
            }
            "question.requested" => {
                let interrupt = json!({
                    "id": format!("{QUESTION}{}", str_of("questionId")),
                    "reason": "input_required",
                    "message": str_of("question"),
                    "responseSchema": {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]},
                });
                return Some(End::Finished(json!({"type": "interrupt", "interrupts": [interrupt]})));
            }
            "status.changed" => match p.get("status").and_then(Value::as_str).unwrap_or_default() {
                "idle" if self.busy => return Some(End::Finished(json!({"type": "success"}))),
                "idle" | "starting" => {}
                "offline" | "released" | "failed" => {
                    return Some(End::Error(format!("the agent went {}", str_of("status")), "agent_gone"));
                }
                _ => {}
            },
            "delivery.delivered" if self.message_id.as_deref() == p.get("messageId").and_then(Value::as_str) => {
                self.busy = true;
            }
            "delivery.failed"
                if self
                    .message_id
                    .as_deref()
                    .is_none_or(|m| p.get("messageId").and_then(Value::as_str) == Some(m)) =>
            {
                return Some(End::Error(
                    format!("the message was not delivered: {}", str_of("reason")),
                    "delivery_failed",
                ));
            }
            _ => {}
        }
        None
    }

    async fn text(&mut self, id: &str, content: &str) {
        self.send(json!({"type": "TEXT_MESSAGE_START", "messageId": id, "role": "assistant"}))
            .await;
        self.send(json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": id, "delta": content}))
            .await;
        self.send(json!({"type": "TEXT_MESSAGE_END", "messageId": id})).await;
    }

    /// False once the client has gone.
    async fn send(&self, event: Value) -> bool {
        let frame = format!("data: {event}\n\n");
        self.out.send(Bytes::from(frame)).await.is_ok()
    }
}
