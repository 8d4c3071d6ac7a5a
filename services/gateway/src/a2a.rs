//! A2A (Agent2Agent, protocol 1.0, JSON-RPC binding): every agent of a workspace as an A2A
//! agent, and the workspace as one that reaches them all.
//!
//! - `GET /api/v1/a2a/agents/{name}/.well-known/agent-card.json`: the agent's card (its skills
//!   from its declared capabilities and the actions it exposes); JSON-RPC at
//!   `POST /api/v1/a2a/agents/{name}`.
//! - `GET /api/v1/a2a/.well-known/agent-card.json`: the workspace's card, one skill per live
//!   agent; JSON-RPC at `POST /api/v1/a2a`, where a new message names its agent in
//!   `metadata.agent` (a handle or id).
//!
//! A task is one message to an agent: its id is `<agentId>:<messageId>`, its context the
//! agent's session. The gateway keeps no task state: a task is the fold of the session's events
//! from the message's `session.user_message.sent` to the next message for that agent, so every
//! replica answers the same. Stream updates carry the event's seq as the SSE id (and in
//! `metadata.seq`); `SubscribeToTask` with `Last-Event-ID: <seq>` resumes after it, missing
//! nothing and repeating nothing.

use crate::error::{jsonrpc, row};
use crate::extract::Path;
use crate::ops::call;
use crate::sse::{Filter, Live, Start, follow};
use crate::{ApiError, AppState};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use relay_a2a::{A2aTaskPush, PROTOCOL_VERSION, Pending, TaskFold, TaskKey, TaskState, sends_to};
use relay_contracts::automation::{CreateWebhookRequest, ListWebhooksRequest, Webhook, WebhookRef};
use relay_contracts::events::Event;
use relay_contracts::permission::AnswerRequest;
use relay_contracts::rpc;
use relay_contracts::session::{
    Agent, AgentGetRequest, AgentListRequest, AgentTargets, CancelTurnRequest, SendMessageRequest,
};
use relay_contracts::{ErrorCode, WireError};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

// ---------------------------------------------------------------------------------------------
// Agent cards

pub async fn agent_card(
    State(s): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let agent = call::<rpc::AgentGet>(&s, &AgentGetRequest { agent: name.clone() }).await?;
    let url = format!("{}/api/v1/a2a/agents/{name}", base_url(&headers));
    Ok(axum::Json(card_of(&agent, url)).into_response())
}

pub async fn workspace_card(State(s): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    let agents = call::<rpc::AgentList>(&s, &AgentListRequest::default()).await?;
    let workspace = relay_bus::context::outgoing()
        .scope()
        .unwrap_or(relay_contracts::context::DEFAULT_WORKSPACE)
        .to_string();
    let skills: Vec<Value> = agents
        .agents
        .iter()
        .map(|a| {
            let id = a.handle.clone().unwrap_or_else(|| a.agent_id.clone());
            json!({
                "id": id,
                "name": format!("@{id}"),
                "description": format!("{} agent {id} (session {}); name it in metadata.agent", a.adapter_name, a.session_id),
                "tags": [a.adapter_name.clone()],
            })
        })
        .collect();
    let url = format!("{}/api/v1/a2a", base_url(&headers));
    let mut card = card_with(
        format!("relay-mesh workspace {workspace}"),
        "Every live agent of the workspace: send a message with metadata.agent naming one (see skills).".into(),
        url,
        skills,
    );
    card["capabilities"]["extendedAgentCard"] = json!(false);
    Ok(axum::Json(card).into_response())
}

fn card_of(agent: &Agent, url: String) -> Value {
    let name = agent
        .handle
        .clone()
        .map_or_else(|| agent.agent_id.clone(), |h| format!("@{h}"));
    let mut skills = vec![json!({
        "id": "chat",
        "name": "Chat",
        "description": format!("Send {name} ({}) a message; it works on it in its session and answers.", agent.adapter_name),
        "tags": [agent.adapter_name.clone()],
    })];
    // What its AG-UI document says it does (a spawned CLI's harness derives it from its path).
    let agui = serde_json::to_value(&agent.agent_capabilities).unwrap_or_default();
    if agui["execution"]["codeExecution"] == true {
        let approvals = if agui["humanInTheLoop"]["approvals"] == true {
            "; a command that needs approval waits for an operator's decision"
        } else {
            ""
        };
        skills.push(json!({
            "id": "code",
            "name": "Code",
            "description": format!("Reads, edits and runs code in its working directory with its own tools{approvals}."),
            "tags": [agent.adapter_name.clone(), "coding"],
        }));
    }
    if agui["multiAgent"]["delegation"] == true {
        skills.push(json!({
            "id": "delegate",
            "name": "Delegate",
            "description": "Splits a task among worker agents it spawns in its session and combines their answers.",
            "tags": ["multi-agent"],
        }));
    }
    // The AG-UI document's tools (the actions it exposes), as skills.
    let tools = agui["tools"]["items"].as_array();
    for tool in tools.into_iter().flatten() {
        let Some(id) = tool.get("name").and_then(Value::as_str) else {
            continue;
        };
        skills.push(json!({
            "id": id,
            "name": id,
            "description": tool.get("description").and_then(Value::as_str).unwrap_or(id),
            "tags": ["action"],
        }));
    }
    card_with(
        name,
        format!(
            "A {} agent in relay-mesh session {}",
            agent.adapter_name, agent.session_id
        ),
        url,
        skills,
    )
}

fn card_with(name: String, description: String, url: String, skills: Vec<Value>) -> Value {
    json!({
        "name": name,
        "description": description,
        "version": env!("CARGO_PKG_VERSION"),
        "supportedInterfaces": [{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": PROTOCOL_VERSION}],
        "provider": {"organization": "relay-mesh", "url": "https://github.com/relay-mesh"},
        "capabilities": {"streaming": true, "pushNotifications": true},
        "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "description": "A relay-mesh API key"}}},
        "securityRequirements": [{"schemes": {"bearer": {"list": []}}}],
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": skills,
    })
}

/// Where the client reached this gateway, for the card's interface URL.
fn base_url(headers: &HeaderMap) -> String {
    let host = headers.get("host").and_then(|h| h.to_str().ok()).unwrap_or("localhost");
    let scheme = headers
        .get("x-forwarded-proto")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("http");
    format!("{scheme}://{host}")
}

// ---------------------------------------------------------------------------------------------
// JSON-RPC

/// A JSON-RPC error with the A2A code for it.
struct RpcError {
    code: i64,
    message: String,
    /// The relay error code it is, by the error table: sent in `data` (an A2A `ErrorInfo`), and
    /// for a refusal of the call itself (a role, a rate, the mesh down) as the HTTP status.
    wire: Option<WireError>,
}

impl RpcError {
    fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            wire: None,
        }
    }
    fn params(message: impl Into<String>) -> RpcError {
        RpcError::coded(ErrorCode::InvalidRequest, jsonrpc::INVALID_PARAMS, message.into())
    }
    fn task_not_found(id: &str) -> RpcError {
        RpcError::coded(ErrorCode::NotFound, jsonrpc::TASK_NOT_FOUND, format!("no task {id}"))
    }

    /// An error of relay code `code` whose message is `message`.
    fn coded(code: ErrorCode, jsonrpc: i64, message: String) -> RpcError {
        RpcError {
            wire: Some(WireError::new(code, message.clone())),
            ..RpcError::new(jsonrpc, message)
        }
    }

    fn status(&self) -> StatusCode {
        match &self.wire {
            Some(w) if row(w.code()).jsonrpc_http => row(w.code()).http,
            _ => StatusCode::OK,
        }
    }

    /// The JSON-RPC error object: A2A 1.0 puts what an error is in `data` as a
    /// `google.rpc.ErrorInfo`; ours says the relay code and whether a retry may succeed.
    fn body(&self) -> Value {
        let mut error = json!({"code": self.code, "message": self.message});
        if let Some(w) = &self.wire {
            let code = w.code().as_str();
            error["data"] = json!([{
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": code.to_uppercase(),
                "domain": "relay-mesh",
                "metadata": {"code": code, "retryable": w.error.retryable.to_string()},
            }]);
        }
        error
    }
}

impl From<ApiError> for RpcError {
    fn from(e: ApiError) -> RpcError {
        RpcError {
            wire: Some(e.wire()),
            ..RpcError::new(e.row().jsonrpc, e.with_code())
        }
    }
}

impl From<WireError> for RpcError {
    fn from(e: WireError) -> RpcError {
        ApiError::Bus(e).into()
    }
}

fn reply(id: &Value, result: Result<Value, RpcError>) -> Response {
    let e = match result {
        Ok(result) => return axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response(),
        Err(e) => e,
    };
    let status = e.status();
    let mut response = (
        status,
        axum::Json(json!({"jsonrpc": "2.0", "id": id, "error": e.body()})),
    )
        .into_response();
    if let Some(wire) = &e.wire {
        crate::error::http_headers(status, wire, response.headers_mut());
    }
    response
}

/// The subject a method acts through, checked against the caller's role before anything is
/// looked up: a viewer's write is refused whatever it names, never answered "not found".
fn acts_through(method: &str) -> Option<&'static str> {
    use relay_contracts::Rpc;
    match method {
        "SendMessage" | "SendStreamingMessage" => Some(rpc::SessionSendMessage::SUBJECT),
        "CancelTask" => Some(rpc::SessionTurnCancel::SUBJECT),
        "CreateTaskPushNotificationConfig" => Some(rpc::WebhookCreate::SUBJECT),
        "DeleteTaskPushNotificationConfig" => Some(rpc::WebhookDelete::SUBJECT),
        _ => None,
    }
}

pub async fn agent_rpc(
    State(s): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    dispatch(s, Some(name), headers, body).await
}

pub async fn workspace_rpc(State(s): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    dispatch(s, None, headers, body).await
}

async fn dispatch(s: AppState, endpoint_agent: Option<String>, headers: HeaderMap, body: Bytes) -> Response {
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return reply(
            &Value::Null,
            Err(RpcError::coded(ErrorCode::InvalidRequest, -32700, "not JSON".into())),
        );
    };
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let (Some(method), params) = (request.get("method").and_then(Value::as_str), request.get("params")) else {
        return reply(
            &id,
            Err(RpcError::coded(
                ErrorCode::InvalidRequest,
                -32600,
                "a JSON-RPC 2.0 request needs a method".into(),
            )),
        );
    };
    let params = params.cloned().unwrap_or_else(|| json!({}));
    if let Some(subject) = acts_through(method)
        && let Err(e) = crate::auth::check_role(subject)
    {
        return reply(&id, Err(e.into()));
    }
    let a2a = A2a { s, endpoint_agent };
    let last_seq = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<i64>().ok());
    let result = match method {
        "SendMessage" => a2a.send(&params).await.map(|task| json!({ "task": task })),
        "SendStreamingMessage" => match a2a.send_streaming(&params, id.clone()).await {
            Ok(stream) => return stream,
            Err(e) => Err(e),
        },
        "SubscribeToTask" => match a2a.subscribe(&params, id.clone(), last_seq).await {
            Ok(stream) => return stream,
            Err(e) => Err(e),
        },
        "GetTask" => a2a.get(&params).await,
        "ListTasks" => a2a.list(&params).await,
        "CancelTask" => a2a.cancel(&params).await,
        "CreateTaskPushNotificationConfig" => a2a.create_push(&params).await,
        "GetTaskPushNotificationConfig" => a2a.get_push(&params).await.map(|(_, config)| config),
        "ListTaskPushNotificationConfigs" => a2a.list_push(&params).await,
        "DeleteTaskPushNotificationConfig" => a2a.delete_push(&params).await,
        "GetExtendedAgentCard" => Err(RpcError::new(-32007, "this agent has no extended card")),
        other => Err(RpcError::coded(
            ErrorCode::NotFound,
            -32601,
            format!("no method {other}"),
        )),
    };
    reply(&id, result)
}

struct A2a {
    s: AppState,
    /// The agent of a per-agent endpoint; `None` on the workspace's.
    endpoint_agent: Option<String>,
}

/// A task's address: its agent and the relay message that began it.
struct TaskRef {
    agent: Agent,
    message_id: String,
}

impl TaskRef {
    fn key(&self) -> TaskKey {
        TaskKey {
            agent_id: self.agent.agent_id.clone(),
            session_id: self.agent.session_id.clone(),
            message_id: self.message_id.clone(),
        }
    }
}

impl A2a {
    async fn agent(&self, name: &str) -> Result<Agent, RpcError> {
        Ok(call::<rpc::AgentGet>(&self.s, &AgentGetRequest { agent: name.into() }).await?)
    }

    /// The agent a new message goes to: the endpoint's, or the workspace endpoint's
    /// `metadata.agent`.
    async fn target(&self, params: &Value) -> Result<Agent, RpcError> {
        if let Some(name) = &self.endpoint_agent {
            return self.agent(name).await;
        }
        let named = params
            .pointer("/metadata/agent")
            .or_else(|| params.pointer("/message/metadata/agent"))
            .and_then(Value::as_str)
            .ok_or_else(|| {
                RpcError::params(
                    "the workspace endpoint needs metadata.agent: a handle or agent id (see the card's skills)",
                )
            })?;
        self.agent(named).await
    }

    async fn task_ref(&self, task_id: &str) -> Result<TaskRef, RpcError> {
        let (agent_id, message_id) = TaskKey::split(task_id).ok_or_else(|| RpcError::task_not_found(task_id))?;
        let agent = match self.agent(agent_id).await {
            Ok(a) => a,
            Err(e) if e.code == jsonrpc::TASK_NOT_FOUND => return Err(RpcError::task_not_found(task_id)),
            Err(e) => return Err(e),
        };
        if let Some(name) = &self.endpoint_agent {
            let mine = self.agent(name).await?;
            if mine.agent_id != agent.agent_id {
                return Err(RpcError::task_not_found(task_id));
            }
        }
        Ok(TaskRef {
            agent,
            message_id: message_id.into(),
        })
    }

    /// Follows the session, then sends the message (or, with the `taskId` of a task waiting for
    /// input, answers it): the task, where following it starts (a new task from nothing, an
    /// answered one from its history, going on; live events already in it are skipped by seq),
    /// and its live events.
    async fn begin(&self, params: &Value) -> Result<(TaskRef, TaskFold, mpsc::Receiver<Arc<Live>>), RpcError> {
        check_push_allowed(params)?;
        let message = params
            .get("message")
            .ok_or_else(|| RpcError::params("params.message is required"))?;
        let answering = message.get("taskId").and_then(Value::as_str).filter(|t| !t.is_empty());
        let (task, fold, events) = match answering {
            Some(task_id) => {
                let task = self.task_ref(task_id).await?;
                let events = self.follow_session(&task.agent.session_id)?;
                let mut fold = self.fold(&task).await?;
                self.answer(&fold, message).await?;
                if fold.state == TaskState::InputRequired {
                    fold.state = TaskState::Working;
                    fold.pending = None;
                    fold.status_text = None;
                }
                (task, fold, events)
            }
            None => {
                let agent = self.target(params).await?;
                let events = self.follow_session(&agent.session_id)?;
                let text = text_of(message).ok_or_else(|| {
                    RpcError::coded(
                        ErrorCode::InvalidRequest,
                        -32005,
                        "the message needs a text part".into(),
                    )
                })?;
                let chosen = message
                    .get("messageId")
                    .and_then(Value::as_str)
                    .filter(|m| relay_contracts::is_name_id(m))
                    .map(String::from);
                let task = TaskRef {
                    agent,
                    message_id: chosen.clone().unwrap_or_else(|| uuid::Uuid::now_v7().to_string()),
                };
                // A retry (the client's messageId, already sent) sends nothing again: no second
                // push config either.
                let earlier = match chosen {
                    Some(_) => self.start_seq(&task).await?,
                    None => None,
                };
                if earlier.is_none() {
                    let send = SendMessageRequest {
                        agent_ids: Some(AgentTargets::Ids(vec![task.agent.agent_id.clone()])),
                        // The client's message id: a retried SendMessage is the same relay message.
                        message_id: Some(task.message_id.clone()),
                        ..SendMessageRequest::text(task.agent.session_id.clone(), text)
                    };
                    call::<rpc::SessionSendMessage>(&self.s, &send).await?;
                    self.push_on_send(params, &task).await?;
                }
                // What the task did so far is in the log, where no live event repeats it: a
                // retry of a task that ended would wait for nothing. Followed from the task's
                // start instead, it answers what the first send did, at once. (Not in the log
                // yet: its events are still to come, live.)
                let start = match earlier {
                    Some(seq) => Some(seq),
                    None if chosen.is_some() => self.start_seq(&task).await?,
                    None => None,
                };
                let events = match start {
                    Some(seq) => {
                        drop(events);
                        self.follow_session_from(&task.agent.session_id, Start::After(seq - 1))?
                    }
                    None => events,
                };
                return Ok((task, TaskFold::default(), events));
            }
        };
        self.push_on_send(params, &task).await?;
        Ok((task, fold, events))
    }

    async fn send(&self, params: &Value) -> Result<Value, RpcError> {
        let immediately = params
            .pointer("/configuration/returnImmediately")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let (task, mut fold, mut events) = self.begin(params).await?;
        if immediately {
            return Ok(self.fold(&task).await?.task(&task.key()));
        }
        // Blocking: until the task ends or waits for input (A2A's non-streaming default).
        let key = task.key();
        let timeout = tokio::time::sleep(Duration::from_millis(self.s.settings.run_timeout_ms));
        tokio::pin!(timeout);
        loop {
            tokio::select! {
                next = events.recv() => match next {
                    Some(live) => {
                        fold.apply(&live.event, &key);
                        if fold.stops() {
                            break;
                        }
                    }
                    None => break,
                },
                _ = &mut timeout => break,
            }
        }
        if !fold.started {
            // Nothing of it came in time: the task as the log has it.
            return Ok(self.fold(&task).await?.task(&key));
        }
        Ok(fold.task(&key))
    }

    /// The live events of a session (followed before acting on it, so none is missed).
    fn follow_session(&self, session: &str) -> Result<mpsc::Receiver<Arc<Live>>, RpcError> {
        self.follow_session_from(session, Start::Live)
    }

    fn follow_session_from(&self, session: &str, start: Start) -> Result<mpsc::Receiver<Arc<Live>>, RpcError> {
        let filter = Filter {
            session: Some(session.into()),
            workspace: relay_bus::context::outgoing().scope().map(String::from),
            ..Default::default()
        };
        Ok(follow(&self.s, start, filter)?)
    }

    async fn send_streaming(&self, params: &Value, rpc_id: Value) -> Result<Response, RpcError> {
        let (task, fold, events) = self.begin(params).await?;
        Ok(stream(task, fold, events, rpc_id, None, true, 0))
    }

    async fn subscribe(&self, params: &Value, rpc_id: Value, after: Option<i64>) -> Result<Response, RpcError> {
        let task_id = params
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| RpcError::params("params.id is required"))?;
        let task = self.task_ref(task_id).await?;
        let start = self
            .start_seq(&task)
            .await?
            .ok_or_else(|| RpcError::task_not_found(task_id))?;
        let key = task.key();
        let snapshot = relay_a2a::log::fold_from(&self.s.nats, &key, start, None, self.s.timeout()).await?;
        if snapshot.ended() && after.is_none_or(|a| a >= snapshot.last_seq) {
            // Nothing more will happen: the task as it ended.
            let (tx, rx) = mpsc::channel(1);
            let _ = tx.try_send(frame(&rpc_id, None, json!({"task": snapshot.task(&key)})));
            return Ok(crate::sse::from_channel(rx));
        }
        let filter = Filter {
            session: Some(task.agent.session_id.clone()),
            workspace: relay_bus::context::outgoing().scope().map(String::from),
            ..Default::default()
        };
        // From the task's start, so its state is rebuilt; updates at or before `after` are not
        // sent again, and an interrupt already answered does not end the stream.
        let events = follow(&self.s, Start::After(start - 1), filter)?;
        Ok(stream(
            task,
            TaskFold::default(),
            events,
            rpc_id,
            after,
            after.is_none(),
            snapshot.last_seq,
        ))
    }

    async fn get(&self, params: &Value) -> Result<Value, RpcError> {
        let (task, fold) = self.existing(params).await?;
        Ok(fold.task(&task.key()))
    }

    /// The task `params.id` names, as the log has it now.
    async fn existing(&self, params: &Value) -> Result<(TaskRef, TaskFold), RpcError> {
        let task_id = params
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| RpcError::params("params.id is required"))?;
        let task = self.task_ref(task_id).await?;
        let fold = self.fold(&task).await?;
        if !fold.started {
            return Err(RpcError::task_not_found(task_id));
        }
        Ok((task, fold))
    }

    async fn list(&self, params: &Value) -> Result<Value, RpcError> {
        let agent = match (&self.endpoint_agent, params.get("contextId").and_then(Value::as_str)) {
            (Some(name), _) => self.agent(name).await?,
            (None, Some(session)) => {
                let req = AgentListRequest {
                    session_id: Some(session.into()),
                    ..Default::default()
                };
                let agents = call::<rpc::AgentList>(&self.s, &req).await?;
                agents
                    .agents
                    .into_iter()
                    .next()
                    .ok_or_else(|| RpcError::params(format!("no agent in context {session}")))?
            }
            (None, None) => {
                return Err(RpcError::params(
                    "the workspace endpoint lists one context's tasks: contextId",
                ));
            }
        };
        let page_size = params
            .get("pageSize")
            .and_then(Value::as_i64)
            .unwrap_or(50)
            .clamp(1, 100) as usize;
        let sent: Vec<Event> = self
            .sent_events(&agent.session_id)
            .await?
            .into_iter()
            .filter(|e| sends_to(e, &agent.agent_id))
            .collect();
        let total = sent.len();
        // Newest first, as the spec's listing is; only the page is folded.
        let mut tasks = Vec::with_capacity(page_size);
        for e in sent.iter().rev().take(page_size) {
            let message_id = e.payload.get("messageId").and_then(Value::as_str).unwrap_or_default();
            let task = TaskRef {
                agent: agent.clone(),
                message_id: message_id.into(),
            };
            let fold = relay_a2a::log::fold_from(&self.s.nats, &task.key(), e.seq, None, self.s.timeout()).await?;
            tasks.push(fold.task(&task.key()));
        }
        Ok(json!({"tasks": tasks, "nextPageToken": "", "pageSize": page_size, "totalSize": total}))
    }

    async fn cancel(&self, params: &Value) -> Result<Value, RpcError> {
        let (task, fold) = self.existing(params).await?;
        let task_id = task.key().id();
        if fold.terminal() {
            return Err(RpcError::coded(
                ErrorCode::Conflict,
                -32002,
                format!("task {task_id} is {}", fold.state.as_str()),
            ));
        }
        let req = CancelTurnRequest {
            session_id: task.agent.session_id.clone(),
            turn_id: fold.turn_id.clone(),
            reason: Some("A2A CancelTask".into()),
        };
        match call::<rpc::SessionTurnCancel>(&self.s, &req).await {
            Ok(_) => {}
            Err(e) if e.code() == ErrorCode::Conflict => {
                return Err(RpcError::coded(ErrorCode::Conflict, -32002, e.to_string()));
            }
            Err(e) => return Err(e.into()),
        }
        let mut fold = fold;
        fold.state = TaskState::Canceled;
        Ok(fold.task(&task.key()))
    }

    /// Answers what a task waits for with the message: `{"approved": bool}` (a data part, or
    /// the text "approve"/"deny") for a permission, its text for a question.
    async fn answer(&self, fold: &TaskFold, message: &Value) -> Result<(), RpcError> {
        let Some(pending) = &fold.pending else {
            return Err(RpcError::coded(
                ErrorCode::Conflict,
                -32004,
                "the task is not waiting for input; send without taskId to start a new task".into(),
            ));
        };
        let text = text_of(message).unwrap_or_default();
        let data = message
            .get("parts")
            .and_then(Value::as_array)
            .and_then(|parts| parts.iter().find_map(|p| p.get("data")))
            .cloned()
            .unwrap_or(Value::Null);
        match pending {
            Pending::Permission(id) => {
                let approved = data.get("approved").and_then(Value::as_bool).unwrap_or_else(|| {
                    matches!(
                        text.trim().to_lowercase().as_str(),
                        "approve" | "approved" | "yes" | "y" | "allow"
                    )
                });
                let reason = Some("answered over A2A".into());
                crate::ops::decide_permission(&self.s, id.clone(), approved, reason).await?;
            }
            Pending::Question(id) => {
                let req = AnswerRequest {
                    question_id: id.clone(),
                    answer: text,
                };
                call::<rpc::QuestionAnswer>(&self.s, &req).await?;
            }
        }
        Ok(())
    }

    // -----------------------------------------------------------------------------------------
    // Push notifications: each config is a webhook that follows the task (automation posts the
    // task's updates as StreamResponses with the client's token), so they need what webhooks
    // need: an admin key.

    async fn create_push(&self, params: &Value) -> Result<Value, RpcError> {
        let task_id = str_param(params, "taskId")?;
        let task = self.task_ref(task_id).await?;
        if self.start_seq(&task).await?.is_none() {
            return Err(RpcError::task_not_found(task_id));
        }
        self.make_push(&task, params).await
    }

    /// `configuration.taskPushNotificationConfig` of a send: the new task's push.
    async fn push_on_send(&self, params: &Value, task: &TaskRef) -> Result<(), RpcError> {
        if let Some(config) = params.pointer("/configuration/taskPushNotificationConfig") {
            self.make_push(task, config).await?;
        }
        Ok(())
    }

    async fn make_push(&self, task: &TaskRef, config: &Value) -> Result<Value, RpcError> {
        let url = str_param(config, "url")?;
        let token = config.get("token").and_then(Value::as_str).filter(|t| !t.is_empty());
        let req = CreateWebhookRequest {
            url: url.into(),
            description: Some(format!("A2A push of task {}", task.key().id())),
            a2a_task: Some(A2aTaskPush {
                task: task.key(),
                token: token.map(String::from),
            }),
            ..Default::default()
        };
        let webhook = call::<rpc::WebhookCreate>(&self.s, &req).await?;
        Ok(push_config(&webhook))
    }

    async fn get_push(&self, params: &Value) -> Result<(Webhook, Value), RpcError> {
        let task_id = str_param(params, "taskId")?;
        let id = str_param(params, "id")?;
        let webhook = call::<rpc::WebhookGet>(&self.s, &WebhookRef { webhook_id: id.into() }).await?;
        match &webhook.a2a_task {
            Some(push) if push.task.id() == task_id => {
                let config = push_config(&webhook);
                Ok((webhook, config))
            }
            _ => Err(RpcError::coded(
                ErrorCode::NotFound,
                jsonrpc::TASK_NOT_FOUND,
                format!("task {task_id} has no push config {id}"),
            )),
        }
    }

    async fn list_push(&self, params: &Value) -> Result<Value, RpcError> {
        let task_id = str_param(params, "taskId")?;
        let all = call::<rpc::WebhookList>(&self.s, &ListWebhooksRequest::default()).await?;
        let configs: Vec<Value> = all
            .webhooks
            .iter()
            .filter(|w| w.a2a_task.as_ref().is_some_and(|p| p.task.id() == task_id))
            .map(push_config)
            .collect();
        Ok(json!({ "configs": configs }))
    }

    async fn delete_push(&self, params: &Value) -> Result<Value, RpcError> {
        let (webhook, _) = self.get_push(params).await?;
        let req = WebhookRef {
            webhook_id: webhook.webhook_id,
        };
        call::<rpc::WebhookDelete>(&self.s, &req).await?;
        Ok(json!({}))
    }

    /// The session's `session.user_message.sent` events, oldest first.
    async fn sent_events(&self, session_id: &str) -> Result<Vec<Event>, RpcError> {
        Ok(relay_a2a::log::sent_events(&self.s.nats, session_id, self.s.timeout()).await?)
    }

    async fn start_seq(&self, task: &TaskRef) -> Result<Option<i64>, RpcError> {
        Ok(relay_a2a::log::start_seq(&self.s.nats, &task.key(), self.s.timeout()).await?)
    }

    /// The task as the log has it now.
    async fn fold(&self, task: &TaskRef) -> Result<TaskFold, RpcError> {
        Ok(relay_a2a::log::fold(&self.s.nats, &task.key(), None, self.s.timeout()).await?)
    }
}

/// The text of a message's text parts.
fn text_of(message: &Value) -> Option<String> {
    let text = message
        .get("parts")?
        .as_array()?
        .iter()
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n");
    (!text.trim().is_empty()).then_some(text)
}

/// One SSE frame: a JSON-RPC response carrying a StreamResponse, with the event's seq as id.
fn frame(rpc_id: &Value, seq: Option<i64>, result: Value) -> Bytes {
    let body = json!({"jsonrpc": "2.0", "id": rpc_id, "result": result});
    Bytes::from(match seq {
        Some(seq) => format!("id: {seq}\ndata: {body}\n\n"),
        None => format!("data: {body}\n\n"),
    })
}

/// Streams a task's updates from `events` until it ends, or waits for input at or after seq
/// `interrupts_from` (earlier interrupts of a replay were answered since); updates with a seq
/// at or before `after` are folded but not sent (a resumed subscription). `announce` sends the
/// task itself first.
fn stream(
    task: TaskRef,
    mut fold: TaskFold,
    mut events: mpsc::Receiver<Arc<Live>>,
    rpc_id: Value,
    after: Option<i64>,
    announce: bool,
    interrupts_from: i64,
) -> Response {
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let key = task.key();
    tokio::spawn(async move {
        if announce
            && tx
                .send(frame(&rpc_id, None, json!({"task": fold.task(&key)})))
                .await
                .is_err()
        {
            return;
        }
        loop {
            // A client that went away ends the stream now, not at the session's next event.
            let live = tokio::select! {
                next = events.recv() => match next {
                    Some(live) => live,
                    None => return,
                },
                _ = tx.closed() => return,
            };
            let e = &live.event;
            let update = fold.apply(e, &key);
            if let Some(update) = update.filter(|_| after.is_none_or(|a| e.seq > a)) {
                let responses = fold.stream_responses(&key, update, e.seq);
                let last = responses.len().saturating_sub(1);
                for (i, result) in responses.into_iter().enumerate() {
                    // The seq goes on the last frame of the event, so a client resuming from it
                    // has seen all of them.
                    let seq = (i == last).then_some(e.seq);
                    if tx.send(frame(&rpc_id, seq, result)).await.is_err() {
                        return;
                    }
                }
            }
            if fold.ended() || (fold.state == TaskState::InputRequired && e.seq >= interrupts_from) {
                return;
            }
        }
    });
    crate::sse::from_channel(rx)
}

fn str_param<'a>(params: &'a Value, name: &str) -> Result<&'a str, RpcError> {
    params
        .get(name)
        .and_then(Value::as_str)
        .filter(|v| !v.is_empty())
        .ok_or_else(|| RpcError::params(format!("params.{name} is required")))
}

/// A webhook that follows a task, as A2A's `TaskPushNotificationConfig`.
fn push_config(w: &Webhook) -> Value {
    let push = w.a2a_task.as_ref();
    let mut config = json!({
        "id": w.webhook_id,
        "taskId": push.map(|p| p.task.id()).unwrap_or_default(),
        "url": w.url,
    });
    if let Some(token) = push.and_then(|p| p.token.as_ref()) {
        config["token"] = json!(token);
    }
    config
}

/// A send that makes a push config needs what the config needs (an admin key): checked before
/// the message goes, so a refused config sends nothing.
fn check_push_allowed(params: &Value) -> Result<(), RpcError> {
    if params.pointer("/configuration/taskPushNotificationConfig").is_some() {
        crate::auth::check_role(<rpc::WebhookCreate as relay_contracts::Rpc>::SUBJECT)?;
    }
    Ok(())
}
