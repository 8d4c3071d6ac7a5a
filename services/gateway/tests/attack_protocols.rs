//! The standard protocols the gateway speaks (MCP, A2A, AG-UI) attacked from outside, as a
//! hostile tenant would, each through that protocol's **official client** (the ones the interop
//! tests use: the MCP Python SDK `mcp` 2.3.0, the A2A Python SDK `a2a-sdk` 1.3.0, and
//! `@ag-ui/client` 1.0 `HttpAgent`), driven line by line from here (`tests/py/attack_mcp.py`,
//! `tests/py/attack_a2a.py`, `tests/js/attack_agui.mjs`):
//!
//! - **MCP**: the tools are what `tools/list` answers at run time; every tool is called as
//!   workspace A's admin, operator and viewer with arguments generated from its `inputSchema`,
//!   naming workspace B's real objects in the id-like arguments and, separately, fresh lookalike
//!   ids of the same shape: the answers must be the same (tool error or not, its code, its
//!   message with the ids masked; a result's shape), nothing of B's ever shows (lists included),
//!   and a viewer's call of a tool that writes is refused (`forbidden`).
//! - **A2A**: the methods are the A2A service of the SDK's protobuf descriptor
//!   (`lf.a2a.v1.A2AService`), each request generated from its input message; sent to the
//!   workspace endpoint, to B's agent's endpoint (by handle and by id) against an unknown
//!   agent's, and to A's own agent's endpoint with B's task, context, message and push-config ids
//!   against unknown ones; B's agent's card against an unknown agent's card. Same HTTP status,
//!   same JSON-RPC error (class and code), same message shape; nothing of B's; a viewer's
//!   writes refused with a proper code (HTTP 403, or a JSON-RPC error saying `forbidden` that
//!   is not `-32603 Internal error`).
//! - **AG-UI**: a run on B's agent (by handle and by id) against an unknown agent, and a resume of
//!   B's permission request or question (on B's agent and on A's own) against unknown ones: the
//!   same answer, no B data in the stream; a viewer cannot run.
//! - With no key and a revoked key, every route of the three protocols answers 401.
//!
//! The HTTP routes of the protocols are not in the OpenAPI document (`/api/v1/openapi.json`
//! lists none of them), so [`ROUTES`] names them, as docs/guides/protocols.md's table does;
//! the test checks each answers B's own admin, so a route that moves fails here first.
//!
//! Every finding is collected and each test fails once at the end with the whole list
//! (operation, caller, expected, got). What they found when written, since closed: a permission
//! request id another workspace holds answered in other words than an unknown one (MCP
//! `decide_permission`, AG-UI resume); an A2A send naming a message id another workspace holds
//! answered `conflict`; A2A role refusals were `-32603 Internal error` (now HTTP 403); an A2A
//! or AG-UI viewer's write naming an unknown object was not-found rather than forbidden.

mod attack;
mod common;

use attack::{
    Holes, Services, VICTIM, Victim, a2a_driver, agui_driver, attackers, fresh, interrupts, mcp_driver, ok,
    revoked_key, services, session_with_agent, verbose,
};
use common::{Bearer, Gateway, Mesh, free_port, gateway, mesh};
use relay_testkit::ServiceProcess;
use reqwest::StatusCode;
use serde_json::{Map, Value, json};
use std::collections::{BTreeSet, HashMap};
use std::fmt;

/// Not attack/mod.rs's `ROOT`: this file's gateways have a token of their own.
const ROOT: &str = "attack-protocols-root-token";
/// The victim's agent's handle, and the attacker's own agent's.
const B_AGENT: &str = "zebra-b-agent";
const A_AGENT: &str = "a-own-agent";

/// The protocols' HTTP routes (under `/api/v1`; router.rs), which the OpenAPI document
/// does not list: `{name}` is an agent's handle or id. MCP's tools and A2A's methods are not
/// here: they are read from `tools/list` and from the A2A SDK's service descriptor.
const ROUTES: &[(&str, &str, &str)] = &[
    (
        "POST",
        "/mcp",
        "MCP Streamable HTTP (JSON-RPC: initialize, tools/list, tools/call)",
    ),
    ("GET", "/a2a/.well-known/agent-card.json", "A2A: the workspace's card"),
    (
        "POST",
        "/a2a",
        "A2A JSON-RPC: the workspace's endpoint (metadata.agent names the agent)",
    ),
    (
        "GET",
        "/a2a/agents/{name}/.well-known/agent-card.json",
        "A2A: an agent's card",
    ),
    ("POST", "/a2a/agents/{name}", "A2A JSON-RPC: an agent's endpoint"),
    ("POST", "/agents/{name}/agui", "AG-UI: a run (SSE)"),
];

/// A2A method names are verb first; these verbs only read (everything else writes: `Send…`,
/// `Cancel…`, `Create…`, `Delete…`).
const A2A_READ_VERBS: &[&str] = &["Get", "List", "Subscribe"];

/// Whether an MCP tool only reads: its `readOnlyHint` annotation when the server gives one;
/// else its name (`list_…`, `get_…`, `…_events`): the server declares no annotations today.
fn mcp_reads(tool: &Value) -> bool {
    if let Some(hint) = tool["annotations"]["readOnlyHint"].as_bool() {
        return hint;
    }
    let name = tool["name"].as_str().unwrap_or_default();
    name.starts_with("list_") || name.starts_with("get_") || name.ends_with("_events")
}

/// The kind of object an argument or field names. `owner` is the MCP tool or the A2A request
/// message the field is in (`id` is a task in `GetTaskRequest`, a push config in
/// `…PushNotificationConfig…`). An `…Id` field of no known kind is a slot of kind `?field`,
/// which the victim has none of: reported, so a new id argument is never silently skipped.
fn reference(owner: &str, field: &str) -> Option<String> {
    let kind = match field {
        "sessionId" | "contextId" => "sessions",
        "agentId" => "agents",
        "agent" => "handles",
        "requestId" => "permissions",
        "questionId" => "questions",
        "taskId" | "referenceTaskIds" => "tasks",
        "messageId" => "messages",
        "id" if owner.contains("PushNotificationConfig") => "pushes",
        "id" if owner.ends_with("TaskRequest") => "tasks",
        f if f.ends_with("Id") || f.ends_with("Ids") => return Some(format!("?{f}")),
        _ => return None,
    };
    Some(kind.to_string())
}

/// Values for fields that must be well formed to get past validation to the lookup, or that
/// widen what an answer could leak. By field name.
enum Hint {
    Value(Value),
    /// Left out (A2A's `tenant`: the binding's path prefix, not a workspace).
    Omit,
    /// Generated from the schema even when only the required fields are.
    Generic,
    /// Only with every field (a send's push config needs an admin key: with the required
    /// fields only, a send reaches its agent).
    FullOnly,
}

fn hint(field: &str, schema: &Value) -> Option<Hint> {
    let has_enum = schema.get("enum").is_some();
    Some(match field {
        "tenant" => Hint::Omit,
        "text" => Hint::Value(json!("probe text")),
        "answer" => Hint::Value(json!("probe answer")),
        // Deny: a hole that reaches a victim's request does the least harm.
        "decision" => Hint::Value(json!("deny")),
        // MCP list_sessions: every status, so a leak would show.
        "status" if !has_enum => Hint::Value(json!("all")),
        "limit" | "pageSize" => Hint::Value(json!(100)),
        "after" => Hint::Value(json!(0)),
        "url" => Hint::Value(json!("http://127.0.0.1:9/attack")),
        // A2A sends return at once rather than block until the task ends.
        "returnImmediately" => Hint::Value(json!(true)),
        "role" | "parts" | "message" | "configuration" => Hint::Generic,
        "taskPushNotificationConfig" => Hint::FullOnly,
        _ => return None,
    })
}

/// attack/mod.rs's `lookalike`, with each part of a task id (`<agentId>:<messageId>`) made a
/// lookalike on its own.
fn lookalike(id: &str) -> String {
    if let Some((a, m)) = id.split_once(':') {
        return format!("{}:{}", lookalike(a), lookalike(m));
    }
    attack::lookalike(id)
}

// ---- the victim and the generated requests ---------------------------------------------------

// The victim is attack/mod.rs's `Victim`: its `secrets` leave out `@`-values, and this file
// sets none (its handles are bare).

/// Not attack/mod.rs's `Naming`: a request here names B's objects in every slot or in none,
/// one slot at a time being [`Gen`]'s `alone`.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Naming {
    Unknown,
    Victim,
}

/// Generates one request: every field (`full`), or the required and hinted fields plus only
/// the id slot `alone` (others left out), naming the victim's objects or lookalikes.
struct Gen<'a> {
    victim: &'a Victim,
    naming: Naming,
    full: bool,
    alone: Option<usize>,
    owner: String,
    slots: Vec<String>,
    /// Every id value put in the request (victim's or lookalike), for masking and echoes.
    sent: Vec<String>,
    missing: BTreeSet<String>,
    made: &'a mut HashMap<String, String>,
}

impl Gen<'_> {
    fn slot(&mut self, field: &str, kind: &str) -> Option<String> {
        let n = self.slots.len();
        self.slots.push(field.to_string());
        if self.alone.is_some_and(|i| i != n) {
            return None;
        }
        let Some(real) = self.victim.ids.get(kind).cloned() else {
            self.missing.insert(format!("{kind} (field {field})"));
            return Some(fresh("no-victim-object"));
        };
        let id = match self.naming {
            Naming::Victim => real,
            Naming::Unknown => self
                .made
                .entry(kind.to_string())
                .or_insert_with(|| lookalike(&real))
                .clone(),
        };
        self.sent.push(id.clone());
        Some(id)
    }

    fn generate(&mut self, schema: &Value, field: Option<&str>, required: bool, depth: usize) -> Option<Value> {
        if depth > 8 {
            return None;
        }
        let is_array = schema["type"] == "array";
        if let Some(kind) = field.and_then(|f| reference(&self.owner, f)) {
            let id = self.slot(field.unwrap(), &kind)?;
            return Some(if is_array { json!([id]) } else { json!(id) });
        }
        let hinted = field.and_then(|f| hint(f, schema));
        match hinted {
            Some(Hint::Omit) => return None,
            Some(Hint::FullOnly) if !self.full => return None,
            Some(Hint::Value(v)) => return Some(v),
            _ => {}
        }
        let wanted = self.full || required || matches!(hinted, Some(Hint::Generic));
        if schema["x-struct"] == true {
            // A request's own metadata names the agent on A2A's workspace endpoint.
            if depth == 1 && field == Some("metadata") {
                let id = self.slot("metadata.agent", "handles")?;
                return Some(json!({ "agent": id }));
            }
            return None;
        }
        if schema["format"] == "date-time" {
            return wanted.then(|| json!("2030-01-01T00:00:00Z"));
        }
        if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
            return wanted.then(|| first.clone());
        }
        let types = attack::types(schema);
        if types.is_empty() {
            for alt in ["oneOf", "anyOf", "allOf"] {
                if let Some(first) = schema[alt]
                    .as_array()
                    .and_then(|a| a.iter().find(|s| s["type"] != "null"))
                {
                    return self.generate(first, field, required, depth + 1);
                }
            }
            return wanted.then(|| json!("probe"));
        }
        match types[0] {
            "object" => {
                let req = attack::required(schema);
                let mut out = Map::new();
                for (name, prop) in schema["properties"].as_object().into_iter().flatten() {
                    if let Some(v) = self.generate(prop, Some(name), req.contains(&name.as_str()), depth + 1) {
                        out.insert(name.clone(), v);
                    }
                }
                (wanted || !out.is_empty()).then_some(Value::Object(out))
            }
            "array" => {
                let item = self.generate(&schema["items"], None, wanted, depth + 1)?;
                (wanted || item.as_object().is_some_and(|o| !o.is_empty())).then(|| json!([item]))
            }
            "string" => wanted.then(|| json!(fresh("probe"))),
            "integer" | "number" => wanted.then(|| json!(schema["minimum"].as_i64().unwrap_or(1).max(1))),
            "boolean" => wanted.then_some(Value::Bool(false)),
            _ => None,
        }
    }
}

/// One generated request: its arguments, its id slots, and the id values it carries.
struct Made {
    args: Value,
    slots: Vec<String>,
    sent: Vec<String>,
    missing: BTreeSet<String>,
}

fn make(
    victim: &Victim,
    made: &mut HashMap<String, String>,
    owner: &str,
    schema: &Value,
    naming: Naming,
    full: bool,
    alone: Option<usize>,
) -> Made {
    let mut g = Gen {
        victim,
        naming,
        full,
        alone,
        owner: owner.to_string(),
        slots: vec![],
        sent: vec![],
        missing: BTreeSet::new(),
        made,
    };
    let args = g.generate(schema, None, true, 0).unwrap_or_else(|| json!({}));
    Made {
        args,
        slots: g.slots,
        sent: g.sent,
        missing: g.missing,
    }
}

/// The variants a request is sent in: (label, full, alone). Every field with every id slot;
/// then the required fields with one slot at a time.
fn variants(n_slots: usize) -> Vec<(String, bool, Option<usize>)> {
    let mut v = vec![("every field".to_string(), true, None)];
    if n_slots == 0 {
        v.push(("required fields only".into(), false, None));
    }
    for i in 0..n_slots {
        v.push((format!("required fields and id slot {i} only"), false, Some(i)));
    }
    v
}

// ---- answers ---------------------------------------------------------------------------------

/// What an answer is, for comparison: the HTTP status last seen, its kind (a result, a tool
/// error, a JSON-RPC error by class), a code, the message with the ids masked, and a result's
/// shape (keys, types and list lengths).
#[derive(Clone, Debug, PartialEq)]
struct Outcome {
    status: Option<u64>,
    kind: String,
    code: Option<String>,
    message: String,
    shape: String,
    raw: String,
}

impl Outcome {
    fn same_as(&self, o: &Outcome) -> bool {
        self.status == o.status
            && self.kind == o.kind
            && self.code == o.code
            && self.message == o.message
            && self.shape == o.shape
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let status = self.status.map_or_else(|| "-".into(), |s| s.to_string());
        write!(f, "HTTP {status} {}", self.kind)?;
        if let Some(c) = &self.code {
            write!(f, " {c}")?;
        }
        if !self.message.is_empty() {
            let m: String = self.message.chars().take(160).collect();
            write!(f, " ({m})")?;
        }
        if !self.shape.is_empty() {
            let s: String = self.shape.chars().take(160).collect();
            write!(f, " shape {s}")?;
        }
        Ok(())
    }
}

fn shape(v: &Value) -> String {
    match v {
        Value::Object(o) => {
            let inner: Vec<String> = o.iter().map(|(k, v)| format!("{k}:{}", shape(v))).collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(a) => format!("[{}x{}]", a.len(), a.first().map(shape).unwrap_or_default()),
        Value::String(_) => "s".into(),
        Value::Number(_) => "n".into(),
        Value::Bool(_) => "b".into(),
        Value::Null => "null".into(),
    }
}

/// `text` with every id the request carried (and each part of a task id) as `<id>`, and the
/// generated `probe-N` values as `probe`.
fn mask(text: &str, sent: &[String]) -> String {
    let mut ids: Vec<String> = sent
        .iter()
        .flat_map(|s| {
            let mut v = vec![s.clone(), s.trim_start_matches('@').to_string()];
            v.extend(s.split(':').map(String::from));
            v
        })
        .filter(|s| s.len() >= 4)
        .collect();
    ids.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let mut out = text.to_string();
    for id in ids {
        out = out.replace(&id, "<id>");
    }
    let mut masked = String::new();
    let mut rest = out.as_str();
    while let Some(at) = rest.find("probe-") {
        masked.push_str(&rest[..at + 5]);
        rest = rest[at + 6..].trim_start_matches(|c: char| c.is_ascii_digit());
    }
    masked.push_str(rest);
    masked
}

fn last_status(a: &Value) -> Option<u64> {
    a["statuses"].as_array().and_then(|s| s.last()).and_then(Value::as_u64)
}

fn mcp_outcome(a: &Value, sent: &[String]) -> Outcome {
    let status = last_status(a);
    let raw = a.to_string();
    if let Some(is_error) = a["isError"].as_bool() {
        let text = a["text"].as_str().unwrap_or_default();
        if is_error {
            let code = text.split(':').next().map(str::to_string);
            return Outcome {
                status,
                kind: "tool error".into(),
                code,
                message: mask(text, sent),
                shape: String::new(),
                raw,
            };
        }
        let body = serde_json::from_str::<Value>(text).unwrap_or(Value::String(text.into()));
        return Outcome {
            status,
            kind: "result".into(),
            code: None,
            message: String::new(),
            shape: shape(&body),
            raw,
        };
    }
    let kind = match (a["code"].as_i64(), a["exception"].as_str()) {
        (Some(_), _) => format!("JSON-RPC error at {}", a["stage"].as_str().unwrap_or("?")),
        (None, Some(e)) => format!("{e} at {}", a["stage"].as_str().unwrap_or("?")),
        _ => "?".into(),
    };
    Outcome {
        status,
        kind,
        code: a["code"].as_i64().map(|c| c.to_string()),
        message: mask(a["message"].as_str().unwrap_or_default(), sent),
        shape: if a.get("tools").is_some() {
            "tools".into()
        } else {
            String::new()
        },
        raw,
    }
}

fn a2a_outcome(a: &Value, sent: &[String]) -> Outcome {
    let status = last_status(a);
    let raw = a.to_string();
    if let Some(r) = a.get("result") {
        // A stream is read for a few seconds: how many updates came is timing, not an answer.
        let shape = match r["stream"].as_array() {
            Some(items) => format!("stream of {}", items.first().map(self::shape).unwrap_or_default()),
            None => shape(r),
        };
        return Outcome {
            status,
            kind: "result".into(),
            code: None,
            message: String::new(),
            shape,
            raw,
        };
    }
    Outcome {
        status,
        kind: a["error"].as_str().unwrap_or("?").to_string(),
        code: a["code"].as_i64().map(|c| c.to_string()),
        message: mask(a["message"].as_str().unwrap_or_default(), sent),
        shape: String::new(),
        raw,
    }
}

fn agui_outcome(a: &Value, sent: &[String]) -> Outcome {
    let raw = a.to_string();
    if a["error"].is_object() {
        return Outcome {
            status: a["error"]["status"].as_u64(),
            kind: "HTTP error".into(),
            code: None,
            message: mask(a["error"]["message"].as_str().unwrap_or_default(), sent),
            shape: String::new(),
            raw,
        };
    }
    let types: Vec<&str> = a["events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["type"].as_str())
        .collect();
    let errors: Vec<String> = a["events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["type"] == "RUN_ERROR")
        .map(|e| mask(&e["message"].to_string(), sent))
        .collect();
    Outcome {
        status: Some(200),
        kind: "run".into(),
        code: None,
        message: errors.join("; "),
        shape: types.join(","),
        raw,
    }
}

/// attack/mod.rs's `leaked`, where an id the request sent may also echo back a part of itself
/// (an agent's or a message's id from a task id `<agentId>:<messageId>`).
fn leaked<'s>(text: &str, secrets: &'s [String], sent: &[String]) -> Vec<&'s str> {
    let echoes: Vec<String> = sent
        .iter()
        .flat_map(|s| s.split(':').chain([s.as_str()]))
        .map(String::from)
        .collect();
    attack::leaked(text, secrets, &echoes)
}

// ---- the world -------------------------------------------------------------------------------

struct World {
    _m: Mesh,
    g: Gateway,
    _root: Bearer,
    /// B's own admin, for the control reads.
    b: Bearer,
    victim: Victim,
    /// A's viewer, operator and admin.
    attackers: Vec<(&'static str, Bearer)>,
    _spawner: ServiceProcess,
    _automation: ServiceProcess,
}

/// A JSON-RPC call over plain HTTP (set-up and control only; the attack goes through the SDKs).
async fn rpc(who: &Bearer, path: &str, method: &str, params: Value) -> (StatusCode, Value) {
    who.post(
        path,
        json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}),
    )
    .await
}

async fn world(name: &str) -> World {
    let surfaced = std::env::temp_dir().join(format!("attack-{name}-{}.log", free_port()));
    let Services {
        m,
        g,
        spawner,
        automation,
    } = services(&surfaced, ROOT).await;
    let root = Bearer::new(&g, ROOT);

    // Workspace B: a session with a real (fake) agent, a message to it (an A2A task), a pending
    // permission request and question of the agent, and an A2A push config of the task.
    let (status, body) = root.post("/api/v1/workspaces", json!({"name": VICTIM})).await;
    ok(status, &body, "victim workspace");
    let (_, b) = root.create_key("b-admin", "admin", Some(VICTIM)).await;
    let mut v = Victim::default();
    let (session, agent, sent) = session_with_agent(&b, B_AGENT).await;
    let message = sent["messageId"].as_str().expect("message id").to_string();
    v.set("sessions", session.clone());
    v.set("agents", agent.clone());
    v.set("handles", B_AGENT);
    v.set("messages", message.clone());
    v.set("tasks", format!("{agent}:{message}"));
    let (permission, question) = interrupts(&m, &agent, &session).await;
    v.set("permissions", permission);
    v.set("questions", question);
    let task = v.get("tasks").to_string();
    let (status, push) = rpc(
        &b,
        &format!("/api/v1/a2a/agents/{B_AGENT}"),
        "CreateTaskPushNotificationConfig",
        json!({"taskId": task, "url": format!("http://127.0.0.1:{}/zebra", free_port()), "token": "zebra-token"}),
    )
    .await;
    ok(status, &push, "victim push config");
    v.set(
        "pushes",
        push["result"]["id"]
            .as_str()
            .unwrap_or_else(|| panic!("push config: {push}")),
    );
    // B's task is a task to B (else the attack below proves nothing).
    let (_, got) = rpc(
        &b,
        &format!("/api/v1/a2a/agents/{B_AGENT}"),
        "GetTask",
        json!({"id": task}),
    )
    .await;
    assert_eq!(got["result"]["id"], task.as_str(), "{got}");

    // Workspace A: its admin, operator and viewer, and an agent of its own (the endpoint that
    // gets as far as B's task, message and interrupt ids).
    let attackers = attackers(&root).await;
    let (status, own) = attackers[2]
        .1
        .post(
            "/api/v1/sessions",
            json!({"cli": "claude", "agent": A_AGENT, "title": "a's own"}),
        )
        .await;
    ok(status, &own, "attacker's own agent");
    World {
        _m: m,
        g,
        _root: root,
        b,
        victim: v,
        attackers,
        _spawner: spawner,
        _automation: automation,
    }
}

impl World {
    /// Control: B's own admin reaches each protocol route with B's objects.
    async fn control(&self, holes: &mut Holes) {
        for (method, path, what) in ROUTES {
            let path = format!("/api/v1{}", path.replace("{name}", B_AGENT));
            let (status, body) = match *method {
                "GET" => self.b.get(&path).await,
                _ if path.ends_with("/mcp") => {
                    let resp = self
                        .b
                        .http
                        .post(format!("{}{path}", self.b.base))
                        .bearer_auth(&self.b.token)
                        .header("accept", "application/json, text/event-stream")
                        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
                        .send()
                        .await
                        .unwrap();
                    let s = resp.status();
                    (s, resp.json().await.unwrap_or(Value::Null))
                }
                _ if path.ends_with("/agui") => (StatusCode::OK, Value::Null), // a run is driven below
                _ => {
                    rpc(
                        &self.b,
                        &path,
                        "GetTask",
                        json!({"id": self.victim.get("tasks"), "metadata": {"agent": B_AGENT}}),
                    )
                    .await
                }
            };
            if !status.is_success() || body.get("error").is_some_and(|e| !e.is_null()) {
                holes.add(
                    format!("{method} {path} ({what})"),
                    "B's own admin (control)",
                    "an answer with B's object",
                    format!("{status} {body}"),
                );
            }
        }
    }
}

// ---- MCP -------------------------------------------------------------------------------------

#[tokio::test]
async fn every_mcp_tool_answers_another_workspaces_ids_exactly_as_unknown_ids_never_shows_its_objects_and_refuses_a_viewers_writes()
 {
    let w = world("mcp").await;
    let mut mcp = mcp_driver(&w.g.base);
    let secrets = w.victim.secrets();
    let mut holes = Holes::default();
    let mut calls = 0;
    w.control(&mut holes).await;

    // The tools, as the server lists them to B (control: B sees its session through them).
    let listed = mcp.ask(json!({"key": w.b.token})).await;
    let tools = listed["tools"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("tools/list: {listed}"));
    assert!(tools.len() >= 5, "only {} tools: {listed}", tools.len());
    let b_sees = mcp
        .ask(json!({"key": w.b.token, "tool": "list_sessions", "args": {"status": "all"}}))
        .await;
    assert!(
        b_sees["text"]
            .as_str()
            .unwrap_or_default()
            .contains(w.victim.get("sessions")),
        "{b_sees}"
    );

    for (role, key) in &w.attackers {
        let who = format!("A's {role}");
        // A's own listing of the tools is B's.
        let mine = mcp.ask(json!({"key": key.token})).await;
        calls += 1;
        let names = |v: &Value| -> Vec<String> {
            v["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t["name"].as_str().map(String::from))
                .collect()
        };
        if names(&mine) != names(&listed) {
            holes.add(
                "tools/list",
                &who,
                format!("{:?}", names(&listed)),
                format!("{:?}", names(&mine)),
            );
        }
        for tool in &tools {
            let name = tool["name"].as_str().unwrap();
            let schema = &tool["inputSchema"];
            let mut made = HashMap::new();
            let n = make(&w.victim, &mut made, name, schema, Naming::Unknown, true, None)
                .slots
                .len();
            for (label, full, alone) in variants(n) {
                let mut answers = Vec::new();
                for naming in [Naming::Unknown, Naming::Victim] {
                    let r = make(&w.victim, &mut made, name, schema, naming, full, alone);
                    for kind in &r.missing {
                        holes.add(
                            format!("tools/call {name}"),
                            &who,
                            "a victim object of every kind named",
                            format!("none of {kind}: add one to `world`"),
                        );
                    }
                    let a = mcp.ask(json!({"key": key.token, "tool": name, "args": r.args})).await;
                    calls += 1;
                    let o = mcp_outcome(&a, &r.sent);
                    if verbose() {
                        eprintln!("mcp {name} | {who} | {label} | {naming:?} {} | {o}", r.args);
                    }
                    let op = format!("tools/call {name} {} [{label}, {naming:?} ids]", short(&r.args));
                    let l = leaked(&o.raw, &secrets, if naming == Naming::Victim { &r.sent } else { &[] });
                    if !l.is_empty() {
                        holes.add(
                            &op,
                            &who,
                            "nothing of B's",
                            format!("shows {l:?}: {}", o.raw.chars().take(300).collect::<String>()),
                        );
                    }
                    if o.kind != "tool error" && o.kind != "result" {
                        holes.add(&op, &who, "a tool result or a tool error", o.to_string());
                    }
                    if *role == "viewer"
                        && !mcp_reads(tool)
                        && !(o.kind == "tool error" && o.code.as_deref() == Some("forbidden"))
                    {
                        holes.add(&op, &who, "a tool error `forbidden` (the tool writes)", o.to_string());
                    }
                    answers.push((naming, o, r.slots));
                }
                let (_, unknown, slots) = &answers[0];
                let (_, victim, _) = &answers[1];
                if !slots.is_empty() && !victim.same_as(unknown) {
                    holes.add(
                        format!("tools/call {name} [{label}: {}]", slots.join(", ")),
                        &who,
                        format!("as unknown ids: {unknown}"),
                        format!("for B's: {victim}"),
                    );
                }
            }
        }
    }
    holes.assert_none("MCP as another workspace", calls);
}

// ---- A2A -------------------------------------------------------------------------------------

/// An A2A endpoint attacked: its path (with `{name}` for B's agent or a lookalike), the kind
/// of `{name}`, and whether the body's id slots are meant to get past the agent lookup.
struct Endpoint {
    label: &'static str,
    path: String,
    name_kind: Option<&'static str>,
}

fn endpoints() -> Vec<Endpoint> {
    vec![
        Endpoint {
            label: "the workspace endpoint",
            path: "/api/v1/a2a".into(),
            name_kind: None,
        },
        Endpoint {
            label: "A's own agent's endpoint",
            path: format!("/api/v1/a2a/agents/{A_AGENT}"),
            name_kind: None,
        },
        Endpoint {
            label: "B's agent's endpoint by handle",
            path: "/api/v1/a2a/agents/{name}".into(),
            name_kind: Some("handles"),
        },
        Endpoint {
            label: "B's agent's endpoint by id",
            path: "/api/v1/a2a/agents/{name}".into(),
            name_kind: Some("agents"),
        },
    ]
}

#[tokio::test]
async fn every_a2a_method_and_card_answers_another_workspaces_agents_and_tasks_exactly_as_unknown_ones_and_refuses_a_viewers_writes()
 {
    let w = world("a2a").await;
    let mut a2a = a2a_driver(&w.g.base);
    let secrets = w.victim.secrets();
    let mut holes = Holes::default();
    let mut calls = 0;
    w.control(&mut holes).await;
    let methods = a2a.ask(json!({"op": "methods"})).await["methods"]
        .as_array()
        .cloned()
        .expect("methods");
    assert!(methods.len() >= 10, "{methods:?}");
    let base = w.g.base.clone();

    // Control through the SDK: B reads its own card and task.
    let card = a2a
        .ask(json!({"op": "card", "key": w.b.token, "url": format!("{base}/api/v1/a2a/agents/{B_AGENT}")}))
        .await;
    assert_eq!(card["result"]["name"], format!("@{B_AGENT}"), "{card}");

    let mut viewer_codes = BTreeSet::new();
    // A refusal or internal error is reported once per method, endpoint and caller (the
    // first variant that shows it), not once per variant.
    let mut once = BTreeSet::new();
    for (role, key) in &w.attackers {
        let who = format!("A's {role}");
        // Cards: B's agent by handle and by id, as an unknown agent's; the workspace's card
        // (one skill per live agent) shows none of B's.
        for kind in ["handles", "agents"] {
            let real = w.victim.get(kind).to_string();
            let fake = lookalike(&real);
            let mut got = Vec::new();
            for id in [&fake, &real] {
                let url = format!("{base}/api/v1/a2a/agents/{id}");
                let a = a2a.ask(json!({"op": "card", "key": key.token, "url": url})).await;
                calls += 1;
                let o = a2a_outcome(&a, std::slice::from_ref(id));
                let l = leaked(&o.raw, &secrets, std::slice::from_ref(&real));
                if !l.is_empty() {
                    holes.add(format!("GET {url}"), &who, "nothing of B's", format!("shows {l:?}"));
                }
                got.push(o);
            }
            if !got[1].same_as(&got[0]) {
                holes.add(
                    format!("agent card of B's agent by {kind}"),
                    &who,
                    format!("as an unknown agent's: {}", got[0]),
                    got[1].to_string(),
                );
            }
        }
        let ws = a2a
            .ask(json!({"op": "card", "key": key.token, "url": format!("{base}/api/v1/a2a")}))
            .await;
        calls += 1;
        let l = leaked(&ws.to_string(), &secrets, &[]);
        if !l.is_empty() || ws.get("result").is_none() {
            holes.add(
                "the workspace's agent card",
                &who,
                "A's card, nothing of B's",
                format!("shows {l:?}: {ws}"),
            );
        }

        for method in &methods {
            let mname = method["name"].as_str().unwrap();
            let schema = &method["input"];
            let owner = schema["x-message"].as_str().unwrap_or(mname).to_string();
            let writes = !A2A_READ_VERBS.iter().any(|v| mname.starts_with(v));
            for ep in endpoints() {
                let mut made = HashMap::new();
                let n = make(&w.victim, &mut made, &owner, schema, Naming::Unknown, true, None)
                    .slots
                    .len();
                // On B's agent's endpoints the agent lookup comes first: every field, then the
                // path alone; the body's slots one at a time are for the endpoints that get past it.
                let vs: Vec<(String, bool, Option<usize>)> = if ep.name_kind.is_some() {
                    vec![
                        ("every field".into(), true, None),
                        ("required fields, no id in the body".into(), false, Some(usize::MAX)),
                    ]
                } else {
                    variants(n)
                };
                for (label, full, alone) in vs {
                    let mut answers = Vec::new();
                    for naming in [Naming::Unknown, Naming::Victim] {
                        let mut r = make(&w.victim, &mut made, &owner, schema, naming, full, alone);
                        let path = match ep.name_kind {
                            Some(kind) => {
                                let real = w.victim.get(kind).to_string();
                                let id = match naming {
                                    Naming::Victim => real,
                                    Naming::Unknown => made
                                        .entry(format!("path {kind}"))
                                        .or_insert_with(|| lookalike(&real))
                                        .clone(),
                                };
                                r.sent.push(id.clone());
                                r.slots.insert(0, format!("{{name}} ({kind})"));
                                ep.path.replace("{name}", &id)
                            }
                            None => ep.path.clone(),
                        };
                        for kind in &r.missing {
                            holes.add(
                                mname.to_string(),
                                &who,
                                "a victim object of every kind named",
                                format!("none of {kind}: add one to `world`"),
                            );
                        }
                        let a = a2a
                            .ask(json!({"op": "call", "key": key.token, "url": format!("{base}{path}"), "method": mname, "params": r.args}))
                            .await;
                        calls += 1;
                        let o = a2a_outcome(&a, &r.sent);
                        if verbose() {
                            eprintln!(
                                "a2a {mname} {} | {who} | {label} | {naming:?} {} | {o}",
                                ep.label, r.args
                            );
                        }
                        let op = format!(
                            "{mname} on {} ({path}) {} [{label}, {naming:?} ids]",
                            ep.label,
                            short(&r.args)
                        );
                        let l = leaked(&o.raw, &secrets, if naming == Naming::Victim { &r.sent } else { &[] });
                        if !l.is_empty() {
                            holes.add(
                                &op,
                                &who,
                                "nothing of B's",
                                format!("shows {l:?}: {}", o.raw.chars().take(300).collect::<String>()),
                            );
                        }
                        if (o.code.as_deref() == Some("-32603") || o.status.is_some_and(|s| s >= 500))
                            && once.insert((mname.to_string(), ep.label, who.clone(), "internal"))
                        {
                            holes.add(&op, &who, "a clear answer (not an internal error)", o.to_string());
                        }
                        if *role == "viewer" && writes {
                            viewer_codes.insert(format!("{mname}: {o}"));
                            let refused = o.status == Some(403)
                                || (o.kind != "result"
                                    && o.message.contains("forbidden")
                                    && o.code.as_deref() != Some("-32603"));
                            if !refused && once.insert((mname.to_string(), ep.label, who.clone(), "viewer")) {
                                holes.add(&op, &who, "refused as forbidden (HTTP 403, or a JSON-RPC error that says so and is not -32603)", o.to_string());
                            }
                        }
                        answers.push((o, r.slots));
                    }
                    let (unknown, slots) = &answers[0];
                    let (victim, _) = &answers[1];
                    let named: Vec<&String> = match alone {
                        Some(i) if i != usize::MAX => slots.get(i).into_iter().collect(),
                        Some(_) => slots.iter().take(1).collect(),
                        None => slots.iter().collect(),
                    };
                    if named.is_empty() {
                        continue;
                    }
                    // A message id is the client's to choose (a retried send is the same message):
                    // one another workspace holds cannot be taken; refused as not found is the
                    // accepted difference (as REST's POST /sessions {sessionId}).
                    let chosen = named.len() == 1
                        && named[0] == "messageId"
                        && unknown.kind == "result"
                        && victim.code.as_deref() == Some("-32001");
                    if !victim.same_as(unknown) && !chosen {
                        holes.add(
                            format!("{mname} on {} [{label}: {named:?}]", ep.label),
                            &who,
                            format!("as unknown ids: {unknown}"),
                            format!("for B's: {victim}"),
                        );
                    }
                }
            }
        }
    }
    eprintln!("A2A: what a viewer's write gets now:");
    for c in &viewer_codes {
        eprintln!("  {c}");
    }
    // B's task and push config are intact.
    let (_, got) = rpc(
        &w.b,
        &format!("/api/v1/a2a/agents/{B_AGENT}"),
        "GetTaskPushNotificationConfig",
        json!({"taskId": w.victim.get("tasks"), "id": w.victim.get("pushes")}),
    )
    .await;
    if got.get("result").is_none() {
        holes.add(
            "GetTaskPushNotificationConfig",
            "B's own admin, after A's attack",
            "B's push config",
            got.to_string(),
        );
    }
    holes.assert_none("A2A as another workspace", calls);
}

// ---- AG-UI -----------------------------------------------------------------------------------

/// What a run names: the agent in the path, and what a resume entry answers. AG-UI has no
/// served schema: `RunAgentInput` is threadId, runId, messages, resume (agui.rs); the interrupt
/// ids the endpoint raises are `permission:<requestId>` and `question:<questionId>`.
fn agui_runs(
    v: &Victim,
    naming: Naming,
    made: &mut HashMap<String, String>,
) -> Vec<(String, String, Value, Vec<String>)> {
    let mut id = |kind: &str| -> String {
        let real = v.get(kind).to_string();
        match naming {
            Naming::Victim => real,
            Naming::Unknown => made.entry(kind.to_string()).or_insert_with(|| lookalike(&real)).clone(),
        }
    };
    let message = |text: &str| json!([{"id": fresh("m"), "role": "user", "content": text}]);
    let input = |messages: Value, resume: Value| json!({"threadId": fresh("thread"), "runId": fresh("run"), "messages": messages, "resume": resume});
    let (handle, agent, perm, question) = (id("handles"), id("agents"), id("permissions"), id("questions"));
    let deny = |p: &str| json!([{"interruptId": format!("permission:{p}"), "status": "resolved", "payload": {"approved": false}}]);
    let answer =
        |q: &str| json!([{"interruptId": format!("question:{q}"), "status": "resolved", "payload": {"answer": "a"}}]);
    vec![
        (
            "a run on the agent by handle".into(),
            handle.clone(),
            input(message("probe run"), json!(null)),
            vec![handle.clone()],
        ),
        (
            "a run on the agent by id".into(),
            agent.clone(),
            input(message("probe run"), json!(null)),
            vec![agent.clone()],
        ),
        (
            "a resume of the permission, on the agent".into(),
            handle.clone(),
            input(json!([]), deny(&perm)),
            vec![handle.clone(), perm.clone()],
        ),
        (
            "a resume of the permission, on A's own agent".into(),
            A_AGENT.into(),
            input(json!([]), deny(&perm)),
            vec![perm.clone()],
        ),
        (
            "a resume of the question, on A's own agent".into(),
            A_AGENT.into(),
            input(json!([]), answer(&question)),
            vec![question.clone()],
        ),
    ]
}

#[tokio::test]
async fn an_ag_ui_run_on_another_workspaces_agent_or_interrupt_answers_as_an_unknown_one_shows_nothing_of_it_and_a_viewer_cannot_run()
 {
    let w = world("agui").await;
    let mut agui = agui_driver(&w.g.base);
    let secrets = w.victim.secrets();
    let mut holes = Holes::default();
    let mut calls = 0;
    w.control(&mut holes).await;
    // Control: B runs its own agent through the client (RUN_STARTED and B's snapshot).
    let own = agui
        .ask(json!({"key": w.b.token, "agent": B_AGENT, "input": {"threadId": "t", "runId": "r", "messages": [{"id": "m0", "role": "user", "content": "hello"}]}}))
        .await;
    assert!(own.to_string().contains(w.victim.get("sessions")), "B's own run: {own}");

    for (role, key) in &w.attackers {
        let who = format!("A's {role}");
        let mut made = HashMap::new();
        let unknown = agui_runs(&w.victim, Naming::Unknown, &mut made);
        let victim = agui_runs(&w.victim, Naming::Victim, &mut made);
        for ((label, u_agent, u_input, u_sent), (_, v_agent, v_input, v_sent)) in unknown.into_iter().zip(victim) {
            let u = agui
                .ask(json!({"key": key.token, "agent": u_agent, "input": u_input}))
                .await;
            let v = agui
                .ask(json!({"key": key.token, "agent": v_agent, "input": v_input}))
                .await;
            calls += 2;
            let (uo, vo) = (agui_outcome(&u, &u_sent), agui_outcome(&v, &v_sent));
            if verbose() {
                eprintln!("ag-ui {label} | {who} | unknown {uo} | B's {vo}");
            }
            let op = format!("POST /api/v1/agents/{{name}}/agui: {label}");
            if !vo.same_as(&uo) {
                holes.add(&op, &who, format!("as unknown: {uo}"), format!("for B's: {vo}"));
            }
            let l = leaked(&vo.raw, &secrets, &v_sent);
            if !l.is_empty() {
                holes.add(&op, &who, "nothing of B's in the stream", format!("shows {l:?}"));
            }
            if *role == "viewer" {
                for o in [&uo, &vo] {
                    if o.status != Some(403) {
                        holes.add(&op, &who, "403 forbidden (a run sends or decides)", o.to_string());
                    }
                }
            }
        }
        // A viewer may not run even its own workspace's agent.
        if *role == "viewer" {
            let a = agui
                .ask(json!({"key": key.token, "agent": A_AGENT, "input": {"threadId": "t", "runId": "r", "messages": [{"id": "m1", "role": "user", "content": "probe"}]}}))
                .await;
            calls += 1;
            let o = agui_outcome(&a, &[]);
            if o.status != Some(403) {
                holes.add(
                    "POST /api/v1/agents/{name}/agui: a run on A's own agent",
                    &who,
                    "403 forbidden",
                    o.to_string(),
                );
            }
        }
    }
    // B's permission and question are still pending for B.
    let (_, p) = w.b.get("/api/v1/permissions?status=pending").await;
    if !p.to_string().contains(w.victim.get("permissions")) {
        holes.add(
            "B's permission request",
            "B's own admin, after A's attack",
            "still pending",
            p.to_string(),
        );
    }
    holes.assert_none("AG-UI as another workspace", calls);
}

// ---- no key, a revoked key -------------------------------------------------------------------

#[tokio::test]
async fn every_protocol_route_tool_and_method_answers_401_without_a_key_and_with_a_revoked_key() {
    let m = mesh().await;
    let g = gateway(&m, &[("RELAY_API_TOKEN", ROOT)]).await;
    let root = Bearer::new(&g, ROOT);
    let revoked = revoked_key(&root, "admin").await;
    let (mut mcp, mut a2a, mut agui) = (mcp_driver(&g.base), a2a_driver(&g.base), agui_driver(&g.base));
    let tools = mcp.ask(json!({"key": ROOT})).await["tools"]
        .as_array()
        .cloned()
        .expect("tools");
    let methods = a2a.ask(json!({"op": "methods"})).await["methods"]
        .as_array()
        .cloned()
        .expect("methods");
    let victim = {
        let mut v = Victim::default();
        for kind in ["sessions", "agents", "permissions", "questions", "messages", "pushes"] {
            v.set(kind, uuid::Uuid::now_v7().to_string());
        }
        v.set("handles", "somebody");
        v.set("tasks", format!("{}:{}", uuid::Uuid::now_v7(), uuid::Uuid::now_v7()));
        v
    };
    let mut holes = Holes::default();
    let mut calls = 0;
    for (who, key) in [("no key", None), ("a revoked key", Some(revoked.token.as_str()))] {
        // MCP: refused at connect by the official client (HTTP 401), and each tool's raw
        // tools/call too.
        let a = mcp.ask(json!({"key": key})).await;
        calls += 1;
        if a.get("tools").is_some() || last_status(&a) != Some(401) {
            holes.add(
                "MCP initialize + tools/list",
                who,
                "refused with HTTP 401",
                a.to_string(),
            );
        }
        for tool in &tools {
            let name = tool["name"].as_str().unwrap();
            let r = make(
                &victim,
                &mut HashMap::new(),
                name,
                &tool["inputSchema"],
                Naming::Victim,
                true,
                None,
            );
            let mut req = g.http.post(g.url("/api/v1/mcp")).header("accept", "application/json, text/event-stream").json(
                &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": r.args}}),
            );
            if let Some(k) = key {
                req = req.bearer_auth(k);
            }
            let status = req.send().await.unwrap().status();
            calls += 1;
            if status != 401 {
                holes.add(format!("MCP tools/call {name}"), who, "HTTP 401", status.to_string());
            }
        }
        // A2A: the cards and every method on both endpoints, through the SDK.
        for url in ["/api/v1/a2a", "/api/v1/a2a/agents/somebody"] {
            let a = a2a
                .ask(json!({"op": "card", "key": key, "url": format!("{}{url}", g.base)}))
                .await;
            calls += 1;
            if last_status(&a) != Some(401) || a.get("result").is_some() {
                holes.add(format!("A2A card of {url}"), who, "HTTP 401", a.to_string());
            }
            for method in &methods {
                let mname = method["name"].as_str().unwrap();
                let schema = &method["input"];
                let owner = schema["x-message"].as_str().unwrap_or(mname);
                let r = make(&victim, &mut HashMap::new(), owner, schema, Naming::Victim, true, None);
                let a = a2a
                    .ask(json!({"op": "call", "key": key, "url": format!("{}{url}", g.base), "method": mname, "params": r.args}))
                    .await;
                calls += 1;
                if last_status(&a).is_none() && a.get("result").is_some() {
                    // The SDK answered without a request (GetExtendedAgentCard when the card
                    // it holds declares none): nothing reached the gateway.
                    eprintln!("A2A {mname}: not sent by the SDK ({a})");
                    continue;
                }
                if last_status(&a) != Some(401) || a.get("result").is_some() {
                    holes.add(
                        format!("A2A {mname} on {url}"),
                        who,
                        "HTTP 401",
                        a2a_outcome(&a, &[]).to_string(),
                    );
                }
            }
        }
        // AG-UI: a run, through the client.
        let a = agui
            .ask(json!({"key": key, "agent": "somebody", "input": {"threadId": "t", "runId": "r", "messages": [{"id": "m", "role": "user", "content": "x"}]}}))
            .await;
        calls += 1;
        if a["error"]["status"] != 401 {
            holes.add("AG-UI run", who, "HTTP 401", a.to_string());
        }
    }
    holes.assert_none("MCP, A2A and AG-UI without a valid key", calls);
}

/// A request's arguments as a finding shows them: at most 160 characters.
fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() <= 160 {
        return s;
    }
    format!("{}…", s.chars().take(160).collect::<String>())
}
