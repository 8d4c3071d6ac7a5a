//! Sending a relay message: stored once as a relay message (its conversation's view) and once
//! per recipient as a message in the recipient's session with one delivery, so the delivery
//! runner carries it like any other: modes, receipts, retries, order per agent. The sends of one
//! conversation are serialised, so every recipient sees them in one order.

use crate::error::{MessagingError, Result};
use crate::{Change, Delivery, Host, channels, check_id, store};
use relay_contracts::capabilities::DeliveryMode;
use relay_contracts::messaging::*;
use relay_contracts::session::events::{MessageExchanged, MessageReceived, MessageSent};
use relay_contracts::session::{
    Agent, MessageContent, MessageRole, SessionStatus, Source, StructuredContent, handle_of,
};
use relay_contracts::{Caller, RequestContext};
use serde_json::{Value, json};
use sqlx::PgConnection;
use std::collections::BTreeMap;

/// The caller as a sender (and its agent, when an agent sends).
struct Author {
    sender: Sender,
    agent: Option<Agent>,
}

impl Author {
    /// What its messages are stored under (`agent:<id>`, `key:<id>`, `service:<name>`): the
    /// scope of its idempotency keys.
    fn key(&self) -> String {
        format!("{}:{}", self.sender.kind, self.sender.id)
    }
}

async fn sender_of<S: Host>(conn: &mut PgConnection, ctx: &RequestContext) -> Result<Author> {
    if let Some(agent_id) = &ctx.agent {
        let agent = S::agent(conn, agent_id).await?;
        if !agent.is_attached() {
            return Err(MessagingError::Conflict(format!(
                "agent {agent_id} is released; it cannot send"
            )));
        }
        if agent.effective_capabilities().messaging.send != Some(true) {
            return Err(MessagingError::Capability {
                agent_id: agent_id.clone(),
                capability: "messaging.send".into(),
                reason: "the agent did not declare it".into(),
            });
        }
        return Ok(Author {
            sender: Sender {
                kind: "agent".into(),
                id: agent_id.clone(),
                handle: agent.handle.clone(),
            },
            agent: Some(agent),
        });
    }
    let (kind, id) = match &ctx.caller {
        Caller::Admin(k) | Caller::Operator(k) | Caller::Viewer(k) => ("key", k.clone()),
        Caller::Service(name) => ("service", name.clone()),
        // An agent is known by its harness subject only: one that says it is an agent on a
        // plain subject (an SDK connected with the admin's or a service's credentials) would
        // send from `anonymous`, a message nobody can answer.
        Caller::Agent(claimed) => return Err(MessagingError::Forbidden(no_agent_identity(claimed.as_deref()))),
        Caller::Anonymous => ("anonymous", "anonymous".to_string()),
    };
    Ok(Author {
        sender: Sender {
            kind: kind.into(),
            id: id.clone(),
            handle: None,
        },
        agent: None,
    })
}

/// Why an agent without its own NATS identity may not send, and how it gets one.
fn no_agent_identity(claimed: Option<&str>) -> String {
    let agent = claimed.unwrap_or("<agentId>");
    format!(
        "message.send from agent {agent} did not come with that agent's own NATS identity (it came on message.send, \
         not harness.<workspace>.{agent}.message.send: the connection has the admin's, a service's or no \
         credentials), so it would go out from anonymous and nobody could answer it. Connect the agent with \
         credentials minted for it: `relayctl auth harness --dir <auth dir> --agent {agent} [--workspace W] > \
         agent.creds`, then RELAY_NATS__CREDS_FILE=agent.creds (an agent the spawner starts gets them from it)"
    )
}

/// Where a message goes once its address is resolved.
struct Route {
    conversation: String,
    /// Where it was addressed, as seed 003's `message.exchanged` says it.
    to: String,
    /// `dm`, `group` or `channel`.
    kind: String,
    channel: Option<String>,
    thread_id: Option<String>,
    /// The hop of the message it follows in its thread (None: not a thread reply).
    previous_hop: Option<i64>,
    /// Recipient agents with their reason, in order; the sender is never among them.
    recipients: Vec<(Agent, String)>,
}

fn dm_conversation(from: &Author, to: &[Agent]) -> String {
    let mut names: Vec<String> = to.iter().map(Agent::participant).collect();
    names.push(from.sender.display());
    names.sort();
    names.dedup();
    format!("dm:{}", names.join(","))
}

/// `@handle` mentions in `text` that name live agents of the workspace.
async fn mentions<S: Host>(conn: &mut PgConnection, workspace: &str, text: &str) -> Result<Vec<Agent>> {
    let mut out: Vec<Agent> = Vec::new();
    for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '@' || c == '-' || c == '_')) {
        let Some(name) = word.strip_prefix('@').and_then(handle_of) else {
            continue;
        };
        if out.iter().any(|a| a.handle.as_deref() == Some(name.as_str())) {
            continue;
        }
        if let Some(a) = S::agent_by_handle(conn, workspace, &name).await? {
            out.push(a);
        }
    }
    Ok(out)
}

async fn agent_named<S: Host>(conn: &mut PgConnection, workspace: &str, name: &str) -> Result<Agent> {
    let handle = name
        .strip_prefix('@')
        .and_then(handle_of)
        .ok_or_else(|| MessagingError::Invalid(format!("{name:?} is not a handle (`@name`)")))?;
    S::agent_by_handle(conn, workspace, &handle)
        .await?
        .ok_or_else(|| MessagingError::NotFound {
            what: "handle",
            id: format!("@{handle}"),
        })
}

/// `addressed` with `reason`, except those `mentioned` (`mention`), then the mentioned agents
/// not among them: a mention reaches a live agent of the workspace even when it is no member
/// or participant. Never the sender (`own`).
fn with_mentions(
    addressed: Vec<Agent>,
    reason: &'static str,
    mentioned: Vec<Agent>,
    own: Option<&str>,
) -> Vec<(Agent, &'static str)> {
    let is_mentioned = |a: &Agent| mentioned.iter().any(|m| m.agent_id == a.agent_id);
    let mut out: Vec<(Agent, &'static str)> = addressed
        .into_iter()
        .map(|a| {
            let why = if is_mentioned(&a) { "mention" } else { reason };
            (a, why)
        })
        .collect();
    for m in mentioned {
        if Some(m.agent_id.as_str()) != own && !out.iter().any(|(a, _)| a.agent_id == m.agent_id) {
            out.push((m, "mention"));
        }
    }
    out
}

/// Resolves `to` / `threadId` into a conversation and its recipients.
async fn route<S: Host>(conn: &mut PgConnection, workspace: &str, from: &Author, req: &SendRequest) -> Result<Route> {
    let own = from.agent.as_ref().map(|a| a.agent_id.as_str());
    let not_me = |a: &Agent| Some(a.agent_id.as_str()) != own;
    let notification = from.sender.kind == "service";
    let reason = |r: &str| {
        if notification {
            "notification".to_string()
        } else {
            r.to_string()
        }
    };

    if let Some(thread_id) = &req.thread_id {
        check_id("threadId", thread_id)?;
        let (replied, its_workspace) = store::find(conn, thread_id)
            .await?
            .ok_or_else(|| MessagingError::NotFound {
                what: "message",
                id: thread_id.clone(),
            })?;
        // Another workspace's thread is not found, exactly as one that never existed.
        if its_workspace != workspace {
            return Err(MessagingError::NotFound {
                what: "message",
                id: thread_id.clone(),
            });
        }
        let root_id = replied.thread_id.clone().unwrap_or_else(|| replied.message_id.clone());
        let root = if root_id == replied.message_id {
            replied
        } else {
            store::find(conn, &root_id)
                .await?
                .map(|(m, _)| m)
                .ok_or_else(|| MessagingError::NotFound {
                    what: "message",
                    id: root_id.clone(),
                })?
        };
        if let Some(to) = &req.to {
            let names = match to {
                To::One(t) => vec![t.clone()],
                To::Many(ts) => ts.clone(),
            };
            let matches = match &root.channel {
                Some(c) => {
                    names.len() == 1
                        && channel_of(&names[0]).as_deref() == Some(c.as_str())
                        && names[0].starts_with('#')
                }
                None => false,
            };
            if !matches {
                return Err(MessagingError::Invalid(format!(
                    "thread {thread_id} belongs to {}; leave `to` out to reply in it",
                    root.conversation
                )));
            }
        }
        let replies = store::replies(conn, &root_id).await?;
        let previous_hop = replies.last().map_or(root.hop, |m| m.hop);
        // Participants: whoever spoke in the thread, and (in a DM or group) everyone in it.
        let mut ids: Vec<String> = Vec::new();
        for m in std::iter::once(&root).chain(&replies) {
            if m.from.kind == "agent" {
                ids.push(m.from.id.clone());
            }
            for r in &m.recipients {
                if root.channel.is_none() || r.reason == "mention" {
                    ids.push(r.agent_id.clone());
                }
            }
        }
        let mut participants: Vec<Agent> = Vec::new();
        for id in ids {
            if participants.iter().any(|a| a.agent_id == id) || Some(id.as_str()) == own {
                continue;
            }
            if let Ok(agent) = S::agent(conn, &id).await
                && agent.is_attached()
            {
                participants.push(agent);
            }
        }
        let mentioned = mentions::<S>(conn, workspace, &req.text).await?;
        let recipients = with_mentions(participants, "thread-reply", mentioned, own)
            .into_iter()
            .map(|(a, why)| (a, reason(why)))
            .collect();
        return Ok(Route {
            to: match &root.channel {
                Some(c) => format!("#{c}"),
                None => root.conversation.trim_start_matches("dm:").to_string(),
            },
            conversation: root.conversation.clone(),
            kind: root.kind.clone(),
            channel: root.channel.clone(),
            thread_id: Some(root_id),
            previous_hop: Some(previous_hop),
            recipients,
        });
    }

    let to = req.to.as_ref().ok_or_else(|| {
        MessagingError::Invalid(
            "say where the message goes: `to` (@handle, #channel or a list of handles) or `threadId`".into(),
        )
    })?;
    match to {
        To::One(name) if name.starts_with('#') => {
            let channel = channels::existing(conn, workspace, name).await?.name;
            let members: Vec<Agent> = store::member_agents(conn, workspace, &channel)
                .await?
                .into_iter()
                .map(|(member, _)| member)
                .filter(not_me)
                .collect();
            let mentioned = mentions::<S>(conn, workspace, &req.text).await?;
            let recipients = with_mentions(members, "message", mentioned, own)
                .into_iter()
                .map(|(a, why)| (a, reason(why)))
                .collect();
            Ok(Route {
                to: format!("#{channel}"),
                conversation: format!("#{channel}"),
                kind: "channel".into(),
                channel: Some(channel),
                thread_id: None,
                previous_hop: None,
                recipients,
            })
        }
        To::One(name) => {
            let agent = agent_named::<S>(conn, workspace, name).await?;
            if !not_me(&agent) {
                return Err(MessagingError::Invalid("an agent cannot message itself".into()));
            }
            let to = [agent];
            Ok(Route {
                to: to[0].participant(),
                conversation: dm_conversation(from, &to),
                kind: "dm".into(),
                channel: None,
                thread_id: None,
                previous_hop: None,
                recipients: to.into_iter().map(|a| (a, reason("dm"))).collect(),
            })
        }
        To::Many(names) => {
            if names.is_empty() {
                return Err(MessagingError::Invalid("`to` lists no handles".into()));
            }
            let mut agents: Vec<Agent> = Vec::new();
            for name in names {
                let agent = agent_named::<S>(conn, workspace, name).await?;
                // `@Bob` and `@bob` are one agent: it gets the message once.
                if agents.iter().any(|a| a.agent_id == agent.agent_id) {
                    continue;
                }
                if !not_me(&agent) {
                    return Err(MessagingError::Invalid("an agent cannot message itself".into()));
                }
                agents.push(agent);
            }
            Ok(Route {
                to: agents.iter().map(Agent::participant).collect::<Vec<_>>().join(","),
                conversation: dm_conversation(from, &agents),
                kind: if agents.len() == 1 { "dm" } else { "group" }.into(),
                channel: None,
                thread_id: None,
                previous_hop: None,
                recipients: agents.into_iter().map(|a| (a, reason("dm"))).collect(),
            })
        }
    }
}

fn check_request(req: &SendRequest) -> Result<Vec<Value>> {
    if req.text.trim().is_empty() {
        return Err(MessagingError::Invalid("text is empty".into()));
    }
    if req.text.chars().count() > MAX_TEXT_CHARS {
        return Err(MessagingError::Invalid(format!(
            "text is longer than {MAX_TEXT_CHARS} characters"
        )));
    }
    let attachments = req.attachments.clone().unwrap_or_default();
    if attachments.len() > 16 {
        return Err(MessagingError::Invalid("at most 16 attachments".into()));
    }
    for (i, a) in attachments.iter().enumerate() {
        check_attachment(a).map_err(|why| MessagingError::Invalid(format!("attachment {i}: {why}")))?;
    }
    if let Some(d) = &req.deadline
        && !is_rfc3339(d)
    {
        return Err(MessagingError::Invalid(format!(
            "deadline {d:?} is not an RFC 3339 date-time"
        )));
    }
    if let Some(key) = &req.idempotency_key {
        check_id("idempotencyKey", key)?;
    }
    Ok(attachments)
}

/// `{type: "text", text, name?}` or `{type: "image", mediaType: "image/…", data (base64), name?}`.
fn check_attachment(a: &Value) -> std::result::Result<(), String> {
    let Some(fields) = a.as_object() else {
        return Err("must be an object".into());
    };
    let (required, allowed): (&[&str], &[&str]) = match fields.get("type").and_then(Value::as_str) {
        Some("text") => (&["text"], &["type", "text", "name"]),
        Some("image") => (&["mediaType", "data"], &["type", "mediaType", "data", "name"]),
        _ => return Err("needs `type`: image or text".into()),
    };
    if let Some(key) = fields.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(format!("unknown field `{key}`"));
    }
    for key in required.iter().chain(&["name"]) {
        match fields.get(*key) {
            None if *key == "name" => {}
            Some(Value::String(_)) => {}
            _ => return Err(format!("`{key}` must be a string")),
        }
    }
    let media = fields.get("mediaType").and_then(Value::as_str).unwrap_or("image/");
    if !media.starts_with("image/") {
        return Err("`mediaType` must be an image type (image/…)".into());
    }
    Ok(())
}

/// `message.send`.
pub async fn send<S: Host>(host: S, ctx: RequestContext, req: SendRequest) -> Result<SendResponse> {
    let attachments = check_request(&req)?;
    let workspace = ctx.workspace.clone();
    // Who sends, and where to, on a connection of their own before the conversation's turn.
    let (from, route) = {
        let mut conn = host.messaging().db.acquire().await?;
        let from = sender_of::<S>(&mut conn, &ctx).await?;
        if let Some(key) = &req.idempotency_key
            && let Some(m) = store::by_key(&mut conn, &workspace, &from.key(), key).await?
        {
            return Ok(answer(m, true));
        }
        let route = route::<S>(&mut conn, &workspace, &from, &req).await?;
        (from, route)
    };
    let turn = (host.messaging().conversations)
        .turn(format!("{workspace}/{}", route.conversation))
        .await;
    let mut change = host.begin().await?;
    change.hold(turn);
    store::lock_conversation(change.conn(), &workspace, &route.conversation).await?;
    // A retry racing the first send waits on the conversation lock, then finds it.
    if let Some(key) = &req.idempotency_key
        && let Some(m) = store::by_key(change.conn(), &workspace, &from.key(), key).await?
    {
        return Ok(answer(m, true));
    }
    let limits = &host.messaging().settings;
    if route.recipients.len() > limits.max_recipients {
        return Err(MessagingError::Conflict(format!(
            "{} has {} recipients; messaging.max_recipients is {}",
            route.conversation,
            route.recipients.len(),
            limits.max_recipients
        )));
    }
    let now = relay_bus::now_ms();
    let recent = store::recent_count(
        change.conn(),
        &workspace,
        &route.conversation,
        now - 60_000,
        limits.max_per_minute,
    )
    .await?;
    if recent >= limits.max_per_minute {
        return Err(MessagingError::Unavailable(format!(
            "{} took {recent} messages in the last minute; messaging.max_per_minute is {} (try again shortly)",
            route.conversation, limits.max_per_minute
        )));
    }
    // Agents replying to agents count up; a person speaking starts again from 0.
    let hop = match (route.previous_hop, &from.agent) {
        (Some(previous), Some(_)) => previous + 1,
        _ => 0,
    };
    if hop > limits.max_hops {
        return Err(MessagingError::Conflict(format!(
            "reply loop guard: this would be reply {hop} between agents in thread {}; messaging.max_hops is {} until a person speaks in it",
            route.thread_id.as_deref().unwrap_or_default(),
            limits.max_hops
        )));
    }
    if route.kind == "dm"
        && let Some((agent, _)) = route.recipients.first()
        && let Some(refused) = agent.effective_capabilities().refusal(&attachments, req.delivery_mode)
    {
        return Err(MessagingError::Capability {
            agent_id: agent.agent_id.clone(),
            capability: refused.capability,
            reason: refused.reason,
        });
    }

    let message = deliver(&mut change, &workspace, &from, &route, &req, attachments, hop, now).await?;
    change.commit().await?;
    Ok(answer(message, false))
}

/// Stores the message and one delivery per recipient that can take it (a `failed` recipient
/// for each that cannot), with its events. The caller has checked the guards.
#[allow(clippy::too_many_arguments)]
async fn deliver<C: Change>(
    change: &mut C,
    workspace: &str,
    from: &Author,
    route: &Route,
    req: &SendRequest,
    attachments: Vec<Value>,
    hop: i64,
    now: i64,
) -> Result<RelayMessage> {
    let message_id = uuid::Uuid::now_v7().to_string();
    let content = if attachments.is_empty() {
        MessageContent::Text(req.text.clone())
    } else {
        let mut blocks = vec![json!({"type": "text", "text": req.text})];
        blocks.extend(attachments.iter().cloned());
        MessageContent::Structured(StructuredContent {
            blocks: serde_json::from_value(Value::Array(blocks)).map_err(|e| MessagingError::Invalid(e.to_string()))?,
            role: Some(MessageRole::User),
        })
    };
    // Sessions are locked in id order, so two sends with overlapping recipients cannot deadlock.
    let mut by_session: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, (agent, _)) in route.recipients.iter().enumerate() {
        by_session.entry(agent.session_id.clone()).or_default().push(i);
    }
    let mut outcomes: Vec<Option<Recipient>> = vec![None; route.recipients.len()];
    for (session_id, indexes) in by_session {
        let mut session = change.lock_session(&session_id).await?;
        for i in indexes {
            let (agent, reason) = &route.recipients[i];
            let mut outcome = Recipient {
                handle: agent.handle.clone().unwrap_or_default(),
                agent_id: agent.agent_id.clone(),
                reason: reason.clone(),
                status: "failed".into(),
                delivery_id: None,
                error: None,
            };
            // Between agents the default is on-idle: a busy agent is not interrupted, and can
            // read the message with relay_inbox meanwhile.
            let mode = req.delivery_mode.or_else(|| {
                agent
                    .effective_capabilities()
                    .supports_mode(DeliveryMode::OnIdle)
                    .then_some(DeliveryMode::OnIdle)
            });
            let refused = agent
                .effective_capabilities()
                .refusal(&attachments, req.delivery_mode)
                .map(|r| format!("capability_unsupported: {} ({})", r.capability, r.reason))
                .or_else(|| {
                    (session.status != SessionStatus::Active)
                        .then(|| format!("its session {} is {}", session.session_id, session.status.as_str()))
                });
            if let Some(error) = refused {
                outcome.error = Some(error);
                outcomes[i] = Some(outcome);
                continue;
            }
            let relay = RelayContext {
                message_id: message_id.clone(),
                reason: reason.clone(),
                from: from.sender.clone(),
                conversation: route.conversation.clone(),
                channel: route.channel.clone(),
                thread_id: route.thread_id.clone(),
                hop,
                priority: req.priority,
                deadline: req.deadline.clone(),
            };
            let delivery = Delivery {
                content: content.clone(),
                delivery_mode: mode,
                source: if from.agent.is_some() {
                    Source::Extension
                } else {
                    Source::User
                },
                relay,
                priority: req.priority,
                deadline: req.deadline.clone(),
            };
            let delivery_id = change.post(&mut session, agent, delivery).await?;
            let received = MessageReceived {
                session_id: session.session_id.clone(),
                message_id: message_id.clone(),
                delivery_id: delivery_id.clone(),
                agent_id: agent.agent_id.clone(),
                reason: reason.clone(),
            };
            change.emit(&session.session_id, received).await?;
            outcome.status = "queued".into();
            outcome.delivery_id = Some(delivery_id);
            outcomes[i] = Some(outcome);
        }
    }
    let recipients: Vec<Recipient> = outcomes.into_iter().flatten().collect();
    let mut message = RelayMessage {
        message_id: message_id.clone(),
        conversation: route.conversation.clone(),
        kind: route.kind.clone(),
        channel: route.channel.clone(),
        thread_id: route.thread_id.clone(),
        from: from.sender.clone(),
        text: req.text.clone(),
        attachments: (!attachments.is_empty()).then_some(attachments),
        hop,
        priority: req.priority,
        deadline: req.deadline.clone(),
        created_at: now,
        seq: 0,
        recipients,
    };
    message.seq = store::insert_message(
        change.conn(),
        workspace,
        &from.key(),
        req.idempotency_key.as_deref(),
        &message,
    )
    .await?;
    if let Some(agent) = &from.agent {
        let sent = MessageSent {
            session_id: agent.session_id.clone(),
            agent_id: Some(agent.agent_id.clone()),
            message_id: message_id.clone(),
            conversation: route.conversation.clone(),
        };
        change.emit(&agent.session_id, sent).await?;
    }
    let exchanged = MessageExchanged {
        message_id: message_id.clone(),
        session_id: from.agent.as_ref().map(|a| a.session_id.clone()),
        from: from.sender.display(),
        to: route.to.clone(),
        recipients: message
            .recipients
            .iter()
            .filter(|r| r.status == "queued")
            .map(|r| format!("@{}", r.handle))
            .collect(),
        body: message.text.clone(),
        kind: route.kind.clone(),
        thread: route.thread_id.clone(),
        channel: route.channel.clone(),
        conversation: route.conversation.clone(),
        failed: message
            .recipients
            .iter()
            .filter(|r| r.status == "failed")
            .map(|r| format!("@{}", r.handle))
            .collect(),
    };
    // The conversation is the stream: `/channels/{name}/events/sse` follows `#name`.
    change.emit_in(workspace, &route.conversation, exchanged).await?;
    Ok(message)
}

/// `message.sendFor`, from coordination: `message.send` for the agent or person that asked it
/// (a proposal's question goes out from its proposer), with the checks that caller's own send
/// would have. An agent named must be of the request's workspace.
pub async fn send_for<S: Host>(host: S, ctx: RequestContext, req: SendForRequest) -> Result<SendResponse> {
    let asked = match req.agent_id {
        Some(agent_id) => {
            let mut conn = host.messaging().db.acquire().await?;
            if S::agent_workspace(&mut conn, &agent_id).await?.as_deref() != Some(ctx.workspace.as_str()) {
                return Err(MessagingError::agent_not_found(&agent_id));
            }
            RequestContext::harness(&ctx.workspace, &agent_id)
        }
        None => RequestContext::new(Caller::parse(&req.caller), ctx.workspace.clone()),
    };
    send(host, asked, req.message).await
}

/// `message.actionResult`, from coordination: how an invocation ended, told to the agent that
/// invoked it as a DM from the exposing agent with reason `action-result`, once per key.
/// Nothing is posted once the invoker is released.
pub async fn action_result_for<S: Host>(
    host: S,
    ctx: RequestContext,
    req: ActionResultRequest,
) -> Result<ActionResultPosted> {
    if req.text.trim().is_empty() || req.text.chars().count() > MAX_TEXT_CHARS || req.text.contains('\0') {
        return Err(MessagingError::Invalid(format!(
            "text: 1 to {MAX_TEXT_CHARS} characters, not blank, without NUL"
        )));
    }
    let mut change = host.begin().await?;
    for id in [&req.from_agent_id, &req.to_agent_id] {
        if S::agent_workspace(change.conn(), id).await?.as_deref() != Some(ctx.workspace.as_str()) {
            return Err(MessagingError::agent_not_found(id));
        }
    }
    let from = S::agent(change.conn(), &req.from_agent_id).await?;
    let to = S::agent(change.conn(), &req.to_agent_id).await?;
    if !to.is_attached() {
        return Ok(ActionResultPosted { message_id: None });
    }
    let message_id = action_result(&mut change, &ctx.workspace, &from, &to, req.text, &req.idempotency_key).await?;
    change.commit().await?;
    Ok(ActionResultPosted {
        message_id: Some(message_id),
    })
}

/// The outcome of an invocation, told to the agent that invoked it: a DM from the exposing
/// agent with reason `action-result`, once per invocation (`key`), inside `change`; the
/// message's id.
async fn action_result<C: Change>(
    change: &mut C,
    workspace: &str,
    from: &Agent,
    to: &Agent,
    text: String,
    key: &str,
) -> Result<String> {
    let author = Author {
        sender: Sender {
            kind: "agent".into(),
            id: from.agent_id.clone(),
            handle: from.handle.clone(),
        },
        agent: Some(from.clone()),
    };
    if let Some(sent) = store::by_key(change.conn(), workspace, &author.key(), key).await? {
        return Ok(sent.message_id);
    }
    let to = [to.clone()];
    let route = Route {
        to: to[0].participant(),
        conversation: dm_conversation(&author, &to),
        kind: "dm".into(),
        channel: None,
        thread_id: None,
        previous_hop: None,
        recipients: to.into_iter().map(|a| (a, "action-result".to_string())).collect(),
    };
    store::lock_conversation(change.conn(), workspace, &route.conversation).await?;
    let req = SendRequest {
        text,
        idempotency_key: Some(key.to_string()),
        ..SendRequest::default()
    };
    let message = deliver(
        change,
        workspace,
        &author,
        &route,
        &req,
        Vec::new(),
        0,
        relay_bus::now_ms(),
    )
    .await?;
    Ok(message.message_id)
}

fn answer(m: RelayMessage, duplicate: bool) -> SendResponse {
    SendResponse {
        message_id: m.message_id,
        conversation: m.conversation,
        thread_id: m.thread_id,
        recipients: m.recipients,
        duplicate,
    }
}
