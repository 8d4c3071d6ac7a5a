//! The gRPC surface attacked from outside, as a hostile tenant would: every method of the
//! relay.v1 services (read at run time from the descriptor set the gateway serves, with the
//! subject and the roles each one's declaration in `relay_contracts::rpc::ALL` carries, never
//! hand-listed, so a method is attacked the day it is added) is called over HTTP/2 against a
//! real mesh:
//!
//! - as workspace A's admin, operator and viewer, naming workspace B's real objects in every
//!   field that names one (all of them, then one at a time; with every such field, then with the
//!   required ones only) and, separately, fresh unknown ids of the same shape: the answers must
//!   be the same (gRPC code and the `relay-error-code` metadata), nothing of B's is ever shown,
//!   no answer is `INTERNAL`/`UNKNOWN`/`UNAVAILABLE`, a role the declaration does not admit gets
//!   `PERMISSION_DENIED` whatever it names, and B still reads its objects afterwards;
//! - with no key, with a revoked key and on a gateway never opened: `UNAUTHENTICATED` on every
//!   method.
//!
//! Request bodies are generated from the JSON Schema of each declaration's request type (the
//! contract the gateway's bridge turns the protobuf into) and expressed in protobuf with the
//! proto descriptors, as the gateway reads them. The victim, the attackers and the id
//! generation are tests/attack/mod.rs, shared with attack_rest.rs.

mod attack;
mod common;

use attack::*;
use prost::Message as _;
use prost_reflect::{DescriptorPool, DeserializeOptions, DynamicMessage, Kind, MessageDescriptor, Value as PValue};
use relay_contracts::rpc::{ALL, Role};
use serde_json::Value;
use std::fmt;
use std::time::Duration;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::transport::Channel;
use tonic::{Code, Status};

// ---- the methods -----------------------------------------------------------------------------

struct Rpc {
    /// `SessionService/Fork`.
    name: String,
    /// `/relay.v1.SessionService/Fork`.
    path: String,
    /// The declared subject; `None` for `EventService/Subscribe` (the SSE stream's twin).
    subject: Option<&'static str>,
    /// The declared roles; `None` for Subscribe, which every key may open (as SSE).
    roles: Option<&'static [Role]>,
    streaming: bool,
    input: MessageDescriptor,
    output: MessageDescriptor,
}

impl Rpc {
    /// Whether a key with `role` may call it (as the gateway's `auth::allows`: an admin may do
    /// what an operator may, an operator what a viewer may).
    fn admits(&self, role: &str) -> bool {
        let Some(roles) = self.roles else { return true };
        roles.iter().any(|r| match role {
            "admin" => matches!(r, Role::Admin | Role::Operator | Role::Viewer),
            "operator" => matches!(r, Role::Operator | Role::Viewer),
            _ => matches!(r, Role::Viewer),
        })
    }
    fn reads(&self) -> bool {
        self.roles.is_none_or(|r| r.contains(&Role::Viewer))
    }
}

fn pool() -> DescriptorPool {
    DescriptorPool::decode(relay_proto::FILE_DESCRIPTOR_SET).expect("the descriptor set decodes")
}

fn rpcs(pool: &DescriptorPool) -> Vec<Rpc> {
    let mut out = Vec::new();
    for service in pool.services().filter(|s| s.package_name() == "relay.v1") {
        for method in service.methods() {
            let decl = ALL.iter().find(|r| r.grpc == Some((service.name(), method.name())));
            out.push(Rpc {
                name: format!("{}/{}", service.name(), method.name()),
                path: format!("/{}/{}", service.full_name(), method.name()),
                subject: decl.map(|d| d.subject),
                roles: decl.map(|d| d.roles),
                streaming: method.is_server_streaming(),
                input: method.input(),
                output: method.output(),
            });
        }
    }
    out
}

/// Reads first, then actions on objects, creates last (as attack_rest.rs orders them).
fn in_attack_order(rpcs: &[Rpc]) -> Vec<&Rpc> {
    let mut v: Vec<&Rpc> = rpcs.iter().collect();
    v.sort_by_key(|r| {
        if r.reads() {
            0
        } else if r.name.ends_with("/Create") {
            2
        } else {
            1
        }
    });
    v
}

// ---- requests made from the declarations ---------------------------------------------------

/// The request of `rpc`: the declaration's request schema filled by [`generate`] (every field
/// naming an object from `ids`), read into protobuf as the gateway reads the contract JSON. Where
/// a method has no declaration (Subscribe) or the JSON does not fit, the descriptor itself: each
/// field whose JSON name names an object gets an id.
fn build(contracts: &Contracts, rpc: &Rpc, ids: &mut Ids) -> (DynamicMessage, Value) {
    if let Some(schema) = rpc.subject.and_then(|s| contracts.requests.get(s)) {
        let json = generate(&contracts.doc, schema, None, ids, 0);
        let read = DynamicMessage::deserialize_with_options(
            rpc.input.clone(),
            json.clone(),
            &DeserializeOptions::new().deny_unknown_fields(false),
        );
        match read {
            Ok(m) => return (m, json),
            Err(e) => {
                if verbose() {
                    eprintln!(
                        "{}: generated {json} does not fit the proto ({e}); from the descriptor",
                        rpc.name
                    );
                }
                ids.slots.clear();
                ids.sent.clear();
            }
        }
    }
    let mut m = DynamicMessage::new(rpc.input.clone());
    for field in rpc.input.fields() {
        let json_name = field.json_name().to_string();
        let Some(kind) = reference(&json_name) else { continue };
        if !matches!(field.kind(), Kind::String) {
            continue;
        }
        let kind = kind.trim_start_matches('@');
        let id = ids.of(&json_name, &[kind.to_string()]);
        let v = PValue::String(id);
        m.set_field(&field, if field.is_list() { PValue::List(vec![v]) } else { v });
    }
    let json = serde_json::to_value(&m).unwrap_or_default();
    (m, json)
}

// ---- calls -----------------------------------------------------------------------------------

#[derive(Clone)]
struct Answer {
    code: Code,
    /// The `relay-error-code` metadata (the bus error's wire code).
    wire: Option<String>,
    message: String,
    /// The response (or the stream's first messages) as JSON, and the error message.
    text: String,
}

impl Answer {
    fn same_as(&self, other: &Answer) -> bool {
        self.code == other.code && self.wire == other.wire
    }
    fn success(&self) -> bool {
        self.code == Code::Ok
    }
    fn unclear(&self) -> bool {
        matches!(
            self.code,
            Code::Internal
                | Code::Unknown
                | Code::Unavailable
                | Code::DataLoss
                | Code::Unimplemented
                | Code::DeadlineExceeded
        )
    }
    fn of(status: Status) -> Answer {
        Answer {
            code: status.code(),
            wire: status
                .metadata()
                .get("relay-error-code")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string),
            message: status.message().to_string(),
            text: status.message().to_string(),
        }
    }
}

impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.success() {
            let snippet: String = self.text.chars().take(120).collect();
            return write!(f, "OK {snippet}");
        }
        let message: String = self.message.chars().take(100).collect();
        match &self.wire {
            Some(w) => write!(f, "{:?} {w} ({message})", self.code),
            None => write!(f, "{:?} ({message})", self.code),
        }
    }
}

/// Encodes `DynamicMessage`s and decodes the method's output type.
struct DynCodec(MessageDescriptor);
struct DynEncoder;
struct DynDecoder(MessageDescriptor);

impl Codec for DynCodec {
    type Encode = DynamicMessage;
    type Decode = DynamicMessage;
    type Encoder = DynEncoder;
    type Decoder = DynDecoder;
    fn encoder(&mut self) -> DynEncoder {
        DynEncoder
    }
    fn decoder(&mut self) -> DynDecoder {
        DynDecoder(self.0.clone())
    }
}

impl Encoder for DynEncoder {
    type Item = DynamicMessage;
    type Error = Status;
    fn encode(&mut self, item: DynamicMessage, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        item.encode(dst).map_err(|e| Status::internal(e.to_string()))
    }
}

impl Decoder for DynDecoder {
    type Item = DynamicMessage;
    type Error = Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<DynamicMessage>, Status> {
        DynamicMessage::decode(self.0.clone(), src)
            .map(Some)
            .map_err(|e| Status::internal(format!("undecodable {}: {e}", self.0.full_name())))
    }
}

fn json_of(m: &DynamicMessage) -> String {
    serde_json::to_string(m).unwrap_or_default()
}

/// Calls `rpc` with `msg` and `token` (none: no authorization metadata). A stream is read for a
/// moment (its replay comes at once) and dropped.
async fn call(ch: &Channel, token: Option<&str>, rpc: &Rpc, msg: DynamicMessage) -> Answer {
    let mut grpc = tonic::client::Grpc::new(ch.clone());
    let mut request = tonic::Request::new(msg);
    if let Some(t) = token {
        request
            .metadata_mut()
            .insert("authorization", format!("Bearer {t}").parse().unwrap());
    }
    let path: tonic::codegen::http::uri::PathAndQuery = rpc.path.parse().unwrap();
    let codec = DynCodec(rpc.output.clone());
    let answered = tokio::time::timeout(Duration::from_secs(60), async {
        if let Err(e) = grpc.ready().await {
            return Answer::of(Status::unavailable(format!("channel not ready: {e}")));
        }
        if !rpc.streaming {
            return match grpc.unary(request, path, codec).await {
                Ok(r) => Answer {
                    code: Code::Ok,
                    wire: None,
                    message: String::new(),
                    text: json_of(r.get_ref()),
                },
                Err(s) => Answer::of(s),
            };
        }
        match grpc.server_streaming(request, path, codec).await {
            Ok(r) => {
                let mut stream = r.into_inner();
                let mut text = String::new();
                let mut end = None;
                let _ = tokio::time::timeout(Duration::from_secs(1), async {
                    loop {
                        match stream.message().await {
                            Ok(Some(m)) => text.push_str(&json_of(&m)),
                            Ok(None) => break,
                            Err(s) => {
                                end = Some(s);
                                break;
                            }
                        }
                    }
                })
                .await;
                match end {
                    Some(s) => {
                        let mut a = Answer::of(s);
                        a.text = format!("{text} {}", a.text);
                        a
                    }
                    None => Answer {
                        code: Code::Ok,
                        wire: None,
                        message: String::new(),
                        text,
                    },
                }
            }
            Err(s) => Answer::of(s),
        }
    })
    .await;
    answered.unwrap_or_else(|_| Answer::of(Status::deadline_exceeded("no answer within 60 s")))
}

async fn channel(base: &str) -> Channel {
    Channel::from_shared(base.to_string()).unwrap().connect().await.unwrap()
}

// ---- the tests -------------------------------------------------------------------------------

#[tokio::test]
async fn every_grpc_method_answers_another_workspaces_ids_exactly_as_unknown_ids_and_never_shows_its_objects() {
    let w = world().await;
    let victim = victim(&w).await;
    let attackers = attackers(&w.root).await;
    let (_, b) = w.root.create_key("b-reader", "admin", Some(VICTIM)).await;
    let pool = pool();
    let rpcs = rpcs(&pool);
    let contracts = contracts();
    assert!(rpcs.len() > 40, "only {} methods in relay.v1", rpcs.len());
    let undeclared: Vec<&str> = rpcs
        .iter()
        .filter(|r| r.subject.is_none())
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(
        undeclared,
        ["EventService/Subscribe"],
        "every unary method has a declaration"
    );
    let ch = channel(&w.g.base).await;
    let secrets = victim.secrets();
    let mut holes = Holes::default();
    let mut calls = 0;

    // Control: B's admin reads each of its objects through every read that names exactly one
    // (else the attack below proves nothing); again after the attack (B's objects untouched).
    let controls: Vec<(&Rpc, DynamicMessage)> = rpcs
        .iter()
        .filter(|r| r.reads() && !r.streaming)
        .filter_map(|r| {
            let mut ids = Ids::new(&victim, Naming::Victim).with_optional(false);
            let (m, _) = build(&contracts, r, &mut ids);
            (ids.slots.len() == 1).then_some((r, m))
        })
        .collect();
    assert!(controls.len() > 5, "only {} reads of one object", controls.len());
    for (r, m) in &controls {
        let a = call(&ch, Some(&b.token), r, m.clone()).await;
        if !a.success() {
            holes.add(
                &r.name,
                "B's own admin (control)",
                "OK for B's own object",
                a.to_string(),
            );
        }
    }

    for rpc in in_attack_order(&rpcs) {
        for (role, key) in &attackers {
            let who = format!("A's {role}");
            let admitted = rpc.admits(role);
            let mut answers: Vec<(String, Answer, Vec<String>)> = Vec::new();
            let mut full_slots = None;
            for optional in [true, false] {
                let mut ids = Ids::new(&victim, Naming::Unknown).with_optional(optional);
                let (m, _) = build(&contracts, rpc, &mut ids);
                let unknown = call(&ch, Some(&key.token), rpc, m).await;
                calls += 1;
                for kinds in ids.missing.iter().collect::<std::collections::BTreeSet<_>>() {
                    holes.add(
                        &rpc.name,
                        &who,
                        format!("a victim object of kind {kinds} (add one to `victim`)"),
                        "none: this method is not attacked",
                    );
                }
                let slots = ids.slots.clone();
                if full_slots.as_ref() == Some(&slots) {
                    break;
                }
                full_slots = Some(slots.clone());
                let how = if optional { "" } else { ", required fields only" };
                answers.push((format!("unknown ids{how}"), unknown.clone(), ids.sent));
                for (label, naming) in namings(&slots, how) {
                    let named = named(naming, &slots);
                    // One slot of B's is compared with one fresh id in that slot (the others
                    // alike in both), not with the all-unknown request, where every slot of a
                    // kind names the same lookalike.
                    let (unknown, unknown_naming) = match naming {
                        Naming::Only(i) => {
                            let mut ids = Ids::new(&victim, Naming::UnknownOnly(i)).with_optional(optional);
                            let (m, _) = build(&contracts, rpc, &mut ids);
                            calls += 1;
                            let a = call(&ch, Some(&key.token), rpc, m).await;
                            answers.push((format!("unknown {} only{how}", slots[i]), a.clone(), ids.sent));
                            (a, Naming::UnknownOnly(i))
                        }
                        _ => (unknown.clone(), Naming::Unknown),
                    };
                    let mut ids = Ids::new(&victim, naming).with_optional(optional);
                    let (m, _) = build(&contracts, rpc, &mut ids);
                    let a = call(&ch, Some(&key.token), rpc, m).await;
                    calls += 1;
                    let chosen = rpc.subject.is_some_and(|s| chosen_subject_id(s, &named))
                        && a.code == Code::NotFound
                        && a.wire.as_deref() == Some("not_found");
                    // A success changes what comes after it: an unknown request again (fresh ids),
                    // after B's, says whether the difference is B's id or the state.
                    let state = !a.same_as(&unknown) && unknown.success() && {
                        let mut ids = Ids::new(&victim, unknown_naming).with_optional(optional);
                        let (m, _) = build(&contracts, rpc, &mut ids);
                        call(&ch, Some(&key.token), rpc, m).await.same_as(&a)
                    };
                    if !a.same_as(&unknown) && !chosen && !state {
                        holes.add(
                            format!("{} [{label}]", rpc.name),
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
                    eprintln!("{} | {who} | {label} | {a}", rpc.name);
                }
                if a.unclear() {
                    holes.add(&rpc.name, &who, format!("a clear answer ({label})"), a.to_string());
                }
                if !admitted && a.code != Code::PermissionDenied {
                    holes.add(
                        &rpc.name,
                        &who,
                        format!(
                            "PERMISSION_DENIED: the declaration admits {:?} ({label})",
                            rpc.roles.unwrap_or_default()
                        ),
                        a.to_string(),
                    );
                }
                let l = leaked(&a.text, &secrets, sent);
                if !l.is_empty() {
                    holes.add(
                        &rpc.name,
                        &who,
                        format!("nothing of B's ({label})"),
                        format!("{a} showing {l:?}"),
                    );
                }
            }
        }
    }

    for (r, m) in &controls {
        let a = call(&ch, Some(&b.token), r, m.clone()).await;
        if !a.success() {
            holes.add(
                &r.name,
                "B's own admin, after A's attack",
                "OK: B's object untouched",
                a.to_string(),
            );
        }
    }
    holes.assert_none("gRPC as another workspace", calls);
}

#[tokio::test]
async fn every_grpc_method_answers_unauthenticated_without_a_key_with_a_revoked_key_and_on_a_gateway_never_opened() {
    let (_m, g, closed, root) = gateways().await;

    // A revoked operator key of `default`, refused once the gateway heard of the revocation.
    let revoked = revoked_key(&root, "operator").await;

    // Ids shaped like real ones: the key decides, not the id.
    let shapes = shapes();

    let pool = pool();
    let rpcs = rpcs(&pool);
    let contracts = contracts();
    let (open_ch, closed_ch) = (channel(&g.base).await, channel(&closed.base).await);
    let mut holes = Holes::default();
    let mut calls = 0;
    let callers: [(&str, &Channel, Option<&str>); 3] = [
        ("no key", &open_ch, None),
        ("a revoked key", &open_ch, Some(revoked.token.as_str())),
        ("no key, gateway with no token and not open", &closed_ch, None),
    ];
    for (who, ch, token) in callers {
        for rpc in &rpcs {
            let (msg, _) = build(&contracts, rpc, &mut Ids::new(&shapes, Naming::Unknown));
            let a = call(ch, token, rpc, msg).await;
            calls += 1;
            if a.code != Code::Unauthenticated {
                holes.add(&rpc.name, who, "UNAUTHENTICATED", a.to_string());
            }
        }
    }
    holes.assert_none("gRPC without a valid key", calls);
}
