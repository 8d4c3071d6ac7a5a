//! What the attack tests share (tests/attack_rest.rs, attack_grpc.rs, attack_nats.rs): a mesh
//! with a victim workspace B holding one real object of every kind and an attacker workspace A
//! with an admin, an operator and a viewer key; ids of B's objects and fresh lookalikes of them;
//! request bodies generated from JSON Schemas with every field that names an object filled in;
//! and the list of findings, asserted once at the end. tests/attack_protocols.rs uses the
//! pieces that are the same for MCP, A2A and AG-UI (the names, the findings, the harness, the
//! services, the victim's session, interrupts and attackers, the official clients' drivers).
#![allow(dead_code)] // each attack file uses its own part

use crate::common::{self, Bearer, Gateway, Mesh, free_port, gateway, mesh};
use relay_contracts::access;
use relay_testkit::{ServiceProcess, wait_for};
use reqwest::{Method, StatusCode};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

pub const ROOT: &str = "attack-root-token";
/// The victim's and the attacker's workspaces.
pub const VICTIM: &str = "zebra-victim-ws";
pub const ATTACKER: &str = "attacker-ws";
/// Text only the victim wrote: found in an answer to the attacker, it leaked.
pub const SECRET_TITLE: &str = "zebra-secret-title-7f3a";
pub const SECRET_TEXT: &str = "zebra-secret-text-91c2";
/// What a required free-text query (`q`) searches for: a word of the victim's secrets.
pub const SEARCH_WORD: &str = "zebra";

/// Values for fields a valid body needs that the schema cannot mark required (an "exactly one
/// of `at` and `cron`" rule), or that must be well formed to get past validation to the lookup.
/// By field name, whatever the operation.
pub fn hint(field: &str) -> Option<Value> {
    match field {
        // A one-time schedule far in the future: valid, and never fires during the test.
        "at" => Some(json!(4_102_444_800_000i64)),
        // A webhook target that is never reached (port 9, discard).
        "url" => Some(json!("http://127.0.0.1:9/attack")),
        // A fresh name (channels, keys, workspaces, personas): valid for every name pattern.
        "name" => Some(json!(fresh("probe"))),
        // Replay streams from the start, so a stream that leaks shows it at once.
        "offset" => Some(json!(0)),
        _ => None,
    }
}

/// The kind of object a field or query parameter names: `…Id`/`…Ids` by the last word of its
/// name (`sourceSessionId` names a session), and the few reference fields without the suffix.
/// Kinds are the collection segments of the paths (`sessions`, `webhooks/deliveries`, …), so
/// the victim table serves both.
pub fn reference(field: &str) -> Option<&'static str> {
    let field = field.trim_start_matches('?');
    match field {
        "agent" => return Some("handles"),
        "to" => return Some("@handles"),
        "session" => return Some("sessions"),
        "channel" => return Some("channels"),
        "workspace" => return Some("workspaces"),
        _ => {}
    }
    let stem = field.strip_suffix("Ids").or_else(|| field.strip_suffix("Id"))?;
    let start = stem.rfind(|c: char| c.is_ascii_uppercase()).unwrap_or(0);
    Some(match stem[start..].to_ascii_lowercase().as_str() {
        "session" => "sessions",
        "agent" => "agents",
        "turn" => "turns",
        "request" => "permissions",
        "question" => "questions",
        "proposal" => "consensus",
        "delivery" => "deliveries",
        "key" => "keys",
        "message" | "thread" => "messages",
        "persona" => "personas",
        "profile" => "profiles",
        "schedule" => "schedules",
        "webhook" => "webhooks",
        "workspace" => "workspaces",
        _ => return None,
    })
}

/// `ATTACK_VERBOSE=1` prints every answer.
pub fn verbose() -> bool {
    std::env::var_os("ATTACK_VERBOSE").is_some()
}

static COUNTER: AtomicU64 = AtomicU64::new(1);

pub fn fresh(prefix: &str) -> String {
    format!("{prefix}-{}", COUNTER.fetch_add(1, Ordering::Relaxed))
}

/// An id of the same shape as `id` that names nothing: its last twelve hex-class characters
/// replaced by random ones (a uuid stays a uuid, `wh_<hex>` stays `wh_<hex>`, a name a name).
pub fn lookalike(id: &str) -> String {
    let random = uuid::Uuid::new_v4().simple().to_string();
    let mut random = random.chars();
    let mut chars: Vec<char> = id.chars().collect();
    let mut replaced = 0;
    for c in chars.iter_mut().rev() {
        if replaced == 12 {
            break;
        }
        if c.is_ascii_digit() || ('a'..='f').contains(c) {
            *c = random.next().unwrap();
            replaced += 1;
        }
    }
    let out: String = chars.into_iter().collect();
    if out == id || replaced < 4 {
        format!("{id}-{}", &uuid::Uuid::new_v4().simple().to_string()[..12])
    } else {
        out
    }
}

/// The victim's objects by kind.
#[derive(Default)]
pub struct Victim {
    pub ids: BTreeMap<String, String>,
}

impl Victim {
    pub fn set(&mut self, kind: &str, id: impl Into<String>) {
        self.ids.insert(kind.to_string(), id.into());
    }

    /// The id of the victim's object of `kind` (there must be one).
    pub fn get(&self, kind: &str) -> &str {
        &self.ids[kind]
    }

    /// Every string of the victim's that must never reach the attacker.
    pub fn secrets(&self) -> Vec<String> {
        let mut s: Vec<String> = self.ids.values().filter(|v| !v.starts_with('@')).cloned().collect();
        s.extend([SECRET_TITLE.to_string(), SECRET_TEXT.to_string(), VICTIM.to_string()]);
        s.sort();
        s.dedup();
        s
    }
}

/// Which of a request's id slots (a path parameter, a query parameter or a body field naming
/// an object) name the victim's objects; the others name fresh lookalikes.
#[derive(Clone, Copy, PartialEq)]
pub enum Naming {
    Unknown,
    Victim,
    /// Only the n-th slot names the victim's object (the others the caller's own, where
    /// [`Ids::with_own`] has one of their kind, else lookalikes).
    Only(usize),
    /// Only the n-th slot names a fresh lookalike, the others the caller's own where it has
    /// one: the twin of `Only(n)`.
    UnknownOnly(usize),
    /// Slots naming an object of this kind name the victim's, the others the caller's own.
    OnlyKind(&'static [&'static str]),
}

/// Where a request's ids come from: the victim's objects, or fresh lookalikes of them.
pub struct Ids<'a> {
    pub victim: &'a Victim,
    pub naming: Naming,
    pub made: HashMap<String, String>,
    /// Victim ids this request names (an answer may echo them).
    pub sent: Vec<String>,
    /// Kinds named that the victim has no object of.
    pub missing: Vec<String>,
    /// The slots, in order, by where they are (`{id}`, `?sessionId`, `sourceSessionId`).
    pub slots: Vec<String>,
    /// Whether optional fields and query parameters naming objects are sent (else only the
    /// required ones: `POST /sessions/{id}/fork` with no body forks from the last message).
    pub optional: bool,
    /// The caller's own objects by kind (an agent's own session and agent id).
    pub own: Option<&'a Victim>,
}

impl<'a> Ids<'a> {
    pub fn new(victim: &'a Victim, naming: Naming) -> Ids<'a> {
        Ids {
            victim,
            naming,
            made: HashMap::new(),
            sent: Vec::new(),
            missing: Vec::new(),
            slots: Vec::new(),
            optional: true,
            own: None,
        }
    }

    pub fn with_own(mut self, own: &'a Victim) -> Self {
        self.own = Some(own);
        self
    }

    pub fn with_optional(mut self, optional: bool) -> Self {
        self.optional = optional;
        self
    }

    pub fn of(&mut self, slot: &str, kinds: &[String]) -> String {
        let n = self.slots.len();
        self.slots.push(slot.to_string());
        let Some((kind, real)) = kinds
            .iter()
            .find_map(|k| self.victim.ids.get(k).map(|id| (k.clone(), id.clone())))
        else {
            self.missing.push(kinds.join(" or "));
            return fresh("no-victim-object");
        };
        if self.naming == Naming::Victim
            || self.naming == Naming::Only(n)
            || matches!(self.naming, Naming::OnlyKind(k) if k.contains(&kind.as_str()))
        {
            self.sent.push(real.trim_start_matches('@').to_string());
            return real;
        }
        let one_slot = matches!(
            self.naming,
            Naming::Only(_) | Naming::UnknownOnly(_) | Naming::OnlyKind(_)
        );
        if one_slot
            && self.naming != Naming::UnknownOnly(n)
            && let Some(mine) = self.own.and_then(|o| o.ids.get(&kind))
        {
            return mine.clone();
        }
        let fake = |real: &str| match real.strip_prefix('@') {
            Some(handle) => format!("@{}", lookalike(handle)),
            None => lookalike(real),
        };
        if self.naming == Naming::UnknownOnly(n) {
            // A lookalike of its own, as the victim's object in `Only(n)` differs from the
            // others' lookalikes (a child and a parent session never name the same one).
            return fake(&real);
        }
        self.made.entry(kind).or_insert_with(|| fake(&real)).clone()
    }
}

/// Whether a value of `schema` may be an id (a string or a list): a field named like a reference
/// whose schema is an object (`agent` in `session.agent.attach`, an agent spec) is generated as
/// that object, its own reference fields filled in.
fn may_hold_an_id(doc: &Value, schema: &Value, depth: usize) -> bool {
    let schema = resolve(doc, schema);
    let ts = types(schema);
    if ts.iter().any(|t| *t == "string" || *t == "array") {
        return true;
    }
    let alternatives: Vec<&Value> = ["oneOf", "anyOf", "allOf"]
        .iter()
        .filter_map(|k| schema[*k].as_array())
        .flatten()
        .collect();
    if !alternatives.is_empty() {
        return depth < 8 && alternatives.iter().any(|a| may_hold_an_id(doc, a, depth + 1));
    }
    ts.is_empty() && schema.get("properties").is_none()
}

pub fn resolve<'d>(doc: &'d Value, schema: &'d Value) -> &'d Value {
    let mut s = schema;
    while let Some(r) = s["$ref"].as_str() {
        s = &doc["components"]["schemas"][r.rsplit('/').next().unwrap()];
    }
    s
}

pub fn types(schema: &Value) -> Vec<&str> {
    match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect(),
        _ if schema.get("properties").is_some() => vec!["object"],
        _ => vec![],
    }
}

/// The names of the fields `schema` requires.
pub fn required(schema: &Value) -> Vec<&str> {
    schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// A plausible value for `schema`: the required fields with placeholders of the right type,
/// every field naming an object with an id from `ids`, and the [`hint`]ed fields.
pub fn generate(doc: &Value, schema: &Value, field: Option<&str>, ids: &mut Ids, depth: usize) -> Value {
    let schema = resolve(doc, schema);
    if depth > 8 {
        return Value::Null;
    }
    if let Some(kinds) = field.and_then(reference).filter(|_| may_hold_an_id(doc, schema, 0)) {
        let (kinds, at) = match kinds.strip_prefix('@') {
            Some(k) => (k, true),
            None => (kinds, false),
        };
        let id = ids.of(field.unwrap_or_default(), &[kinds.to_string()]);
        let id = if at { format!("@{id}") } else { id };
        let is_array = types(schema).contains(&"array") || field.is_some_and(|f| f.ends_with("Ids"));
        return if is_array { json!([id]) } else { json!(id) };
    }
    if let Some(v) = field.and_then(hint) {
        return v;
    }
    if let Some(c) = schema.get("const") {
        return c.clone();
    }
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    let ts = types(schema);
    if ts.is_empty() {
        for alt in ["oneOf", "anyOf", "allOf"] {
            if let Some(first) = schema[alt]
                .as_array()
                .and_then(|a| a.iter().find(|s| resolve(doc, s)["type"] != "null"))
            {
                return generate(doc, first, field, ids, depth + 1);
            }
        }
        return json!("probe");
    }
    match ts[0] {
        "object" => {
            let required = required(schema);
            let mut out = Map::new();
            for (name, prop) in schema["properties"].as_object().into_iter().flatten() {
                let wanted = required.contains(&name.as_str())
                    || (ids.optional && reference(name).is_some())
                    || (hint(name).is_some() && reference(name).is_none());
                if wanted {
                    let v = generate(doc, prop, Some(name), ids, depth + 1);
                    if !v.is_null() {
                        out.insert(name.clone(), v);
                    }
                }
            }
            Value::Object(out)
        }
        "array" => {
            let n = schema["minItems"].as_u64().unwrap_or(0).max(1);
            let items = &schema["items"];
            Value::Array((0..n).map(|_| generate(doc, items, None, ids, depth + 1)).collect())
        }
        "string" => json!(fresh("probe")),
        "integer" | "number" => json!(schema["minimum"].as_i64().unwrap_or(1).max(1)),
        "boolean" => json!(false),
        _ => Value::Null,
    }
}

/// One finding.
pub struct Hole {
    pub op: String,
    pub who: String,
    pub expected: String,
    pub got: String,
}

#[derive(Default)]
pub struct Holes(pub Vec<Hole>);

impl Holes {
    pub fn add(&mut self, op: impl Into<String>, who: &str, expected: impl Into<String>, got: impl Into<String>) {
        self.0.push(Hole {
            op: op.into(),
            who: who.into(),
            expected: expected.into(),
            got: got.into(),
        });
    }

    /// Fails with every finding, one a line.
    pub fn assert_none(&self, what: &str, checked: usize) {
        if self.0.is_empty() {
            eprintln!("{what}: {checked} calls, no finding");
            return;
        }
        let mut report = format!("{what}: {} findings in {checked} calls\n", self.0.len());
        for h in &self.0 {
            report += &format!("  {} | as {} | expected {} | got {}\n", h.op, h.who, h.expected, h.got);
        }
        panic!("{report}");
    }
}

pub fn leaked<'s>(text: &str, secrets: &'s [String], sent: &[String]) -> Vec<&'s str> {
    secrets
        .iter()
        .filter(|s| text.contains(s.as_str()) && !sent.contains(s))
        .map(String::as_str)
        .collect()
}

// ---- the world -------------------------------------------------------------------------------

/// An agent's harness connection, calling on its own harness subjects (as tests/isolation.rs).
pub struct Harness {
    pub client: async_nats::Client,
    pub id: String,
    pub workspace: String,
}

impl Harness {
    pub async fn connect(m: &Mesh, id: &str, workspace: &str) -> Harness {
        let creds = m.nats.harness_creds(id, workspace).unwrap();
        let client = async_nats::ConnectOptions::with_credentials(&creds)
            .unwrap()
            .custom_inbox_prefix(access::harness_inbox_prefix(id))
            .connect(&m.nats.url)
            .await
            .unwrap();
        Harness {
            client,
            id: id.into(),
            workspace: workspace.into(),
        }
    }

    pub async fn call(&self, subject: &str, body: Value) -> Value {
        let on = access::harness_subject(&self.workspace, &self.id, subject);
        let reply = tokio::time::timeout(
            Duration::from_secs(10),
            self.client.request(on, serde_json::to_vec(&body).unwrap().into()),
        )
        .await
        .unwrap_or_else(|_| panic!("{subject} timed out"))
        .unwrap();
        serde_json::from_slice(&reply.payload).unwrap()
    }
}

/// Each naming of B's objects to compare with the all-unknown request, labelled (`how` said
/// after the label): all of B's, then, where there are several slots, B's in one at a time.
pub fn namings(slots: &[String], how: &str) -> Vec<(String, Naming)> {
    let mut namings = Vec::new();
    if !slots.is_empty() {
        namings.push((format!("B's {}{how}", slots.join(", ")), Naming::Victim));
    }
    if slots.len() > 1 {
        for (i, slot) in slots.iter().enumerate() {
            namings.push((format!("B's {slot} only{how}"), Naming::Only(i)));
        }
    }
    namings
}

/// The slots in which `naming` names B's objects.
pub fn named(naming: Naming, slots: &[String]) -> Vec<String> {
    match naming {
        Naming::Only(i) => vec![slots[i].clone()],
        _ => slots.to_vec(),
    }
}

/// Ids shaped like real ones of every kind that name nothing that exists: for the calls without
/// a valid key (the key decides, not the id).
pub fn shapes() -> Victim {
    let mut shapes = Victim::default();
    for kind in [
        "sessions",
        "agents",
        "turns",
        "permissions",
        "questions",
        "channels",
        "consensus",
        "deliveries",
        "keys",
        "messages",
        "personas",
        "profiles",
        "schedules",
        "webhooks",
        "webhooks/deliveries",
        "workspaces",
        "handles",
    ] {
        shapes.set(kind, uuid::Uuid::now_v7().to_string());
    }
    shapes.set("@handles", "@somebody");
    shapes
}

/// For the calls without a valid key: a mesh, a gateway with the shared token [`ROOT`], one with
/// no shared token and not started open (a caller without a key is nobody there), and the root
/// token's caller.
pub async fn gateways() -> (Mesh, Gateway, Gateway, Bearer) {
    let m = mesh().await;
    let g = gateway(&m, &[("RELAY_API_TOKEN", ROOT)]).await;
    let closed = gateway(&m, &[("RELAY_API_TOKEN", ""), ("RELAY_GATEWAY__OPEN", "false")]).await;
    let root = Bearer::new(&g, ROOT);
    (m, g, closed, root)
}

/// A key of `default` with `role`, revoked: returned once the gateway heard of the revocation
/// (it refuses the key).
pub async fn revoked_key(root: &Bearer, role: &str) -> Bearer {
    let (key_id, revoked) = root.create_key("gone", role, None).await;
    let (status, body, _) = root.send(Method::DELETE, &format!("/api/v1/keys/{key_id}"), None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    wait_for(|| async { (revoked.get("/api/v1/sessions").await.0 == StatusCode::UNAUTHORIZED).then_some(()) }).await;
    revoked
}

/// The services an attack needs: a mesh, a spawner (what it surfaces logged to `surfaced`),
/// the automation service (webhooks to private addresses allowed) and a gateway whose shared
/// token is `root`.
pub struct Services {
    pub m: Mesh,
    pub g: Gateway,
    pub spawner: ServiceProcess,
    pub automation: ServiceProcess,
}

pub async fn services(surfaced: &std::path::Path, root: &str) -> Services {
    let m = mesh().await;
    let spawner = common::spawner(&m, surfaced).await;
    let automation = ServiceProcess::spawn(
        &relay_testkit::bin_path("automation"),
        &m.nats,
        &m.db,
        &[("RELAY_WEBHOOKS__ALLOW_PRIVATE", "true")],
    );
    relay_testkit::wait_for_instances(&m.client, "automation", 1).await;
    let g = gateway(&m, &[("RELAY_API_TOKEN", root)]).await;
    Services {
        m,
        g,
        spawner,
        automation,
    }
}

pub struct World {
    pub m: Mesh,
    pub g: Gateway,
    pub root: Bearer,
    pub doc: Value,
    pub _spawner: ServiceProcess,
    pub _automation: ServiceProcess,
}

pub async fn world() -> World {
    let surfaced = std::env::temp_dir().join(format!("attack-{}.log", free_port()));
    let Services {
        m,
        g,
        spawner,
        automation,
    } = services(&surfaced, ROOT).await;
    let root = Bearer::new(&g, ROOT);
    let (status, doc) = root.get("/api/v1/openapi.json").await;
    assert_eq!(status, StatusCode::OK, "{doc}");
    World {
        m,
        g,
        root,
        doc,
        _spawner: spawner,
        _automation: automation,
    }
}

pub fn ok(status: StatusCode, body: &Value, what: &str) {
    assert!(status.is_success(), "setting up the victim, {what}: {status} {body}");
}

/// Workspace B with one real object of every kind a path of the document names.
pub async fn victim(w: &World) -> Victim {
    let root = &w.root;
    let (status, body) = root.post("/api/v1/workspaces", json!({"name": VICTIM})).await;
    ok(status, &body, "workspace");
    let (_, b) = root.create_key("b-admin", "admin", Some(VICTIM)).await;
    let (key_id, _) = root.create_key("b-wall", "viewer", Some(VICTIM)).await;
    let mut v = Victim::default();
    v.set("workspaces", VICTIM);
    v.set("keys", key_id);

    // A session with a real (fake) agent spawned on a host, its first turn and a message.
    let (session, agent, sent) = session_with_agent(&b, "zebra-b-agent").await;
    let turn = wait_for(|| async {
        let (_, t) = b.get(&format!("/api/v1/sessions/{session}/turns")).await;
        t["turns"][0]["turnId"].as_str().map(str::to_string)
    })
    .await;
    // Its host lists it (to B) once the spawner's heartbeat says so.
    wait_for(|| async {
        let (_, hosts) = b.get("/api/v1/hosts").await;
        hosts.to_string().contains(&agent).then_some(())
    })
    .await;
    v.set("sessions", session.clone());
    v.set("agents", agent.clone());
    v.set("handles", "zebra-b-agent");
    v.set("@handles", "@zebra-b-agent");
    v.set("turns", turn);
    v.set("deliveries", sent["deliveryIds"][0].as_str().unwrap());

    // A pending permission request and question of the agent, asked by its harness.
    let (permission, question) = interrupts(&w.m, &agent, &session).await;
    v.set("permissions", permission);
    v.set("questions", question);

    // A channel the agent is in, a relay message to it and a proposal put to it.
    let (status, body) = b.post("/api/v1/channels", json!({"name": "zebra-b-channel"})).await;
    ok(status, &body, "channel");
    let (status, body) = b
        .post("/api/v1/channels/zebra-b-channel/join", json!({"agent": agent}))
        .await;
    ok(status, &body, "channel join");
    v.set("channels", "zebra-b-channel");
    let (status, body) = b
        .post(
            "/api/v1/messages",
            json!({"to": "#zebra-b-channel", "text": format!("{SECRET_TEXT} on the channel")}),
        )
        .await;
    ok(status, &body, "relay message");
    v.set("messages", body["messageId"].as_str().expect("message id"));
    let (status, body) = b
        .post(
            "/api/v1/consensus",
            json!({"question": "zebra stripes?", "options": ["black", "white"], "to": "#zebra-b-channel"}),
        )
        .await;
    ok(status, &body, "proposal");
    v.set("consensus", body["proposalId"].as_str().expect("proposal id"));

    // A persona, a profile, a schedule (one run, far away) and a webhook with a delivery.
    for kind in ["personas", "profiles"] {
        let id = format!("zebra-b-{kind}");
        let (status, body, _) = b
            .send(
                Method::PUT,
                &format!("/api/v1/{kind}/{id}"),
                Some(json!({"name": id, "systemPrompt": "be a zebra"})),
            )
            .await;
        ok(status, &body, kind);
        v.set(kind, id);
    }
    let (status, body) = b
        .post(
            "/api/v1/schedules",
            json!({"at": 4_102_444_800_000i64, "action": {"kind": "sendMessage", "sessionId": session, "text": "tick"}}),
        )
        .await;
    ok(status, &body, "schedule");
    v.set("schedules", body["scheduleId"].as_str().expect("schedule id"));
    let (status, body) = b
        .post(
            "/api/v1/webhooks",
            json!({"url": format!("http://127.0.0.1:{}/zebra", free_port()), "events": ["session.created"]}),
        )
        .await;
    ok(status, &body, "webhook");
    let webhook = body["webhookId"].as_str().expect("webhook id").to_string();
    let (status, body) = b.post("/api/v1/sessions", json!({"title": "second"})).await;
    ok(status, &body, "second session");
    let delivery = wait_for(|| async {
        let (_, d) = b.get(&format!("/api/v1/webhooks/{webhook}/deliveries")).await;
        d["deliveries"][0]["deliveryId"].as_str().map(str::to_string)
    })
    .await;
    v.set("webhooks", webhook);
    v.set("webhooks/deliveries", delivery);
    v
}

/// A session of the victim's (`b` is its admin) with a real (fake) agent `handle` spawned on a
/// host, and a message with [`SECRET_TEXT`] to the agent: the session's id, the agent's id and
/// the message's answer.
pub async fn session_with_agent(b: &Bearer, handle: &str) -> (String, String, Value) {
    let (status, created) = b
        .post(
            "/api/v1/sessions",
            json!({"cli": "claude", "agent": handle, "task": "hello", "title": SECRET_TITLE}),
        )
        .await;
    ok(status, &created, "session with an agent");
    let session = created["sessionId"].as_str().unwrap().to_string();
    let agent = created["agentId"].as_str().unwrap().to_string();
    let (status, sent) = b
        .post(
            &format!("/api/v1/sessions/{session}/messages"),
            json!({"message": SECRET_TEXT, "agentIds": [agent]}),
        )
        .await;
    ok(status, &sent, "session message");
    (session, agent, sent)
}

/// A pending permission request and a question of the victim's `agent` in `session`, asked by
/// its harness: their ids.
pub async fn interrupts(m: &Mesh, agent: &str, session: &str) -> (String, String) {
    let harness = Harness::connect(m, agent, VICTIM).await;
    let asked = harness
        .call(
            "permission.request",
            json!({"agentId": agent, "sessionId": session, "tool": "Bash", "command": "rm -rf /tmp/zebra", "description": "clean up"}),
        )
        .await;
    assert_eq!(asked["decision"], "pending", "{asked}");
    let permission = asked["requestId"].as_str().unwrap().to_string();
    let question = harness
        .call(
            "question.ask",
            json!({"agentId": agent, "sessionId": session, "question": "which zebra?", "options": ["a", "b"]}),
        )
        .await;
    let question = question["questionId"].as_str().expect("question id").to_string();
    (permission, question)
}

/// Workspace A's admin, operator and viewer.
pub async fn attackers(root: &Bearer) -> Vec<(&'static str, Bearer)> {
    let (status, body) = root.post("/api/v1/workspaces", json!({"name": ATTACKER})).await;
    ok(status, &body, "attacker workspace");
    let mut out = Vec::new();
    for role in ["viewer", "operator", "admin"] {
        let (_, key) = root.create_key(&format!("a-{role}"), role, Some(ATTACKER)).await;
        out.push((role, key));
    }
    out
}

// ---- the official clients ----------------------------------------------------------------------

/// A driver process around an official client: a JSON request a line in, an answer a line out.
pub struct Driver {
    _child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    name: &'static str,
}

impl Driver {
    pub fn spawn(name: &'static str, mut cmd: tokio::process::Command) -> Driver {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Driver {
            _child: child,
            stdin,
            lines,
            name,
        }
    }

    pub async fn ask(&mut self, req: Value) -> Value {
        let line = format!("{req}\n");
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
        let answer = tokio::time::timeout(Duration::from_secs(120), self.lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("{}: no answer within 120 s to {req}", self.name))
            .unwrap()
            .unwrap_or_else(|| panic!("{}: the driver ended at {req}", self.name));
        serde_json::from_str(&answer).unwrap()
    }
}

pub fn tests_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests")
}

pub fn mcp_driver(base: &str) -> Driver {
    let python = relay_testkit::python_venv("mcp-2.3.0", &["mcp==2.3.0"]);
    let mut cmd = tokio::process::Command::new(python);
    cmd.arg(tests_dir().join("py/attack_mcp.py")).env("BASE", base);
    Driver::spawn("mcp", cmd)
}

pub fn a2a_driver(base: &str) -> Driver {
    let python = relay_testkit::python_venv("a2a-sdk-1.3.0", &["a2a-sdk==1.3.0"]);
    let mut cmd = tokio::process::Command::new(python);
    cmd.arg(tests_dir().join("py/attack_a2a.py")).env("BASE", base);
    Driver::spawn("a2a", cmd)
}

pub fn agui_driver(base: &str) -> Driver {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../crates/interop/js");
    let client = root.join("node_modules/@ag-ui/client/dist/index.mjs");
    assert!(
        client.exists(),
        "run `make interop-deps` (scripts/install-interop-deps.sh)"
    );
    let mut cmd = tokio::process::Command::new("node");
    cmd.arg(tests_dir().join("js/attack_agui.mjs"))
        .env("BASE", base)
        .env("AGUI_CLIENT", client);
    Driver::spawn("ag-ui", cmd)
}

// ---- the declarations' request schemas -------------------------------------------------------

/// The request schema of every declared subject, from the declarations themselves
/// (`relay_contracts::with_rpcs!`, the list `relay_contracts::rpc::ALL` is made from): a
/// subject declared tomorrow is attacked tomorrow. The schemas refer to each other as
/// `#/components/schemas/<Name>`, so [`Contracts::doc`] is a document [`generate`] resolves in.
pub struct Contracts {
    pub doc: Value,
    pub requests: BTreeMap<&'static str, Value>,
}

macro_rules! request_schemas {
    ($(
        $(#[doc = $doc:expr])+
        $name:ident $method:ident = $subject:literal, $service:ident, $roles:expr, $scope:ident,
            $req:ty => $resp:ty $(, grpc($gs:literal, $gm:literal))? $(, timeout($secs:literal))?;
    )*) => {{
        let mut named = Vec::new();
        let requests: Vec<(&'static str, Value)> = vec![$(($subject, schema_of::<$req>(&mut named))),*];
        (requests, named)
    }};
}

fn schema_of<T: utoipa::ToSchema>(
    named: &mut Vec<(String, utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>)>,
) -> Value {
    T::schemas(named);
    named.push((T::name().into_owned(), T::schema()));
    serde_json::to_value(T::schema()).expect("a schema serializes")
}

pub fn contracts() -> Contracts {
    #[allow(unused_imports)]
    use relay_contracts::{
        actions, audit, automation, consensus, cost, delivery, events, hosts, keys, messaging, permission, prompts,
        session, workspace,
    };
    let (requests, named) = relay_contracts::with_rpcs!(request_schemas);
    let mut schemas = Map::new();
    for (name, schema) in named {
        schemas.insert(name, serde_json::to_value(schema).expect("a schema serializes"));
    }
    assert_eq!(requests.len(), relay_contracts::rpc::ALL.len());
    Contracts {
        doc: json!({"components": {"schemas": schemas}}),
        requests: requests.into_iter().collect(),
    }
}

/// Creates whose id the client may choose, by subject, and why their answer may differ (the
/// REST twin is attack_rest.rs `CLIENT_CHOSEN_IDS`): ids are global, so a create naming an id
/// another workspace holds is refused as `not_found`, while a fresh id creates.
/// A fresh id goes on to the request's next check (and creates when the rest is valid: a
/// proposal `to` nobody answers `conflict`), so only B's answer is fixed: `not_found`.
pub const CLIENT_CHOSEN_SUBJECT_IDS: &[(&str, &str)] = &[
    ("session.create", "sessionId"),
    ("consensus.propose", "proposalId"),
    ("permission.request", "requestId"),
    ("question.ask", "questionId"),
];

/// Whether a request of `subject` naming the victim's objects in `slots` may answer `not_found`
/// where the same request with fresh ids went on ([`CLIENT_CHOSEN_SUBJECT_IDS`]).
pub fn chosen_subject_id(subject: &str, slots: &[String]) -> bool {
    CLIENT_CHOSEN_SUBJECT_IDS
        .iter()
        .any(|(s, field)| *s == subject && slots.iter().any(|x| x == field))
}
