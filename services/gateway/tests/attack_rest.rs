//! The REST surface attacked from outside, as a hostile tenant would: every operation of the
//! OpenAPI document the gateway serves (method + path, read at run time, never hand-listed, so
//! a route is attacked the day it is added) is driven over HTTP against a real mesh:
//!
//! - as workspace A's admin, operator and viewer, naming workspace B's real objects (path
//!   parameters, `…Id` query parameters and body fields; all of them, then one at a time; with
//!   every field that names an object, then with the required fields only) and, separately,
//!   fresh unknown ids of the same shape: the answers must be the same (status and error code),
//!   nothing of B's is ever shown (lists included), no answer is a 5xx, a viewer gets 403 on
//!   every mutating operation, and B still reads each of its objects afterwards;
//! - with no key and with a revoked key: 401 on every operation, also from a gateway that has no
//!   shared token and was not started open.
//!
//! Every finding is collected, and each test fails once at the end with the whole list
//! (operation, caller, expected, got), so one hole does not hide the others. The victim, the
//! attackers, ids and generated bodies are tests/attack/mod.rs, shared with the gRPC and NATS
//! attacks.

mod attack;
mod common;

use attack::*;
use common::Gateway;
use futures::StreamExt;
use reqwest::Method;
use serde_json::{Value, json};
use std::fmt;
use std::time::Duration;

/// What answers without a key, and why. Every operation of the OpenAPI document needs a key
/// (the document's `security: bearerAuth`, with no operation overriding it; an operation that
/// declared `security: []` would be exempted and printed); these are the routes outside
/// `/api/v1` that are public by design (services/gateway/src/router.rs, console.rs). The
/// test checks they answer without a key and say nothing of the victim's. Not listed: the
/// console's `POST /console/signin`, which takes a key (the credential) and sets its cookie.
const PUBLIC: &[(&str, &str)] = &[
    ("/healthz", "liveness for orchestrators: a constant body"),
    (
        "/readyz",
        "readiness for orchestrators: whether NATS and Postgres answer",
    ),
    ("/metrics", "the Prometheus scrape: counters by route and status"),
    (
        "/",
        "the console's static page; everything it shows comes from /api/v1 with a key",
    ),
];

/// Creates whose id the client may choose, and why their answer may differ. Ids are global
/// (UUIDv7 unless chosen), so a create naming an id another workspace holds cannot make it: it
/// is refused as `404 not_found`, as that workspace's objects are everywhere — never `conflict`
/// or the object. What the attacker learns is that the id is taken, which a UUID it could not
/// have guessed does not tell; per-workspace ids would remove even that (not built).
const CLIENT_CHOSEN_IDS: &[(&str, &str)] = &[("POST /sessions", "sessionId")];

/// Whether `got` for B's ids, against `unknown` for fresh ones, is the accepted difference of
/// [`CLIENT_CHOSEN_IDS`]: the fresh id created, B's refused as not found.
fn chosen_id_taken(op: &str, slots: &[String], unknown: &Answer, got: &Answer) -> bool {
    CLIENT_CHOSEN_IDS
        .iter()
        .any(|(o, field)| *o == op && slots.iter().any(|s| s == field))
        && unknown.success()
        && got.status == 404
        && got.code.as_deref() == Some("not_found")
}
// ---- the document ----------------------------------------------------------------------------

struct Param {
    name: String,
    required: bool,
    schema: Value,
}

struct Op {
    method: Method,
    /// As the document writes it (`/sessions/{id}/fork`), under `/api/v1`.
    path: String,
    /// Each path parameter with the kinds it may name, most specific first
    /// (`webhooks/deliveries`, then `deliveries`).
    path_params: Vec<(String, Vec<String>)>,
    query: Vec<Param>,
    body: Option<Value>,
    /// Declared `security: []`.
    public: bool,
}

impl Op {
    fn mutating(&self) -> bool {
        self.method != Method::GET && self.method != Method::HEAD
    }
    fn name(&self) -> String {
        format!("{} {}", self.method, self.path)
    }
}

impl fmt::Debug for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

fn operations(doc: &Value) -> Vec<Op> {
    let default_secured = doc["security"].as_array().is_some_and(|s| !s.is_empty());
    let mut ops = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().unwrap() {
            let Ok(m) = method.to_ascii_uppercase().parse::<Method>() else {
                continue;
            };
            if !["GET", "POST", "PUT", "PATCH", "DELETE"].contains(&m.as_str()) {
                continue;
            }
            let params: Vec<&Value> = item["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .chain(op["parameters"].as_array().into_iter().flatten())
                .collect();
            let mut path_params = Vec::new();
            let mut collections: Vec<&str> = Vec::new();
            let mut parent: Option<&str> = None;
            for seg in path.split('/').filter(|s| !s.is_empty()) {
                if let Some(name) = seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                    let last = collections.last().copied().unwrap_or("");
                    let mut kinds = Vec::new();
                    if let Some(p) = parent {
                        kinds.push(format!("{p}/{last}"));
                    }
                    kinds.push(last.to_string());
                    path_params.push((name.to_string(), kinds));
                    parent = Some(last);
                } else {
                    collections.push(seg);
                }
            }
            let query = params
                .iter()
                .filter(|p| p["in"] == "query")
                .map(|p| Param {
                    name: p["name"].as_str().unwrap().to_string(),
                    required: p["required"].as_bool().unwrap_or(false),
                    schema: p["schema"].clone(),
                })
                .collect();
            let body = op["requestBody"]["content"]["application/json"]["schema"].clone();
            let secured = match op.get("security").and_then(Value::as_array) {
                Some(s) => !s.is_empty() && !s.iter().any(|r| r.as_object().is_some_and(serde_json::Map::is_empty)),
                None => default_secured,
            };
            ops.push(Op {
                method: m,
                path: path.clone(),
                path_params,
                query,
                body: (!body.is_null()).then_some(body),
                public: !secured,
            });
        }
    }
    ops
}

// ---- requests made from it -------------------------------------------------------------------
struct Request {
    path: String,
    query: Vec<(String, String)>,
    body: Option<Value>,
}

fn build(doc: &Value, op: &Op, ids: &mut Ids) -> Request {
    let mut path = op.path.clone();
    for (name, kinds) in &op.path_params {
        path = path.replace(&format!("{{{name}}}"), &ids.of(&format!("{{{name}}}"), kinds));
    }
    let mut query = Vec::new();
    for p in &op.query {
        let v = if reference(&p.name).is_some() && (p.required || ids.optional) {
            generate(doc, &p.schema, Some(&format!("?{}", p.name)), ids, 0)
        } else if let Some(h) = hint(&p.name) {
            h
        } else if p.required {
            match types(resolve(doc, &p.schema)).first() {
                Some(&"string") | None => json!(SEARCH_WORD),
                _ => generate(doc, &p.schema, None, ids, 0),
            }
        } else {
            continue;
        };
        let v = match v {
            Value::String(s) => s,
            Value::Array(a) => a
                .iter()
                .map(|x| x.as_str().unwrap_or_default())
                .collect::<Vec<_>>()
                .join(","),
            other => other.to_string(),
        };
        query.push((p.name.clone(), v));
    }
    let body = op.body.as_ref().map(|s| generate(doc, s, None, ids, 0));
    Request {
        path: format!("/api/v1{path}"),
        query,
        body,
    }
}

// ---- answers ---------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
struct Answer {
    status: u16,
    code: Option<String>,
    text: String,
}

impl Answer {
    fn same_as(&self, other: &Answer) -> bool {
        self.status == other.status && self.code == other.code
    }
    fn success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.code {
            Some(c) => {
                let message = serde_json::from_str::<Value>(&self.text)
                    .ok()
                    .and_then(|v| {
                        v["error"]["message"]
                            .as_str()
                            .map(|m| m.chars().take(100).collect::<String>())
                    })
                    .unwrap_or_default();
                write!(f, "{} {c} ({message})", self.status)
            }
            None if self.status == 0 => f.write_str("no answer"),
            None => {
                let snippet: String = self.text.chars().take(120).collect();
                write!(f, "{} {snippet}", self.status)
            }
        }
    }
}

/// Sends `r` with `token` (none: no Authorization header). An event stream is read for a moment
/// (its replay comes at once) and dropped.
async fn send(base: &str, http: &reqwest::Client, token: Option<&str>, method: &Method, r: &Request) -> Answer {
    let mut b = http
        .request(method.clone(), format!("{base}{}", r.path))
        .query(&r.query);
    if let Some(t) = token {
        b = b.bearer_auth(t);
    }
    if let Some(body) = &r.body {
        b = b.json(body);
    }
    let answered = tokio::time::timeout(Duration::from_secs(60), async {
        let resp = b.send().await.map_err(|e| e.to_string())?;
        let status = resp.status().as_u16();
        let stream = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let text = if stream {
            let mut body = resp.bytes_stream();
            let mut text = String::new();
            let _ = tokio::time::timeout(Duration::from_secs(1), async {
                while let Some(Ok(chunk)) = body.next().await {
                    text.push_str(&String::from_utf8_lossy(&chunk));
                }
            })
            .await;
            text
        } else {
            resp.text().await.unwrap_or_default()
        };
        Ok::<_, String>((status, text))
    })
    .await;
    match answered {
        Ok(Ok((status, text))) => {
            let code = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| v["error"]["code"].as_str().map(str::to_string));
            Answer { status, code, text }
        }
        Ok(Err(e)) => Answer {
            status: 0,
            code: None,
            text: e,
        },
        Err(_) => Answer {
            status: 0,
            code: None,
            text: "no answer within 60 s".into(),
        },
    }
}

/// Reads first; then actions on objects; then deletions; creations last (`PUT` by id, `POST` to
/// a collection), so that an object the attacker legitimately creates under a name the victim
/// also uses (names are per workspace) is not mistaken by a later call for the victim's. A hole
/// that destroys a victim object still shows (and the victim's reads after the attack say so).
fn in_attack_order(ops: &[Op]) -> Vec<&Op> {
    let rank = |o: &&Op| match o.method.as_str() {
        "GET" => 0,
        "DELETE" => 2,
        "PUT" => 3,
        _ if o.path_params.is_empty() => 3,
        _ => 1,
    };
    let mut v: Vec<&Op> = ops.iter().collect();
    v.sort_by_key(rank);
    v
}

/// `GET` of one object of each kind (`GET /sessions/{id}`), for the victim's own reads.
fn readers<'o>(ops: &'o [Op], victim: &Victim) -> Vec<(&'o Op, Request)> {
    ops.iter()
        .filter(|o| o.method == Method::GET && o.path_params.len() == 1 && o.path.ends_with('}'))
        .map(|o| {
            let mut ids = Ids::new(victim, Naming::Victim);
            let path = o.path.replace(
                &format!("{{{}}}", o.path_params[0].0),
                &ids.of(&o.path_params[0].0, &o.path_params[0].1),
            );
            (
                o,
                Request {
                    path: format!("/api/v1{path}"),
                    query: vec![],
                    body: None,
                },
            )
        })
        .collect()
}

#[tokio::test]
async fn every_rest_operation_answers_another_workspaces_ids_exactly_as_unknown_ids_and_never_shows_its_objects() {
    let w = world().await;
    let victim = victim(&w).await;
    let attackers = attackers(&w.root).await;
    let (_, b) = w.root.create_key("b-reader", "admin", Some(VICTIM)).await;
    let ops = operations(&w.doc);
    assert!(ops.len() > 50, "only {} operations in the document", ops.len());
    let secrets = victim.secrets();
    let mut holes = Holes::default();
    let mut calls = 0;

    // Control: the victim reads each of its objects (else the attack below proves nothing).
    let readers = readers(&ops, &victim);
    for (op, r) in &readers {
        let a = send(&w.g.base, &w.g.http, Some(&b.token), &op.method, r).await;
        if !a.success() {
            holes.add(
                op.name(),
                "B's own admin (control)",
                "2xx for B's own object",
                a.to_string(),
            );
        }
    }

    // Public routes answer without a key and say nothing of B's.
    for (path, why) in PUBLIC {
        let r = Request {
            path: path.to_string(),
            query: vec![],
            body: None,
        };
        let a = send(&w.g.base, &w.g.http, None, &Method::GET, &r).await;
        calls += 1;
        if !a.success() {
            holes.add(format!("GET {path} (public: {why})"), "no key", "2xx", a.to_string());
        }
        let l = leaked(&a.text, &secrets, &[]);
        if !l.is_empty() {
            holes.add(
                format!("GET {path}"),
                "no key",
                "nothing of B's",
                format!("shows {l:?}"),
            );
        }
    }

    for op in in_attack_order(&ops) {
        for (role, key) in &attackers {
            let who = format!("A's {role}");
            let (base, http) = (&w.g.base, &w.g.http);
            let call = |r: Request| async move { send(base, http, Some(&key.token), &op.method, &r).await };
            // All ids unknown; then all B's; then, where there are several, B's in one slot at
            // a time. Once with every field that names an object, once with the required only.
            let mut answers = Vec::new();
            let mut full_slots = None;
            for optional in [true, false] {
                let mut ids = Ids::new(&victim, Naming::Unknown).with_optional(optional);
                let unknown = call(build(&w.doc, op, &mut ids)).await;
                calls += 1;
                for kinds in ids.missing.iter().collect::<std::collections::BTreeSet<_>>() {
                    holes.add(
                        op.name(),
                        &who,
                        format!("a victim object of kind {kinds} (add one to `victim`)"),
                        "none: this route is not attacked",
                    );
                }
                let slots = ids.slots.clone();
                if full_slots.as_ref() == Some(&slots) {
                    break; // nothing optional names an object: the same requests again
                }
                full_slots = Some(slots.clone());
                let how = if optional { "" } else { ", required fields only" };
                answers.push((format!("unknown ids{how}"), unknown.clone(), ids.sent));
                for (label, naming) in namings(&slots, how) {
                    let named = named(naming, &slots);
                    let mut ids = Ids::new(&victim, naming).with_optional(optional);
                    let a = call(build(&w.doc, op, &mut ids)).await;
                    calls += 1;
                    if !a.same_as(&unknown) && !chosen_id_taken(&op.name(), &named, &unknown, &a) {
                        holes.add(
                            format!("{} [{label}]", op.name()),
                            &who,
                            format!("as unknown ids: {unknown}"),
                            a.to_string(),
                        );
                    }
                    answers.push((label, a, ids.sent));
                }
            }
            for (label, a, sent) in &answers {
                if verbose() {
                    eprintln!("{} | {who} | {label} | {a}", op.name());
                }
                if a.status >= 500 || a.status == 0 {
                    holes.add(op.name(), &who, format!("a clear answer ({label})"), a.to_string());
                }
                if op.mutating() && *role == "viewer" && a.status != 403 {
                    holes.add(op.name(), &who, format!("403 forbidden ({label})"), a.to_string());
                }
                let l = leaked(&a.text, &secrets, sent);
                if !l.is_empty() {
                    holes.add(
                        op.name(),
                        &who,
                        format!("nothing of B's ({label})"),
                        format!("{} showing {l:?}", a.status),
                    );
                }
            }
        }
    }

    // After the attack, every object of B's is still there for B.
    for (op, r) in &readers {
        let a = send(&w.g.base, &w.g.http, Some(&b.token), &op.method, r).await;
        if !a.success() {
            holes.add(
                op.name(),
                "B's own admin, after A's attack",
                "2xx: B's object untouched",
                a.to_string(),
            );
        }
    }
    holes.assert_none("REST as another workspace", calls);
}

#[tokio::test]
async fn every_rest_operation_answers_401_without_a_key_with_a_revoked_key_and_on_a_gateway_never_opened() {
    // The second gateway has no shared token and was not started open: a caller without a key
    // is nobody.
    let (_m, g, closed, root) = gateways().await;
    let (_, doc) = root.get("/api/v1/openapi.json").await;
    let ops = operations(&doc);
    assert!(ops.len() > 50, "only {} operations in the document", ops.len());

    // A revoked operator key of `default`, refused once the gateway heard of the revocation.
    let revoked = revoked_key(&root, "operator").await;

    // Ids shaped like real ones (nothing is named that exists: the key decides, not the id).
    let shapes = shapes();

    let mut holes = Holes::default();
    let mut calls = 0;
    let public: Vec<String> = ops.iter().filter(|o| o.public).map(Op::name).collect();
    if !public.is_empty() {
        eprintln!("declared public in the document (not required to answer 401): {public:?}");
    }
    let callers: [(&str, &Gateway, Option<&str>); 3] = [
        ("no key", &g, None),
        ("a revoked key", &g, Some(revoked.token.as_str())),
        ("no key, gateway with no token and not open", &closed, None),
    ];
    for (who, gw, token) in callers {
        for op in ops.iter().filter(|o| !o.public) {
            let r = build(&doc, op, &mut Ids::new(&shapes, Naming::Unknown));
            let a = send(&gw.base, &gw.http, token, &op.method, &r).await;
            calls += 1;
            if a.status != 401 || a.code.as_deref() != Some("unauthorized") {
                holes.add(op.name(), who, "401 unauthorized", a.to_string());
            }
        }
    }
    holes.assert_none("REST without a valid key", calls);
}
