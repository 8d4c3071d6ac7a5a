//! Actions (`action.*`, seed 000 `actions.expose`): what agents offer each other to invoke.
//! An agent exposes its whole set at once; each input schema is compiled then, with remote
//! `$ref`s refused, so a schema can never make the mesh fetch a URL. `action.list` shows a
//! caller only what its `availableTo` lets it invoke, and never a released agent's.

use crate::Registry;
use crate::agents::{self, capabilities_of, is_attached};
use crate::error::{RegistryError, Result};
use crate::store::{self, Change, now_ms};
use relay_contracts::actions::*;
use relay_contracts::session::events::Updated;
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
    let session_id = store::find_agent(change.conn(), &req.agent_id).await?.session_id;
    let mut session = store::lock_live(change.conn(), &session_id).await?;
    let mut agent = store::find_agent(change.conn(), &req.agent_id).await?;
    if !is_attached(&agent) {
        return Err(RegistryError::Conflict(format!(
            "agent {} was released",
            agent.agent_id
        )));
    }
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
    agent.last_activity_at = now;
    change.save_agent(&agent).await?;
    session.last_activity_at = now;
    store::save_session(change.conn(), &session).await?;
    change
        .emit(
            &session_id,
            Updated {
                session_id: session_id.clone(),
                changed_properties: vec!["agents".into()],
            },
        )
        .await?;
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
        selectors.extend(agent.handle.map(|h| format!("@{h}")));
        selectors.extend(
            channels_of(conn, &ctx.workspace, agent_id)
                .await?
                .into_iter()
                .map(|c| format!("#{c}")),
        );
        return Ok(Some(Invoker { selectors }));
    }
    let role = match &ctx.caller {
        Caller::Admin(_) => return Ok(None),
        Caller::Operator(_) => "role:operator",
        Caller::Viewer(_) => "role:viewer",
        _ => return Ok(None),
    };
    Ok(Some(Invoker {
        selectors: vec![role.to_string()],
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

async fn channels_of(conn: &mut PgConnection, workspace: &str, agent_id: &str) -> Result<Vec<String>> {
    Ok(
        sqlx::query_scalar("SELECT channel FROM registry_channel_members WHERE workspace = $1 AND agent_id = $2")
            .bind(workspace)
            .bind(agent_id)
            .fetch_all(conn)
            .await?,
    )
}
