//! The bus attacked by a compromised agent: every subject a harness may call (a declaration in
//! `relay_contracts::rpc::ALL` whose roles hold `Harness`, `access::harness_may_call`; never
//! hand-listed, so a subject is attacked the day it is declared) is called on the harness
//! subject of a real agent, `harness.<workspace>.<agentId>.<subject>`, with that agent's own
//! NATS credentials, against a real mesh:
//!
//! - as an agent of workspace A, naming workspace B's real objects in every field of a request
//!   generated from the declaration's request schema (all of them, then one at a time with the
//!   agent's own session and id in the others; with every field that names an object, then the
//!   required ones only) and, separately, fresh unknown ids of the same shape: the same answer
//!   (success, or the same error code), never an `internal`/`unavailable`/`timeout`, nothing of
//!   B's in any reply; and it reaches neither B's harness prefix nor a subject its role does not
//!   declare;
//! - as a second agent of workspace B, naming B's first agent (or its session) where it acts —
//!   reports events, asks permission, stops, flushes, releases — and otherwise its own ids:
//!   refused, unless the declaration says naming another agent is the point (a small table).
//!
//! Every finding is collected, and each test fails once at the end with the whole list. The
//! victim, the ids and the body generation are tests/attack/mod.rs, shared with the REST and
//! gRPC attacks.

mod attack;
mod common;

use attack::*;
use relay_contracts::access;
use relay_contracts::rpc::{ALL, Role, RpcInfo};
use serde_json::{Value, json};
use std::fmt;
use std::time::Duration;

/// The subjects where a harness names another agent (or its session) of its workspace by
/// design, by the declaration's own words, with the fields that do. Any other subject that acts
/// must refuse another agent's id or session.
const NAMES_OTHERS: &[(&str, &str)] = &[
    (
        "action.invoke",
        "runs another agent's action (`agent` names the exposing agent; `availableTo` and the permission policies decide)",
    ),
    ("consensus.propose", "puts a question to other agents (`to`)"),
    ("message.send", "sends a relay message to another agent (`to`)"),
    (
        "session.agent.capabilities",
        "reads what an agent declared, as agent.get (a look) shows it to every agent of the workspace",
    ),
];

// ---- calls -----------------------------------------------------------------------------------

#[derive(Clone)]
struct Answer {
    /// The error code; `None` for a success.
    code: Option<String>,
    text: String,
}

impl Answer {
    fn success(&self) -> bool {
        self.code.is_none()
    }
    fn same_as(&self, other: &Answer) -> bool {
        self.code == other.code
    }
    fn unclear(&self) -> bool {
        matches!(
            self.code.as_deref(),
            Some("internal" | "unavailable" | "timeout" | "no reply" | "undecodable")
        )
    }
}

impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let message = serde_json::from_str::<Value>(&self.text)
            .ok()
            .and_then(|v| v["error"]["message"].as_str().map(str::to_string))
            .unwrap_or_else(|| self.text.clone());
        let message: String = message.chars().take(110).collect();
        match &self.code {
            None => write!(f, "success {message}"),
            Some(c) => write!(f, "{c} ({message})"),
        }
    }
}

/// Calls `subject` on the harness subject of `h`'s agent.
async fn ask(h: &Harness, subject: &str, body: &Value) -> Answer {
    ask_on(h, access::harness_subject(&h.workspace, &h.id, subject), body, 45).await
}

async fn ask_on(h: &Harness, on: String, body: &Value, secs: u64) -> Answer {
    let sent = h.client.request(on, serde_json::to_vec(body).unwrap().into());
    match tokio::time::timeout(Duration::from_secs(secs), sent).await {
        Err(_) => Answer {
            code: Some("no reply".into()),
            text: format!("no reply within {secs} s"),
        },
        Ok(Err(e)) => Answer {
            code: Some(format!("{:?}", e.kind())),
            text: e.to_string(),
        },
        Ok(Ok(reply)) => {
            let text = String::from_utf8_lossy(&reply.payload).to_string();
            match serde_json::from_str::<Value>(&text) {
                Ok(v) => Answer {
                    code: v["error"]["code"].as_str().map(str::to_string),
                    text,
                },
                Err(_) => Answer {
                    code: Some("undecodable".into()),
                    text,
                },
            }
        }
    }
}

fn harness_subjects() -> Vec<&'static RpcInfo> {
    ALL.iter().filter(|r| access::harness_may_call(r)).collect()
}

/// An agent of `workspace` as its harness makes it: a session of its own, attached with a
/// handle. Its objects by kind, for the slots that do not name the victim's.
async fn agent(w: &World, id: &str, workspace: &str) -> (Harness, Victim) {
    let h = Harness::connect(&w.m, id, workspace).await;
    let created = h.call("session.create", json!({"title": format!("{id}'s own")})).await;
    let session = created["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("{id}'s session: {created}"))
        .to_string();
    let attached = h
        .call(
            "session.agent.attach",
            json!({"sessionId": session, "agent": {"kind": "adapter", "adapterName": "claude"}, "handle": id,
                   "capabilities": {"messaging": {"receive": true, "send": true}, "delivery": {"modes": ["immediate"]},
                                    "events": {"emits": ["status.changed"]}, "lifecycle": {"release": true},
                                    "actions": {"expose": true, "invoke": true}}}),
        )
        .await;
    assert_eq!(attached["agentId"], id, "{id} attached: {attached}");
    let channel = format!("{id}-channel");
    let made = h.call("channel.create", json!({"name": channel})).await;
    assert!(made.get("error").is_none(), "{id}'s channel: {made}");
    let mut own = Victim::default();
    own.set("sessions", session);
    own.set("agents", id);
    own.set("handles", id);
    own.set("@handles", format!("@{id}"));
    own.set("workspaces", workspace);
    own.set("channels", channel);
    (h, own)
}

// ---- the tests -------------------------------------------------------------------------------

#[tokio::test]
async fn every_harness_subject_answers_another_workspaces_ids_exactly_as_unknown_ids_and_never_shows_its_objects() {
    let w = world().await;
    let victim = victim(&w).await;
    let keys = attackers(&w.root).await; // workspace A
    let (a, own) = agent(&w, "attacker-agent", ATTACKER).await;
    // Its deliveries held: a turn its sends open stays active for the whole probe, rather than
    // ending mid-probe when the runner gives up on a harness that takes no deliveries (then an
    // unknown id and B's, asked a moment apart, would meet different turns).
    let admin = &keys.iter().find(|(role, _)| *role == "admin").expect("A's admin").1;
    let (status, held) = admin.post("/api/v1/agents/attacker-agent/pause", json!({})).await;
    ok(status, &held, "attacker-agent paused");
    let contracts = contracts();
    let subjects = harness_subjects();
    assert!(subjects.len() > 30, "only {} harness subjects", subjects.len());
    let secrets = victim.secrets();
    let mut holes = Holes::default();
    let mut calls = 0;
    let who = "an agent of A on its harness subject";

    for r in &subjects {
        let schema = &contracts.requests[r.subject];
        let body = |naming: Naming, optional: bool| {
            let mut ids = Ids::new(&victim, naming).with_optional(optional).with_own(&own);
            let body = generate(&contracts.doc, schema, None, &mut ids, 0);
            (body, ids)
        };
        let mut answers: Vec<(String, Answer, Vec<String>)> = Vec::new();
        let mut full_slots = None;
        for optional in [true, false] {
            let (unknown_body, ids) = body(Naming::Unknown, optional);
            let slots = ids.slots.clone();
            for kinds in ids.missing.iter().collect::<std::collections::BTreeSet<_>>() {
                holes.add(
                    r.subject,
                    who,
                    format!("a victim object of kind {kinds} (add one to `victim`)"),
                    "none: this subject is not attacked",
                );
            }
            if full_slots.as_ref() == Some(&slots) {
                break;
            }
            full_slots = Some(slots.clone());
            let how = if optional { "" } else { ", required fields only" };
            let mut pairs = vec![(
                format!("B's {}{how}", slots.join(", ")),
                (Naming::Unknown, unknown_body, ids),
                Naming::Victim,
            )];
            if slots.is_empty() {
                pairs.clear();
                let (b, ids) = body(Naming::Unknown, optional);
                let got = ask(&a, r.subject, &b).await;
                calls += 1;
                answers.push((format!("no object named{how}"), got, ids.sent));
            }
            if slots.len() > 1 {
                for (i, slot) in slots.iter().enumerate() {
                    let (b, ids) = body(Naming::UnknownOnly(i), optional);
                    pairs.push((
                        format!("B's {slot} only, its own elsewhere{how}"),
                        (Naming::UnknownOnly(i), b, ids),
                        Naming::Only(i),
                    ));
                }
            }
            for (label, (unknown_naming, unknown_body, unknown_ids), naming) in pairs {
                let unknown = ask(&a, r.subject, &unknown_body).await;
                let (attack_body, ids) = body(naming, optional);
                let got = ask(&a, r.subject, &attack_body).await;
                calls += 2;
                if verbose() {
                    eprintln!("{} | {label} | unknown {unknown_body} -> {unknown}", r.subject);
                    eprintln!("{} | {label} | B's {attack_body} -> {got}", r.subject);
                }
                let named: Vec<String> = match naming {
                    Naming::Only(i) => vec![slots[i].clone()],
                    _ => slots.clone(),
                };
                let chosen = chosen_subject_id(r.subject, &named) && got.code.as_deref() == Some("not_found");
                // A success changes what comes after it (a turn started, an id taken): an
                // unknown request again (fresh ids), after B's, says whether the difference is
                // B's id or the state.
                let state = !got.same_as(&unknown)
                    && unknown.success()
                    && ask(&a, r.subject, &body(unknown_naming, optional).0)
                        .await
                        .same_as(&got);
                if !got.same_as(&unknown) && !chosen && !state {
                    holes.add(
                        format!("{} [{label}]", r.subject),
                        who,
                        format!("as unknown ids: {unknown}"),
                        got.to_string(),
                    );
                }
                answers.push((format!("unknown ids for {label}"), unknown, unknown_ids.sent));
                answers.push((label, got, ids.sent));
            }
        }
        for (label, got, sent) in &answers {
            if got.unclear() {
                holes.add(r.subject, who, format!("a clear answer ({label})"), got.to_string());
            }
            let l = leaked(&got.text, &secrets, sent);
            if !l.is_empty() {
                holes.add(
                    r.subject,
                    who,
                    format!("nothing of B's ({label})"),
                    format!("{got} showing {l:?}"),
                );
            }
        }
    }

    // Its credentials reach neither B's harness prefix (the server refuses the publish: no
    // reply) nor a subject its role does not declare (nobody serves its harness form).
    let on_b = format!("{}.{VICTIM}.{}.agent.list", access::HARNESS_PREFIX, a.id);
    let got = ask_on(&a, on_b.clone(), &json!({}), 3).await;
    calls += 1;
    if got.code.as_deref() != Some("no reply") && !got.text.contains("ermission") {
        holes.add(on_b, who, "no reply: the publish is not allowed", got.to_string());
    }
    for r in ALL.iter().filter(|r| !access::harness_may_call(r)) {
        let got = ask(&a, r.subject, &json!({})).await;
        calls += 1;
        if got.success() || !(got.code.as_deref() == Some("NoResponders") || got.code.as_deref() == Some("no reply")) {
            holes.add(
                r.subject,
                who,
                format!("no responders: only {:?} may call it", r.roles),
                got.to_string(),
            );
        }
    }
    holes.assert_none("the harness subjects as an agent of another workspace", calls);
}

#[tokio::test]
async fn an_agent_naming_another_agent_of_its_workspace_or_its_session_is_refused_where_it_acts() {
    let w = world().await;
    let root = &w.root;
    let (status, body) = root.post("/api/v1/workspaces", json!({"name": VICTIM})).await;
    ok(status, &body, "workspace");
    // B's first agent (the one named), and for each request a fresh second agent of B (the one
    // calling), each in its own session, so what one call does to the caller (a release, a turn
    // started) does not decide the next.
    let (_first, named) = agent(&w, "zebra-b-first", VICTIM).await;
    let contracts = contracts();
    let mut holes = Holes::default();
    let mut notes = Vec::new();
    let mut calls = 0;
    let who = "another agent of B on its harness subject";
    const AGENTS: &[&str] = &["agents", "handles", "@handles"];
    const SESSIONS: &[&str] = &["sessions"];
    // Acts rather than looks: no viewer may call it.
    let acting: Vec<&RpcInfo> = harness_subjects()
        .into_iter()
        .filter(|r| !r.roles.contains(&Role::Viewer))
        .collect();
    for (n, r) in acting.into_iter().enumerate() {
        let schema = &contracts.requests[r.subject];
        for (what, kinds) in [("the first agent", AGENTS), ("the first agent's session", SESSIONS)] {
            let (caller, own) = agent(&w, &format!("b-caller-{n}-{}", &kinds[0][..1]), VICTIM).await;
            let body = |naming: Naming, optional: bool| {
                let mut ids = Ids::new(&named, naming).with_own(&own).with_optional(optional);
                let body = generate(&contracts.doc, schema, None, &mut ids, 0);
                (body, ids)
            };
            // Every slot its own: the control. With every field naming an object, else with the
            // required ones only, whichever the agent may do with its own ids.
            let mut tried = None;
            for optional in [true, false] {
                let (mine, ids) = body(Naming::OnlyKind(&[]), optional);
                let slots: Vec<String> = ids.slots.clone();
                let (theirs, ids) = body(Naming::OnlyKind(kinds), optional);
                if ids.sent.is_empty() {
                    continue; // nothing of that kind in this request
                }
                let control = ask(&caller, r.subject, &mine).await;
                calls += 1;
                let succeeded = control.success();
                tried = Some((mine, slots, theirs, ids, control));
                if succeeded {
                    break;
                }
            }
            let Some((mine, slots, theirs, ids, control)) = tried else {
                continue;
            };
            let got = ask(&caller, r.subject, &theirs).await;
            calls += 1;
            if verbose() {
                eprintln!("{} | own {mine} -> {control}", r.subject);
                eprintln!("{} | {what} {theirs} -> {got}", r.subject);
            }
            if let Some((_, why)) = NAMES_OTHERS.iter().find(|(s, _)| *s == r.subject) {
                notes.push(format!("{}: naming {what} is the point ({why}): {got}", r.subject));
                continue;
            }
            if !control.success() {
                notes.push(format!(
                    "{} (slots {slots:?}): its own ids already refused ({control}); naming {what}: {got}",
                    r.subject
                ));
            }
            if got.success() {
                holes.add(
                    format!("{} naming {what} ({})", r.subject, ids.slots.join(", ")),
                    who,
                    "refused: an agent acts only as itself",
                    format!("{got} (its own ids: {control})"),
                );
            }
        }
    }
    eprintln!("not attacked or accepted by design:\n  {}", notes.join("\n  "));
    holes.assert_none("the harness subjects as another agent of the same workspace", calls);
}
