//! Actions (`action.*`, seed 000 `actions.expose`): what agents offer each other to invoke.
//! An agent exposes its whole set at once; each input schema is compiled then, with remote
//! `$ref`s refused, so a schema can never make the mesh fetch a URL. `action.list` shows a
//! caller only what its `availableTo` lets it invoke, and never a released agent's (the
//! registry says which agents are still attached; a gone agent's actions are dropped then).

use crate::Coordination;
use crate::change::Change;
use crate::error::{CoordinationError, Result};
use crate::registry::{self, as_caller};
use relay_bus::now_ms;
use relay_contracts::actions::*;
use relay_contracts::permission::{Decision, GetPermissionRequest, PermissionDecision, PermissionRequest};
use relay_contracts::rpc;
use relay_contracts::session::events::{ActionCompleted, ActionDenied, ActionFailed, ActionInvoked};
use relay_contracts::session::{Agent, handle_of};
use relay_contracts::{Caller, RequestContext};
use serde_json::{Value, json};
use sqlx::PgConnection;
use sqlx::types::Json;
use std::collections::BTreeMap;
use std::time::Duration;

/// Refuses every external resource: a schema's `$ref` may point only inside itself.
struct NoRemote;

impl jsonschema::Retrieve for NoRemote {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> std::result::Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("remote $ref {uri} is not allowed: a schema may refer only inside itself").into())
    }
}

/// Compiles `schema` as the mesh will use it, within the size and depth limits.
pub fn compile(field: &str, schema: &Value) -> Result<jsonschema::Validator> {
    let bytes = serde_json::to_vec(schema).map_or(0, |b| b.len());
    if bytes > MAX_SCHEMA_BYTES {
        return Err(CoordinationError::Invalid(format!(
            "{field} is {bytes} bytes, at most {MAX_SCHEMA_BYTES}"
        )));
    }
    if depth(schema) > MAX_SCHEMA_DEPTH {
        return Err(CoordinationError::Invalid(format!(
            "{field} nests deeper than {MAX_SCHEMA_DEPTH} levels"
        )));
    }
    jsonschema::options()
        .with_retriever(NoRemote)
        .build(schema)
        .map_err(|e| CoordinationError::Invalid(format!("{field} is not a usable JSON Schema: {e}")))
}

fn depth(v: &Value) -> usize {
    match v {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

fn check(actions: &[ActionSpec]) -> Result<()> {
    if actions.len() > MAX_ACTIONS {
        return Err(CoordinationError::Invalid(format!(
            "{} actions, at most {MAX_ACTIONS}",
            actions.len()
        )));
    }
    let total: usize = actions
        .iter()
        .flat_map(|a| std::iter::once(&a.input_schema).chain(&a.output_schema))
        .map(|schema| serde_json::to_vec(schema).map_or(0, |b| b.len()))
        .sum();
    if total > MAX_TOTAL_SCHEMA_BYTES {
        return Err(CoordinationError::Invalid(format!(
            "the schemas add up to {total} bytes, at most {MAX_TOTAL_SCHEMA_BYTES} for one agent"
        )));
    }
    for (i, a) in actions.iter().enumerate() {
        if !is_action_name(&a.name) {
            return Err(CoordinationError::Invalid(format!(
                "actions[{i}].name {:?}: 1 to {MAX_NAME_CHARS} letters, digits, '_', '-' or '.', starting with a letter",
                a.name
            )));
        }
        if actions[..i].iter().any(|b| b.name == a.name) {
            return Err(CoordinationError::Invalid(format!(
                "action {:?} is exposed twice",
                a.name
            )));
        }
        compile(&format!("actions[{i}].inputSchema"), &a.input_schema)?;
        if let Some(out) = &a.output_schema {
            compile(&format!("actions[{i}].outputSchema"), out)?;
        }
        for who in a.available_to.iter().flatten() {
            if !is_selector(who) {
                return Err(CoordinationError::Invalid(format!(
                    "actions[{i}].availableTo {who:?}: `*`, `@handle`, `#channel` or `role:operator|viewer|admin|agent`"
                )));
            }
        }
    }
    Ok(())
}

fn is_selector(s: &str) -> bool {
    s == "*"
        || (s.starts_with('@') && handle_of(s).is_some())
        || (s.starts_with('#') && relay_contracts::messaging::channel_of(s).is_some())
        || matches!(s, "role:operator" | "role:viewer" | "role:admin" | "role:agent")
}

/// `action.expose`: replaces the agent's actions, and lists them in its AG-UI `tools.items`
/// (the registry checks that the agent is attached and declares `actions.expose`). The rows
/// and the registry's record change together: the rows' transaction commits only once the
/// registry has answered, and an expose that failed half way is repaired by exposing again.
pub async fn expose(c: Coordination, ctx: RequestContext, req: ExposeRequest) -> Result<ActionList> {
    check(&req.actions)?;
    let items: Vec<Value> = req
        .actions
        .iter()
        .map(|a| json!({"name": a.name, "description": a.description, "parameters": a.input_schema}))
        .collect();
    let now = now_ms();
    let mut change = Change::begin(&c).await?;
    // Two exposes of one agent at once: the second waits for the first's rows.
    lock_agent(change.conn(), &req.agent_id).await?;
    replace(change.conn(), &req.agent_id, &ctx.workspace, &req.actions, now).await?;
    let agent = registry::set_tools(&c.nats, &req.agent_id, items).await?;
    change.commit().await?;
    Ok(ActionList {
        actions: req.actions.into_iter().map(|spec| action(&agent, spec, now)).collect(),
    })
}

fn action(agent: &Agent, spec: ActionSpec, exposed_at: i64) -> Action {
    Action {
        agent_id: agent.agent_id.clone(),
        handle: agent.handle.clone(),
        session_id: agent.session_id.clone(),
        name: spec.name,
        description: spec.description,
        input_schema: spec.input_schema,
        output_schema: spec.output_schema,
        available_to: spec.available_to.unwrap_or_else(|| vec!["*".into()]),
        exposed_at,
    }
}

/// Who a caller is, for `availableTo`: an agent's handle and channels, or a person's role.
/// `None`: the mesh's own services and operators' tools, who see everything.
struct Invoker {
    selectors: Vec<String>,
    /// The calling agent, when an agent calls.
    agent: Option<Agent>,
}

impl Invoker {
    fn may(&self, available_to: &[String]) -> bool {
        available_to.iter().any(|s| s == "*" || self.selectors.contains(s))
    }
}

/// `channels`: the `#channel` selectors the caller will be checked against; an agent's
/// membership of each is asked of the registry (`#general` holds every agent).
async fn invoker(c: &Coordination, ctx: &RequestContext, channels: &[&String]) -> Result<Option<Invoker>> {
    if let Some(agent_id) = &ctx.agent {
        let agent = as_caller(ctx, registry::agent_by_id(&c.nats, agent_id)).await?;
        let mut selectors = vec!["role:agent".to_string(), "#general".to_string()];
        selectors.extend(agent.handle.as_ref().map(|h| format!("@{h}")));
        for channel in channels.iter().filter(|ch| ch.as_str() != "#general") {
            let members = match registry::members(&c.nats, channel).await {
                Ok(list) => list.members,
                // A channel that is gone has nobody in it.
                Err(CoordinationError::Upstream(e)) if e.code() == relay_contracts::ErrorCode::NotFound => continue,
                Err(e) => return Err(e),
            };
            if members.iter().any(|m| m.agent_id == *agent_id) {
                selectors.push((*channel).clone());
            }
        }
        return Ok(Some(Invoker {
            selectors,
            agent: Some(agent),
        }));
    }
    let role = match &ctx.caller {
        Caller::Admin(_) => return Ok(None),
        Caller::Operator(_) => "role:operator",
        Caller::Viewer(_) => "role:viewer",
        _ => return Ok(None),
    };
    Ok(Some(Invoker {
        selectors: vec![role.to_string()],
        agent: None,
    }))
}

/// `action.list`: the live agents' actions the caller may invoke.
pub async fn list(c: Coordination, ctx: RequestContext, req: ListActionsRequest) -> Result<ActionList> {
    let only = match req.agent {
        Some(agent) => Some(as_caller(&ctx, registry::agent(&c.nats, &agent)).await?.agent_id),
        None => None,
    };
    let rows = exposed(&c, ctx.scope(), only.as_deref()).await?;
    let channels = channel_selectors(rows.iter().map(|a| &a.available_to));
    let who = invoker(&c, &ctx, &channels).await?;
    Ok(ActionList {
        actions: rows
            .into_iter()
            .filter(|a| who.as_ref().is_none_or(|w| w.may(&a.available_to)))
            .collect(),
    })
}

/// The distinct `#channel` selectors among `available_to` lists.
fn channel_selectors<'a>(lists: impl Iterator<Item = &'a Vec<String>>) -> Vec<&'a String> {
    let mut out: Vec<&String> = lists.flatten().filter(|s| s.starts_with('#')).collect();
    out.sort();
    out.dedup();
    out
}

/// Who the caller is, as an invocation records it.
fn caller_key(ctx: &RequestContext) -> String {
    match (&ctx.agent, &ctx.caller) {
        (Some(agent), _) => format!("agent:{agent}"),
        (None, Caller::Admin(k)) => format!("admin:{k}"),
        (None, Caller::Operator(k)) => format!("operator:{k}"),
        (None, Caller::Viewer(k)) => format!("viewer:{k}"),
        (None, Caller::Service(s)) => format!("service:{s}"),
        (None, Caller::Agent(Some(a))) => format!("agent:{a}"),
        (None, _) => "anonymous".into(),
    }
}

/// What an invocation needs to run and to be recorded, kept with it while a person decides.
struct Open {
    workspace: String,
    caller: String,
    /// The calling agent, told the outcome with an `action-result` message.
    caller_agent: Option<String>,
    target: Agent,
    call: ActionCall,
}

/// `action.invoke`: checks the caller and the input, asks the permission policies, records the
/// invocation (`action.invoked`) before the exposing harness is asked, then records how it
/// ended. A policy that wants a person leaves it `pending`; [`sweep`] runs it once approved.
pub async fn invoke(c: Coordination, ctx: RequestContext, req: InvokeRequest) -> Result<Invocation> {
    let timeout_ms = req.timeout_ms.unwrap_or(MAX_INVOKE_TIMEOUT_MS as f64);
    if !(1.0..=MAX_INVOKE_TIMEOUT_MS as f64).contains(&timeout_ms) {
        return Err(CoordinationError::Invalid(format!(
            "timeoutMs {timeout_ms}: 1 to {MAX_INVOKE_TIMEOUT_MS}"
        )));
    }
    let timeout_ms = timeout_ms.ceil() as u64;
    let target = as_caller(&ctx, registry::agent(&c.nats, &req.agent)).await?;
    if !target.is_attached() {
        return Err(CoordinationError::NotFound {
            what: "agent",
            id: req.agent.clone(),
        });
    }
    let mut conn = c.db.acquire().await?;
    let (spec, workspace) = exposed_spec(&mut conn, &target.agent_id, &req.action)
        .await?
        .ok_or_else(|| CoordinationError::NotFound {
            what: "action",
            id: format!("{} of agent {}", req.action, req.agent),
        })?;
    drop(conn);
    let available_to = spec.available_to.clone().unwrap_or_else(|| vec!["*".into()]);
    let who = invoker(&c, &ctx, &channel_selectors(std::iter::once(&available_to))).await?;
    if let Some(who) = &who
        && !who.may(&available_to)
    {
        return Err(CoordinationError::Forbidden(format!(
            "action {} is available to {} only",
            req.action,
            available_to.join(", ")
        )));
    }
    if let Some(caller) = who.and_then(|w| w.agent)
        && caller.effective_capabilities().actions.and_then(|a| a.invoke) != Some(true)
    {
        return Err(CoordinationError::Capability {
            agent_id: caller.agent_id,
            capability: "actions.invoke".into(),
            reason: "the agent did not declare it".into(),
        });
    }
    let input = req.input.unwrap_or_else(|| json!({}));
    let problems: Vec<Value> = compile("inputSchema", &spec.input_schema)?
        .iter_errors(&input)
        .map(|e| json!({"path": e.instance_path().to_string(), "message": e.to_string()}))
        .collect();
    if let Some(first) = problems.first() {
        return Err(CoordinationError::InvalidWith {
            message: format!(
                "input does not match the input schema of {}: {}",
                req.action,
                first["message"].as_str().unwrap_or_default()
            ),
            details: json!({ "errors": problems }),
        });
    }

    let caller = caller_key(&ctx);
    let invocation_id = req.invocation_id.unwrap_or_else(crate::new_id);
    let mut change = Change::begin(&c).await?;
    // Two calls with one id at once: the second waits for the first's row, then sees it.
    lock_invocation(change.conn(), &workspace, &caller, &invocation_id).await?;
    if let Some(found) = find_invocation(change.conn(), &workspace, &caller, &invocation_id).await? {
        return Ok(found);
    }
    let open = Open {
        call: ActionCall {
            invocation_id: invocation_id.clone(),
            action: req.action.clone(),
            input,
            caller: caller.clone(),
            timeout_ms,
        },
        workspace,
        caller,
        caller_agent: ctx.agent.clone(),
        target,
    };
    let verdict = ask_policies(&c, &open).await?;
    let mut inv = Invocation {
        invocation_id,
        agent_id: open.target.agent_id.clone(),
        action: req.action,
        status: InvocationStatus::Running,
        output: None,
        error: None,
        permission_request_id: Some(verdict.request_id.clone()),
        started_at: now_ms(),
        completed_at: None,
    };
    match verdict.decision {
        Decision::Approved => {
            save_invocation(change.conn(), &open, &inv).await?;
            change
                .emit(&open.workspace, &open.target.session_id, invoked(&open))
                .await?;
            change.commit().await?;
            run(&c, &open, inv).await
        }
        Decision::Pending => {
            inv.status = InvocationStatus::Pending;
            save_invocation(change.conn(), &open, &inv).await?;
            change.commit().await?;
            Ok(inv)
        }
        Decision::Denied => {
            let reason = refusal(verdict.decided_by.as_deref(), verdict.reason.as_deref());
            deny(&mut change, &open, &mut inv, reason).await?;
            save_invocation(change.conn(), &open, &inv).await?;
            change.commit().await?;
            tell_caller(&c, &open, &inv).await;
            Ok(inv)
        }
    }
}

fn invoked(open: &Open) -> ActionInvoked {
    ActionInvoked {
        session_id: open.target.session_id.clone(),
        agent_id: open.target.agent_id.clone(),
        action: open.call.action.clone(),
        invocation_id: open.call.invocation_id.clone(),
        caller: open.caller.clone(),
    }
}

/// Why a policy or a person refused an invocation.
fn refusal(decided_by: Option<&str>, reason: Option<&str>) -> String {
    let by = decided_by.unwrap_or("policy");
    match reason {
        Some(why) => format!("denied by {by}: {why}"),
        None => format!("denied by {by}"),
    }
}

const POLICY_TIMEOUT: Duration = Duration::from_secs(5);

/// The permission manager's verdict on this invocation: tool `action`, command the action's
/// name, on the exposing agent's session. Without one, nothing runs.
async fn ask_policies(c: &Coordination, open: &Open) -> Result<PermissionDecision> {
    let mut input = open.call.input.to_string();
    if input.len() > 2000 {
        let cut = (0..=2000).rev().find(|i| input.is_char_boundary(*i)).unwrap_or(0);
        input.truncate(cut);
        input.push('…');
    }
    let asked = PermissionRequest {
        request_id: Some(format!("action-{}", crate::new_id())),
        agent_id: open.target.agent_id.clone(),
        session_id: open.target.session_id.clone(),
        tool: "action".into(),
        command: Some(open.call.action.clone()),
        file_path: None,
        description: format!(
            "{} invokes {} on {} with {input}",
            open.caller,
            open.call.action,
            who(&open.target)
        ),
    };
    let call = relay_bus::client::call::<rpc::PermissionRequest>(&c.nats, &asked, POLICY_TIMEOUT);
    registry::as_service(&open.workspace, call).await.map_err(|e| {
        CoordinationError::Unavailable(format!(
            "the permission policies cannot decide on this invocation now ({}); nothing ran, try again",
            e.error.message
        ))
    })
}

fn who(agent: &Agent) -> String {
    match &agent.handle {
        Some(h) => format!("@{h}"),
        None => format!("agent {}", agent.agent_id),
    }
}

async fn deny(change: &mut Change, open: &Open, inv: &mut Invocation, reason: String) -> Result<()> {
    inv.status = InvocationStatus::Denied;
    inv.error = Some(reason.clone());
    inv.completed_at = Some(now_ms());
    let denied = ActionDenied {
        session_id: open.target.session_id.clone(),
        agent_id: open.target.agent_id.clone(),
        action: open.call.action.clone(),
        invocation_id: open.call.invocation_id.clone(),
        caller: open.caller.clone(),
        reason,
    };
    change.emit(&open.workspace, &open.target.session_id, denied).await
}

/// Asks the exposing harness and records the outcome; a call whose agent is released while it
/// waits fails then, not at its timeout.
async fn run(c: &Coordination, open: &Open, mut inv: Invocation) -> Result<Invocation> {
    let subject = relay_contracts::rpc::agent::invoke(&open.target.agent_id);
    let within = Duration::from_millis(open.call.timeout_ms);
    let answered = relay_bus::client::request::<_, ActionAnswer>(&c.nats, &subject, &open.call, within);
    let retryable;
    tokio::select! {
        answer = answered => {
            retryable = answer.is_err();
            match answer {
                Ok(ActionAnswer { error: None, output }) => {
                    inv.status = InvocationStatus::Completed;
                    inv.output = Some(output.unwrap_or(Value::Null));
                }
                Ok(ActionAnswer { error: Some(e), .. }) => inv.error = Some(e),
                Err(e) if e.code() == relay_contracts::ErrorCode::Timeout => {
                    inv.error = Some(format!("no answer from the agent within {} ms", open.call.timeout_ms));
                }
                Err(e) => inv.error = Some(format!("the agent could not take it: {e}")),
            }
        }
        () = released(c, &open.workspace, &open.target.agent_id) => {
            retryable = true;
            inv.error = Some(format!("{} was released during the call", who(&open.target)));
        }
    }
    if inv.error.is_some() {
        inv.status = InvocationStatus::Failed;
    }
    let done = now_ms();
    inv.completed_at = Some(done);
    let mut change = Change::begin(c).await?;
    save_invocation(change.conn(), open, &inv).await?;
    let (session_id, agent_id) = (open.target.session_id.clone(), open.target.agent_id.clone());
    let (action, invocation_id) = (open.call.action.clone(), open.call.invocation_id.clone());
    match &inv.error {
        None => {
            let completed = ActionCompleted {
                session_id: session_id.clone(),
                agent_id,
                action,
                invocation_id,
                duration_ms: done - inv.started_at,
            };
            change.emit(&open.workspace, &session_id, completed).await?
        }
        Some(error) => {
            let failed = ActionFailed {
                session_id: session_id.clone(),
                agent_id,
                action,
                invocation_id,
                error: error.clone(),
                retryable,
            };
            change.emit(&open.workspace, &session_id, failed).await?
        }
    }
    change.commit().await?;
    tell_caller(c, open, &inv).await;
    Ok(inv)
}

/// Returns once `agent_id` is no longer attached (polled: the release may come to any
/// registry replica). A registry that cannot answer leaves the call to its timeout.
async fn released(c: &Coordination, workspace: &str, agent_id: &str) {
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        if let Ok(found) = registry::find(&c.nats, workspace, agent_id).await
            && !found.as_ref().is_some_and(Agent::is_attached)
        {
            return;
        }
    }
}

/// Whether the invoking agent is still to be told how `inv` ended: an agent other than the
/// exposing one invoked it, and it is over.
fn must_tell(open: &Open, inv: &Invocation) -> bool {
    let over = matches!(
        inv.status,
        InvocationStatus::Completed | InvocationStatus::Failed | InvocationStatus::Denied
    );
    over && open.caller_agent.as_ref().is_some_and(|a| *a != open.target.agent_id)
}

/// An agent caller gets the outcome as an `action-result` message from the exposing agent,
/// stored by the registry once per invocation. Until it is, the row stays `tell_pending` and
/// the [`sweep`] tries again.
async fn tell_caller(c: &Coordination, open: &Open, inv: &Invocation) {
    // Bounded: the reply to the invoker waits on it; a slow registry is left to the sweep.
    match tokio::time::timeout(TELL_WAIT, try_tell_caller(c, open, inv)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            tracing::warn!(error = %e, invocation_id = inv.invocation_id, "cannot tell the invoking agent yet")
        }
        Err(_) => tracing::warn!(
            invocation_id = inv.invocation_id,
            "telling the invoking agent is slow: left to the sweep"
        ),
    }
}

/// How long an invocation's reply waits for its result message to be stored.
const TELL_WAIT: Duration = Duration::from_secs(2);

async fn try_tell_caller(c: &Coordination, open: &Open, inv: &Invocation) -> Result<()> {
    let Some(caller) = open.caller_agent.as_ref().filter(|_| must_tell(open, inv)) else {
        return Ok(());
    };
    let head = format!(
        "{} on {} (invocation {})",
        inv.action,
        who(&open.target),
        inv.invocation_id
    );
    let mut text = match (inv.status, &inv.output, &inv.error) {
        (InvocationStatus::Completed, output, _) => {
            format!("{head} completed: {}", output.clone().unwrap_or(Value::Null))
        }
        (InvocationStatus::Denied, _, Some(e)) => format!("{head} was denied: {e}"),
        (_, _, e) => format!("{head} failed: {}", e.as_deref().unwrap_or("unknown error")),
    };
    let most = relay_contracts::messaging::MAX_TEXT_CHARS - 1;
    if text.chars().count() > most {
        text = text.chars().take(most - 1).collect::<String>() + "…";
    }
    let key = format!("action-result:{}", inv.invocation_id);
    match registry::action_result(&c.nats, &open.workspace, &open.target.agent_id, caller, text, key).await {
        Ok(_) => {}
        // The invoking agent's session (or the exposing agent's) is gone: nobody is left to
        // tell, and the row must not wait for it.
        Err(CoordinationError::Upstream(e)) if e.code() == relay_contracts::ErrorCode::NotFound => {
            tracing::info!(invocation_id = inv.invocation_id, error = %e, "the invoking agent is gone: not told");
        }
        Err(e) => return Err(e),
    }
    sqlx::query(
        "UPDATE coordination_invocations SET tell_pending = false
         WHERE workspace = $1 AND caller = $2 AND invocation_id = $3",
    )
    .bind(&open.workspace)
    .bind(&open.caller)
    .bind(&inv.invocation_id)
    .execute(&c.db)
    .await?;
    Ok(())
}

/// Runs what people decided: an approved pending invocation goes to its agent, a denied one
/// ends `denied`; a running one whose coordination replica stopped during the call (past its
/// timeout and a grace) ends `failed`; an ended one whose invoker was not told yet is told.
/// Each is claimed with a conditional update, so one replica acts.
pub async fn sweep(c: &Coordination) -> Result<()> {
    let mut conn = c.db.acquire().await?;
    let open = open_invocations(&mut conn).await?;
    drop(conn);
    for (workspace, caller, caller_agent, inv, call) in open {
        let target = match registry::find(&c.nats, &workspace, &inv.agent_id).await {
            Ok(Some(target)) => target,
            // Its agent is gone with its session: nobody is left to speak for it.
            Ok(None) => {
                forget_telling(&c.db, &workspace, &caller, &inv.invocation_id).await?;
                continue;
            }
            Err(_) => continue,
        };
        let open = Open {
            workspace,
            caller,
            caller_agent,
            target,
            call,
        };
        match inv.status {
            InvocationStatus::Pending => decided(c, open, inv).await?,
            InvocationStatus::Running => {
                let stale = inv.started_at + open.call.timeout_ms as i64 + STALE_GRACE_MS;
                if now_ms() > stale {
                    let mut done = inv.clone();
                    done.status = InvocationStatus::Failed;
                    done.error = Some("coordination stopped during the call; whether the action ran is unknown".into());
                    done.completed_at = Some(now_ms());
                    let mut change = Change::begin(c).await?;
                    if claim(change.conn(), &open, InvocationStatus::Running, &done).await? {
                        let failed = ActionFailed {
                            session_id: open.target.session_id.clone(),
                            agent_id: open.target.agent_id.clone(),
                            action: open.call.action.clone(),
                            invocation_id: open.call.invocation_id.clone(),
                            error: done.error.clone().unwrap_or_default(),
                            retryable: false,
                        };
                        change.emit(&open.workspace, &open.target.session_id, failed).await?;
                        change.commit().await?;
                        tell_caller(c, &open, &done).await;
                    }
                }
            }
            _ => tell_caller(c, &open, &inv).await,
        }
    }
    Ok(())
}

/// How long past its timeout a running invocation may stay so before it is called lost.
const STALE_GRACE_MS: i64 = 15_000;

async fn decided(c: &Coordination, open: Open, mut inv: Invocation) -> Result<()> {
    let Some(request_id) = inv.permission_request_id.clone() else {
        return Ok(());
    };
    let asked = GetPermissionRequest { request_id };
    let get = relay_bus::client::call::<rpc::PermissionGet>(&c.nats, &asked, POLICY_TIMEOUT);
    let permission = match registry::as_service(&open.workspace, get).await {
        Ok(p) => p,
        Err(e) => {
            tracing::info!(error = %e, invocation_id = inv.invocation_id, "cannot read the decision yet");
            return Ok(());
        }
    };
    let mut change = Change::begin(c).await?;
    match permission.status {
        Decision::Pending => return Ok(()),
        Decision::Approved => {
            inv.status = InvocationStatus::Running;
            // Its time runs from when the agent is asked.
            inv.started_at = now_ms();
            if !claim(change.conn(), &open, InvocationStatus::Pending, &inv).await? {
                return Ok(());
            }
            change
                .emit(&open.workspace, &open.target.session_id, invoked(&open))
                .await?;
            change.commit().await?;
            let c = c.clone();
            tokio::spawn(async move {
                if let Err(e) = run(&c, &open, inv).await {
                    tracing::warn!(error = %e, "cannot record an approved invocation's outcome");
                }
            });
        }
        Decision::Denied => {
            let reason = refusal(permission.decided_by.as_deref(), permission.reason.as_deref());
            let mut done = inv.clone();
            deny(&mut change, &open, &mut done, reason).await?;
            if !claim(change.conn(), &open, InvocationStatus::Pending, &done).await? {
                return Ok(());
            }
            change.commit().await?;
            tell_caller(c, &open, &done).await;
        }
    }
    Ok(())
}

// ---- SQL (coordination_actions, coordination_invocations) -----------------------------------

/// Held while an agent's set of actions is replaced.
async fn lock_agent(conn: &mut PgConnection, agent_id: &str) -> Result<()> {
    sqlx::query("SELECT pg_advisory_xact_lock(hashtext('relay-actions:' || $1))")
        .bind(agent_id)
        .execute(conn)
        .await?;
    Ok(())
}

async fn replace(
    conn: &mut PgConnection,
    agent_id: &str,
    workspace: &str,
    actions: &[ActionSpec],
    now: i64,
) -> Result<()> {
    sqlx::query("DELETE FROM coordination_actions WHERE agent_id = $1")
        .bind(agent_id)
        .execute(&mut *conn)
        .await?;
    for a in actions {
        sqlx::query(
            "INSERT INTO coordination_actions (agent_id, name, workspace, doc, exposed_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(agent_id)
        .bind(&a.name)
        .bind(workspace)
        .bind(Json(a))
        .bind(now)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// The actions of live agents, in `workspace` (all when `None`), of one agent when given, by
/// handle, agent and name. Whether each agent is still attached is asked of the registry; the
/// actions of one that is gone are dropped.
async fn exposed(c: &Coordination, workspace: Option<&str>, agent_id: Option<&str>) -> Result<Vec<Action>> {
    let rows: Vec<(String, String, Json<ActionSpec>, i64)> = sqlx::query_as(
        "SELECT agent_id, workspace, doc, exposed_at FROM coordination_actions
         WHERE ($1::text IS NULL OR workspace = $1) AND ($2::text IS NULL OR agent_id = $2)
         ORDER BY agent_id, name",
    )
    .bind(workspace)
    .bind(agent_id)
    .fetch_all(&c.db)
    .await?;
    let mut agents: BTreeMap<String, Option<Agent>> = BTreeMap::new();
    for (id, workspace, _, _) in &rows {
        if !agents.contains_key(id) {
            let found = match registry::find(&c.nats, workspace, id).await {
                Ok(found) => found.filter(Agent::is_attached),
                // Not to be told apart from another agent's handle: left out, not dropped.
                Err(CoordinationError::Conflict(e)) => {
                    tracing::warn!(agent_id = id, error = e, "an exposing agent cannot be looked up by id");
                    agents.insert(id.clone(), None);
                    continue;
                }
                Err(e) => return Err(e),
            };
            if found.is_none() {
                sqlx::query("DELETE FROM coordination_actions WHERE agent_id = $1")
                    .bind(id)
                    .execute(&c.db)
                    .await?;
            }
            agents.insert(id.clone(), found);
        }
    }
    let mut out: Vec<Action> = rows
        .into_iter()
        .filter_map(|(id, _, Json(spec), at)| agents[&id].as_ref().map(|agent| action(agent, spec, at)))
        .collect();
    // As Postgres orders them: handles first, by handle; then by agent and name.
    out.sort_by(|a, b| {
        (a.handle.is_none(), &a.handle, &a.agent_id, &a.name).cmp(&(
            b.handle.is_none(),
            &b.handle,
            &b.agent_id,
            &b.name,
        ))
    });
    Ok(out)
}

/// An exposed action and the workspace it was exposed in.
async fn exposed_spec(conn: &mut PgConnection, agent_id: &str, name: &str) -> Result<Option<(ActionSpec, String)>> {
    let row: Option<(Json<ActionSpec>, String)> =
        sqlx::query_as("SELECT doc, workspace FROM coordination_actions WHERE agent_id = $1 AND name = $2")
            .bind(agent_id)
            .bind(name)
            .fetch_optional(conn)
            .await?;
    Ok(row.map(|(Json(spec), workspace)| (spec, workspace)))
}

async fn lock_invocation(conn: &mut PgConnection, workspace: &str, caller: &str, id: &str) -> Result<()> {
    sqlx::query("SELECT pg_advisory_xact_lock(hashtext('relay-invocation:' || $1 || '/' || $2 || '/' || $3))")
        .bind(workspace)
        .bind(caller)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

async fn find_invocation(
    conn: &mut PgConnection,
    workspace: &str,
    caller: &str,
    id: &str,
) -> Result<Option<Invocation>> {
    let row: Option<Json<Invocation>> = sqlx::query_scalar(
        "SELECT doc FROM coordination_invocations WHERE workspace = $1 AND caller = $2 AND invocation_id = $3 FOR UPDATE",
    )
    .bind(workspace)
    .bind(caller)
    .bind(id)
    .fetch_optional(conn)
    .await?;
    Ok(row.map(|Json(inv)| inv))
}

async fn save_invocation(conn: &mut PgConnection, open: &Open, inv: &Invocation) -> Result<()> {
    sqlx::query(
        "INSERT INTO coordination_invocations (workspace, caller, invocation_id, agent_id, doc, call, caller_agent, tell_pending)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (workspace, caller, invocation_id) DO UPDATE SET doc = EXCLUDED.doc, tell_pending = EXCLUDED.tell_pending",
    )
    .bind(&open.workspace)
    .bind(&open.caller)
    .bind(&inv.invocation_id)
    .bind(&inv.agent_id)
    .bind(Json(inv))
    .bind(Json(&open.call))
    .bind(&open.caller_agent)
    .bind(must_tell(open, inv))
    .execute(conn)
    .await?;
    Ok(())
}

/// Moves an invocation on from `from`; false when another replica (or call) already did.
async fn claim(conn: &mut PgConnection, open: &Open, from: InvocationStatus, inv: &Invocation) -> Result<bool> {
    let from = serde_json::to_value(from).map_err(|e| CoordinationError::Invalid(e.to_string()))?;
    let done = sqlx::query(
        "UPDATE coordination_invocations SET doc = $4, tell_pending = $6
         WHERE workspace = $1 AND caller = $2 AND invocation_id = $3 AND doc->>'status' = $5",
    )
    .bind(&open.workspace)
    .bind(&open.caller)
    .bind(&inv.invocation_id)
    .bind(Json(inv))
    .bind(from.as_str())
    .bind(must_tell(open, inv))
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Nobody is left to tell: the invocation's agent is gone.
async fn forget_telling(db: &sqlx::PgPool, workspace: &str, caller: &str, id: &str) -> Result<()> {
    sqlx::query(
        "UPDATE coordination_invocations SET tell_pending = false
         WHERE workspace = $1 AND caller = $2 AND invocation_id = $3 AND tell_pending",
    )
    .bind(workspace)
    .bind(caller)
    .bind(id)
    .execute(db)
    .await?;
    Ok(())
}

type OpenRow = (String, String, Option<String>, Json<Invocation>, Json<ActionCall>);

/// Pending and running invocations, and ended ones not yet told, oldest first.
async fn open_invocations(
    conn: &mut PgConnection,
) -> Result<Vec<(String, String, Option<String>, Invocation, ActionCall)>> {
    let rows: Vec<OpenRow> = sqlx::query_as(
        "SELECT workspace, caller, caller_agent, doc, call FROM coordination_invocations
         WHERE (doc->>'status' IN ('pending', 'running') OR tell_pending) AND call IS NOT NULL
         ORDER BY (doc->>'startedAt')::bigint LIMIT 100",
    )
    .fetch_all(conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(w, c, a, Json(inv), Json(call))| (w, c, a, inv, call))
        .collect())
}
