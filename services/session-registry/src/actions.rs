//! Actions (`action.*`, seed 000 `actions.expose`): what agents offer each other to invoke.
//! An agent exposes its whole set at once; each input schema is compiled then, with remote
//! `$ref`s refused, so a schema can never make the mesh fetch a URL. `action.list` shows a
//! caller only what its `availableTo` lets it invoke, and never a released agent's.

use crate::Registry;
use crate::agents::{self, capabilities_of, is_attached};
use crate::error::{RegistryError, Result};
use crate::store::{self, Change, now_ms};
use relay_contracts::actions::*;
use relay_contracts::session::events::{ActionCompleted, ActionFailed, ActionInvoked};
use relay_contracts::session::{Agent, AgentGetRequest, handle_of};
use relay_contracts::{Caller, RequestContext};
use serde_json::{Value, json};
use sqlx::PgConnection;
use sqlx::types::Json;

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
        return Err(RegistryError::Invalid(format!(
            "{field} is {bytes} bytes, at most {MAX_SCHEMA_BYTES}"
        )));
    }
    if depth(schema) > MAX_SCHEMA_DEPTH {
        return Err(RegistryError::Invalid(format!(
            "{field} nests deeper than {MAX_SCHEMA_DEPTH} levels"
        )));
    }
    jsonschema::options()
        .with_retriever(NoRemote)
        .build(schema)
        .map_err(|e| RegistryError::Invalid(format!("{field} is not a usable JSON Schema: {e}")))
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
        return Err(RegistryError::Invalid(format!(
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
        return Err(RegistryError::Invalid(format!(
            "the schemas add up to {total} bytes, at most {MAX_TOTAL_SCHEMA_BYTES} for one agent"
        )));
    }
    for (i, a) in actions.iter().enumerate() {
        if !is_action_name(&a.name) {
            return Err(RegistryError::Invalid(format!(
                "actions[{i}].name {:?}: 1 to {MAX_NAME_CHARS} letters, digits, '_', '-' or '.', starting with a letter",
                a.name
            )));
        }
        if actions[..i].iter().any(|b| b.name == a.name) {
            return Err(RegistryError::Invalid(format!("action {:?} is exposed twice", a.name)));
        }
        compile(&format!("actions[{i}].inputSchema"), &a.input_schema)?;
        if let Some(out) = &a.output_schema {
            compile(&format!("actions[{i}].outputSchema"), out)?;
        }
        for who in a.available_to.iter().flatten() {
            if !is_selector(who) {
                return Err(RegistryError::Invalid(format!(
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

/// `action.expose`: replaces the agent's actions, and lists them in its AG-UI `tools.items`.
pub async fn expose(reg: Registry, _ctx: RequestContext, req: ExposeRequest) -> Result<ActionList> {
    check(&req.actions)?;
    let mut change = Change::begin(&reg).await?;
    let (mut session, mut agent) = agents::lock_attached(&mut change, &req.agent_id).await?;
    if capabilities_of(&agent).actions.and_then(|a| a.expose) != Some(true) {
        return Err(RegistryError::Capability {
            agent_id: agent.agent_id.clone(),
            capability: "actions.expose".into(),
            reason: "the agent did not declare it".into(),
        });
    }
    let workspace = store::agent_workspace(change.conn(), &agent.agent_id)
        .await?
        .unwrap_or_default();
    let now = now_ms();
    replace(change.conn(), &agent.agent_id, &workspace, &req.actions, now).await?;
    let mut agui = agent.agent_capabilities.clone().unwrap_or_default();
    let items: Vec<Value> = req
        .actions
        .iter()
        .map(|a| json!({"name": a.name, "description": a.description, "parameters": a.input_schema}))
        .collect();
    agui.tools
        .get_or_insert_with(Default::default)
        .insert("items".into(), Value::Array(items));
    agent.agent_capabilities = Some(agui);
    agents::save_changed(&mut change, &mut session, &mut agent, now).await?;
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

async fn invoker(conn: &mut PgConnection, ctx: &RequestContext) -> Result<Option<Invoker>> {
    if let Some(agent_id) = &ctx.agent {
        let agent = store::find_agent(conn, agent_id).await?;
        let mut selectors = vec!["role:agent".to_string(), "#general".to_string()];
        selectors.extend(agent.handle.as_ref().map(|h| format!("@{h}")));
        selectors.extend(
            channels_of(conn, &ctx.workspace, agent_id)
                .await?
                .into_iter()
                .map(|c| format!("#{c}")),
        );
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
pub async fn list(reg: Registry, ctx: RequestContext, req: ListActionsRequest) -> Result<ActionList> {
    // Resolved first: `agents::get` takes a connection of its own.
    let only = match req.agent {
        Some(agent) => Some(
            agents::get(reg.clone(), ctx.clone(), AgentGetRequest { agent })
                .await?
                .agent_id,
        ),
        None => None,
    };
    let mut conn = reg.db.acquire().await?;
    let who = invoker(&mut conn, &ctx).await?;
    let rows = exposed(&mut conn, ctx.scope(), only.as_deref()).await?;
    Ok(ActionList {
        actions: rows
            .into_iter()
            .filter(|a| who.as_ref().is_none_or(|w| w.may(&a.available_to)))
            .collect(),
    })
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

/// `action.invoke`: checks the caller and the input, records the invocation (`action.invoked`)
/// before the exposing harness is asked, then records how it ended.
pub async fn invoke(reg: Registry, ctx: RequestContext, req: InvokeRequest) -> Result<Invocation> {
    let timeout_ms = req.timeout_ms.unwrap_or(MAX_INVOKE_TIMEOUT_MS as f64);
    if !(1.0..=MAX_INVOKE_TIMEOUT_MS as f64).contains(&timeout_ms) {
        return Err(RegistryError::Invalid(format!(
            "timeoutMs {timeout_ms}: 1 to {MAX_INVOKE_TIMEOUT_MS}"
        )));
    }
    let timeout_ms = timeout_ms.ceil() as u64;
    let target = agents::get(
        reg.clone(),
        ctx.clone(),
        AgentGetRequest {
            agent: req.agent.clone(),
        },
    )
    .await?;
    if !is_attached(&target) {
        return Err(RegistryError::agent_not_found(&req.agent));
    }
    let mut conn = reg.db.acquire().await?;
    let spec = exposed_spec(&mut conn, &target.agent_id, &req.action)
        .await?
        .ok_or_else(|| RegistryError::NotFound {
            what: "action",
            id: format!("{} of agent {}", req.action, req.agent),
        })?;
    let available_to = spec.available_to.clone().unwrap_or_else(|| vec!["*".into()]);
    let who = invoker(&mut conn, &ctx).await?;
    if let Some(who) = &who
        && !who.may(&available_to)
    {
        return Err(RegistryError::Forbidden(format!(
            "action {} is available to {} only",
            req.action,
            available_to.join(", ")
        )));
    }
    if let Some(caller) = who.and_then(|w| w.agent)
        && capabilities_of(&caller).actions.and_then(|a| a.invoke) != Some(true)
    {
        return Err(RegistryError::Capability {
            agent_id: caller.agent_id,
            capability: "actions.invoke".into(),
            reason: "the agent did not declare it".into(),
        });
    }
    let workspace = store::agent_workspace(&mut conn, &target.agent_id)
        .await?
        .unwrap_or_else(|| relay_contracts::context::DEFAULT_WORKSPACE.to_string());
    drop(conn);
    let input = req.input.unwrap_or_else(|| json!({}));
    let problems: Vec<Value> = compile("inputSchema", &spec.input_schema)?
        .iter_errors(&input)
        .map(|e| json!({"path": e.instance_path().to_string(), "message": e.to_string()}))
        .collect();
    if let Some(first) = problems.first() {
        return Err(RegistryError::InvalidWith {
            message: format!(
                "input does not match the input schema of {}: {}",
                req.action,
                first["message"].as_str().unwrap_or_default()
            ),
            details: json!({ "errors": problems }),
        });
    }

    let caller = caller_key(&ctx);
    let invocation_id = req.invocation_id.unwrap_or_else(store::new_id);
    let mut change = Change::begin(&reg).await?;
    // Two calls with one id at once: the second waits for the first's row, then sees it.
    lock_invocation(change.conn(), &workspace, &caller, &invocation_id).await?;
    if let Some(done) = find_invocation(change.conn(), &workspace, &caller, &invocation_id).await? {
        if done.status == InvocationStatus::Running {
            return Err(RegistryError::Conflict(format!(
                "invocation {invocation_id} is still running"
            )));
        }
        return Ok(done);
    }
    let mut inv = Invocation {
        invocation_id: invocation_id.clone(),
        agent_id: target.agent_id.clone(),
        action: req.action.clone(),
        status: InvocationStatus::Running,
        output: None,
        error: None,
        started_at: now_ms(),
        completed_at: None,
    };
    save_invocation(change.conn(), &workspace, &caller, &inv).await?;
    let event = ActionInvoked {
        session_id: target.session_id.clone(),
        agent_id: target.agent_id.clone(),
        action: req.action.clone(),
        invocation_id: invocation_id.clone(),
        caller: caller.clone(),
    };
    change.emit(&target.session_id, event).await?;
    change.commit().await?;

    let call = ActionCall {
        invocation_id: invocation_id.clone(),
        action: req.action.clone(),
        input,
        caller: caller.clone(),
        timeout_ms,
    };
    let subject = relay_contracts::rpc::agent::invoke(&target.agent_id);
    let within = std::time::Duration::from_millis(timeout_ms);
    let answered = relay_bus::client::request::<_, ActionAnswer>(&reg.nats, &subject, &call, within).await;
    match answered {
        Ok(ActionAnswer { error: None, output }) => {
            inv.status = InvocationStatus::Completed;
            inv.output = Some(output.unwrap_or(Value::Null));
        }
        Ok(ActionAnswer { error: Some(e), .. }) => inv.error = Some(e),
        Err(e) if e.code() == relay_contracts::ErrorCode::Timeout => {
            inv.error = Some(format!("no answer from the agent within {timeout_ms} ms"));
        }
        Err(e) => inv.error = Some(format!("the agent could not take it: {e}")),
    }
    if inv.error.is_some() {
        inv.status = InvocationStatus::Failed;
    }
    inv.completed_at = Some(now_ms());
    let mut change = Change::begin(&reg).await?;
    save_invocation(change.conn(), &workspace, &caller, &inv).await?;
    let (session_id, agent_id, action) = (target.session_id.clone(), target.agent_id.clone(), req.action);
    match &inv.error {
        None => {
            let done = ActionCompleted {
                session_id: session_id.clone(),
                agent_id,
                action,
                invocation_id,
            };
            change.emit(&session_id, done).await?
        }
        Some(error) => {
            let failed = ActionFailed {
                session_id: session_id.clone(),
                agent_id,
                action,
                invocation_id,
                error: error.clone(),
            };
            change.emit(&session_id, failed).await?
        }
    }
    change.commit().await?;
    Ok(inv)
}

// ---- SQL (registry_actions) ---------------------------------------------------------------

async fn replace(
    conn: &mut PgConnection,
    agent_id: &str,
    workspace: &str,
    actions: &[ActionSpec],
    now: i64,
) -> Result<()> {
    sqlx::query("DELETE FROM registry_actions WHERE agent_id = $1")
        .bind(agent_id)
        .execute(&mut *conn)
        .await?;
    for a in actions {
        sqlx::query(
            "INSERT INTO registry_actions (agent_id, name, workspace, doc, exposed_at) VALUES ($1, $2, $3, $4, $5)",
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

/// The actions of live agents, in `workspace` (all when `None`), of one agent when given.
async fn exposed(conn: &mut PgConnection, workspace: Option<&str>, agent_id: Option<&str>) -> Result<Vec<Action>> {
    let rows: Vec<(Json<ActionSpec>, i64, Json<Agent>)> = sqlx::query_as(
        "SELECT x.doc, x.exposed_at, a.doc FROM registry_actions x JOIN registry_agents a ON a.agent_id = x.agent_id
         WHERE a.live AND ($1::text IS NULL OR x.workspace = $1) AND ($2::text IS NULL OR x.agent_id = $2)
         ORDER BY a.handle, x.agent_id, x.name",
    )
    .bind(workspace)
    .bind(agent_id)
    .fetch_all(conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(Json(spec), at, Json(agent))| action(&agent, spec, at))
        .collect())
}

async fn exposed_spec(conn: &mut PgConnection, agent_id: &str, name: &str) -> Result<Option<ActionSpec>> {
    let row: Option<Json<ActionSpec>> =
        sqlx::query_scalar("SELECT doc FROM registry_actions WHERE agent_id = $1 AND name = $2")
            .bind(agent_id)
            .bind(name)
            .fetch_optional(conn)
            .await?;
    Ok(row.map(|Json(spec)| spec))
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
        "SELECT doc FROM registry_invocations WHERE workspace = $1 AND caller = $2 AND invocation_id = $3 FOR UPDATE",
    )
    .bind(workspace)
    .bind(caller)
    .bind(id)
    .fetch_optional(conn)
    .await?;
    Ok(row.map(|Json(inv)| inv))
}

async fn save_invocation(conn: &mut PgConnection, workspace: &str, caller: &str, inv: &Invocation) -> Result<()> {
    sqlx::query(
        "INSERT INTO registry_invocations (workspace, caller, invocation_id, agent_id, doc) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (workspace, caller, invocation_id) DO UPDATE SET doc = EXCLUDED.doc",
    )
    .bind(workspace)
    .bind(caller)
    .bind(&inv.invocation_id)
    .bind(&inv.agent_id)
    .bind(Json(inv))
    .execute(conn)
    .await?;
    Ok(())
}

async fn channels_of(conn: &mut PgConnection, workspace: &str, agent_id: &str) -> Result<Vec<String>> {
    Ok(
        sqlx::query_scalar("SELECT channel FROM registry_channel_members WHERE workspace = $1 AND agent_id = $2")
            .bind(workspace)
            .bind(agent_id)
            .fetch_all(conn)
            .await?,
    )
}
