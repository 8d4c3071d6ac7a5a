//! Who may publish and subscribe on which subject: the NATS permissions of every identity of
//! the mesh, derived from the declarations in [`crate::rpc`] plus, for each service, what it
//! calls and what it emits. `relayctl auth init` writes them into the identities' JWTs; the
//! nats-server enforces them, so a handler can trust what the subject says.
//!
//! A harness calls on `harness.<workspace>.<agentId>.<subject>` (e.g.
//! `harness.default.a1.event.append`): its JWT lets it publish only under its own prefix, so
//! the prefix *is* the proof of which agent calls, in which workspace. Services serve those
//! forms of the subjects a harness may call, next to the plain ones, which only services, the
//! gateway and operators may publish.

use crate::rpc::{ALL, Role, RpcInfo, service};

/// The queue group every micro service endpoint subscribes in (async-nats' default).
pub const QUEUE_GROUP: &str = "q";
/// The first token of the subjects a harness calls on.
pub const HARNESS_PREFIX: &str = "harness";
/// The identity of operators' tools (`relayctl`, the nats CLI) and tests: everything.
pub const ADMIN: &str = "admin";
/// The identity of the HTTP/gRPC gateway, acting for API keys.
pub const GATEWAY: &str = "gateway";

/// `harness.<workspace>.<agentId>.<subject>`.
pub fn harness_subject(workspace: &str, agent_id: &str, subject: &str) -> String {
    format!("{HARNESS_PREFIX}.{workspace}.{agent_id}.{subject}")
}

/// The form of `subject` a service subscribes to for every harness.
pub fn harness_wildcard(subject: &str) -> String {
    format!("{HARNESS_PREFIX}.*.*.{subject}")
}

/// (workspace, agentId) of a harness-form subject, if `actual` is one.
pub fn parse_harness_subject(actual: &str) -> Option<(&str, &str)> {
    let rest = actual.strip_prefix(HARNESS_PREFIX)?.strip_prefix('.')?;
    let (workspace, rest) = rest.split_once('.')?;
    let (agent, _) = rest.split_once('.')?;
    Some((workspace, agent))
}

/// Whether a harness may call `r` (on its harness form).
pub fn harness_may_call(r: &RpcInfo) -> bool {
    r.roles.contains(&Role::Harness)
}

/// A name usable as one subject token: workspace names, agent ids, identity names.
pub fn is_token(s: &str) -> bool {
    !s.is_empty() && s.len() <= 128 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The inbox prefix an identity's replies come to; nobody else may subscribe under it.
pub fn inbox_prefix(identity: &str) -> String {
    format!("_INBOX.{identity}")
}

/// What one identity may do on the bus.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Permissions {
    pub publish_allow: Vec<String>,
    pub publish_deny: Vec<String>,
    /// `subject` or `subject queue`.
    pub subscribe_allow: Vec<String>,
    /// May reply to the requests it receives (NATS `allow_responses`, one reply each).
    pub allow_responses: bool,
}

/// What a relay-mesh service does on the bus beyond serving its own subjects.
struct ServiceAccess {
    name: &'static str,
    /// Request subjects it calls.
    calls: &'static [&'static str],
    /// Subjects (wildcards allowed) it publishes events or per-agent requests on. Request
    /// subjects of other services under a wildcard stay denied.
    emits: &'static [&'static str],
    /// Event subjects it subscribes to.
    follows: &'static [&'static str],
}

const COMMITTED: &str = "event.committed.>";
/// The permission manager publishes each decision live on this subject.
pub const PERMISSION_RESOLVED: &str = "permission.resolved";
/// Service subjects the gateway calls for itself.
const GATEWAY_CALLS: &[&str] = &["key.verify"];

/// Whether some API key role may call `r` through the gateway.
pub fn person_may_call(r: &RpcInfo) -> bool {
    r.roles
        .iter()
        .any(|role| matches!(role, Role::Operator | Role::Viewer | Role::Admin))
}

const SERVICES: &[ServiceAccess] = &[
    ServiceAccess {
        name: service::SESSION_REGISTRY,
        calls: &[
            "event.append",
            "event.purgeSession",
            "delivery.handoff",
            "delivery.purge",
            // A message with deliverAt is held as a one-time schedule.
            "schedule.create",
            // session.compress notes the context window's tokens before.
            "session.getContextWindowState",
            // A harness reports only about its own session (relay_bus::agents).
            "agent.get",
            // The log is followed: the agents' reported status (status.rs), the messages'
            // progress (progress.rs).
            "event.since",
            // A rollback cancels the deliveries of the messages it supersedes (progress.rs).
            "delivery.cancel",
        ],
        emits: &[
            "session.>",
            crate::keys::KEY_REVOKED,
            "agent.*.turn",
            // A lost host's agents re-homed onto another host's spawner.
            "agent.spawnOn.*",
        ],
        // A status event wakes the follower of the agents' reported status, and a delivery's
        // receipt that of the messages' progress (progress.rs).
        follows: &["event.committed.status.>", "event.committed.delivery.>"],
    },
    ServiceAccess {
        name: service::EVENT_INGEST,
        // A key's or an agent's events may name only sessions and agents the registry shows it.
        calls: &["session.get", "agent.get"],
        emits: &["session.>", COMMITTED],
        follows: &[],
    },
    ServiceAccess {
        name: service::DELIVERY_RUNNER,
        calls: &["event.append", "event.since"],
        emits: &[
            "delivery.>",
            "agent.*.deliver",
            "agent.*.input",
            "agent.*.release",
            "agent.*.turn",
            "agent.*.cancel",
        ],
        follows: &[COMMITTED],
    },
    ServiceAccess {
        name: service::PERMISSION_MANAGER,
        calls: &["event.append", "event.since", "session.get", "agent.get"],
        emits: &["permission.>", "question.>", "agent.*.permission", "agent.*.question"],
        follows: &[COMMITTED],
    },
    ServiceAccess {
        name: service::COST_AGGREGATOR,
        calls: &["event.append", "event.since", "agent.pause", "session.usage"],
        emits: &[crate::cost::BUDGET_EXCEEDED],
        follows: &[COMMITTED],
    },
    ServiceAccess {
        name: service::AGENT_SPAWNER,
        // A lead's spawn is checked against its declared capabilities and its live workers.
        // Its host heartbeats and each spawn is placed by the registry, then handed to the
        // chosen host's spawner.
        calls: &[
            "session.sendMessage",
            "agent.get",
            "agent.list",
            "host.heartbeat",
            "host.place",
        ],
        emits: &["agent.*.release", "agent.spawnOn.*"],
        follows: &["agent.spawnOn.*"],
    },
    ServiceAccess {
        name: service::AUTOMATION,
        // Schedules send and spawn as their creators; webhooks follow the log; an A2A task push
        // checks its agent and folds its task from the log.
        calls: &[
            "event.append",
            "event.since",
            "event.query",
            "agent.get",
            "session.sendMessage",
            "message.send",
            "session.create",
            "agent.spawn",
            // A schedule names a session its creator can see; it runs while its key stands.
            "session.get",
            "key.get",
        ],
        emits: &[],
        follows: &[COMMITTED],
    },
    ServiceAccess {
        name: service::COORDINATION,
        // Agents, channels and relay messages are the registry's: an invoker's and a target's
        // record, a channel's members, an exposing agent's AG-UI tools, and the messages it
        // sends (a proposal's question, an invocation's result). Invocations are decided by
        // the permission policies, then sent to the exposing harness.
        calls: &[
            "event.append",
            "agent.get",
            "channel.members",
            "session.agent.setTools",
            "message.sendFor",
            "message.actionResult",
            "permission.request",
            "permission.get",
        ],
        emits: &["agent.*.invoke"],
        // A person's decision wakes invocations waiting for it.
        follows: &[PERMISSION_RESOLVED],
    },
];

/// The identities `relayctl auth init` makes credentials for, besides harnesses (minted per
/// agent by the spawner).
pub fn identities() -> Vec<&'static str> {
    let mut out: Vec<&str> = SERVICES.iter().map(|s| s.name).collect();
    out.extend([GATEWAY, ADMIN]);
    out
}

/// The permissions of a named identity (a service, the gateway or admin); `None` if unknown.
pub fn permissions(identity: &str) -> Option<Permissions> {
    if identity == ADMIN {
        // It may publish anywhere, replies included: `allow_responses` would only make the
        // server track every request it receives.
        return Some(Permissions {
            publish_allow: vec![">".into()],
            publish_deny: vec![],
            subscribe_allow: vec![">".into()],
            allow_responses: false,
        });
    }
    let mut p = Permissions {
        allow_responses: true,
        ..Permissions::default()
    };
    p.subscribe_allow.push(format!("{}.>", inbox_prefix(identity)));
    if identity == GATEWAY {
        // It acts for API keys, whose roles it checks: everything a person may call, and it
        // verifies the keys.
        p.publish_allow = ALL
            .iter()
            .filter(|r| person_may_call(r))
            .map(|r| r.subject.to_string())
            .chain(GATEWAY_CALLS.iter().map(std::string::ToString::to_string))
            .collect();
        p.subscribe_allow
            .extend([COMMITTED.to_string(), crate::keys::KEY_REVOKED.to_string()]);
        return Some(p);
    }
    let access = SERVICES.iter().find(|s| s.name == identity)?;
    p.publish_allow.extend(
        access
            .calls
            .iter()
            .chain(access.emits)
            .map(std::string::ToString::to_string),
    );
    // Request subjects under an emitted wildcard stay closed: a service calls only what it
    // lists (never itself, never another's admin subjects).
    for r in ALL {
        let covered = access.emits.iter().any(|w| subject_matches(w, r.subject));
        if covered && !access.calls.contains(&r.subject) {
            p.publish_deny.push(r.subject.to_string());
        }
    }
    // Micro service discovery and stats.
    p.subscribe_allow.push("$SRV.>".into());
    for r in ALL.iter().filter(|r| r.service == identity) {
        p.subscribe_allow.push(format!("{} {QUEUE_GROUP}", r.subject));
        if harness_may_call(r) {
            p.subscribe_allow
                .push(format!("{} {QUEUE_GROUP}", harness_wildcard(r.subject)));
        }
    }
    p.subscribe_allow
        .extend(access.follows.iter().map(std::string::ToString::to_string));
    Some(p)
}

/// The permissions of every harness, as a template the NATS server fills in from the user's
/// JWT: `{{name()}}` is its agent id, `{{tag(workspace)}}` its workspace.
pub fn harness_template() -> Permissions {
    Permissions {
        publish_allow: vec![format!("{HARNESS_PREFIX}.{{{{tag(workspace)}}}}.{{{{name()}}}}.>")],
        publish_deny: vec![],
        subscribe_allow: vec![
            "agent.{{name()}}.>".into(),
            format!("{}.{{{{name()}}}}.>", inbox_prefix("agent")),
        ],
        allow_responses: true,
    }
}

/// The inbox prefix of the harness of `agent_id` (inside its template's subscribe rights).
pub fn harness_inbox_prefix(agent_id: &str) -> String {
    format!("{}.{agent_id}", inbox_prefix("agent"))
}

/// NATS subject matching: `*` one token, `>` the rest.
pub fn subject_matches(pattern: &str, subject: &str) -> bool {
    let mut p = pattern.split('.');
    let mut s = subject.split('.');
    loop {
        match (p.next(), s.next()) {
            (Some(">"), Some(_)) => return true,
            (Some("*"), Some(_)) => {}
            (Some(a), Some(b)) if a == b => {}
            (None, None) => return true,
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_harness_subject_names_its_workspace_and_agent() {
        let s = harness_subject("acme", "a-1", "event.append");
        assert_eq!(s, "harness.acme.a-1.event.append");
        assert_eq!(parse_harness_subject(&s), Some(("acme", "a-1")));
        assert!(subject_matches(&harness_wildcard("event.append"), &s));
        assert_eq!(parse_harness_subject("event.append"), None);
    }

    #[test]
    fn only_operators_and_the_gateway_may_decide_permissions() {
        for name in identities() {
            let p = permissions(name).unwrap();
            let may = p.publish_allow.iter().any(|a| subject_matches(a, "permission.approve"))
                && !p.publish_deny.iter().any(|d| d == "permission.approve");
            assert_eq!(may, name == ADMIN || name == GATEWAY, "{name}");
        }
        let harness = harness_template();
        assert!(harness.publish_allow.iter().all(|a| a.starts_with("harness.")));
    }

    #[test]
    fn a_service_emitting_under_a_wildcard_cannot_call_other_services_there() {
        let ingest = permissions(service::EVENT_INGEST).unwrap();
        assert!(ingest.publish_deny.iter().any(|d| d == "session.purge"));
        assert!(ingest.publish_deny.iter().any(|d| d == "session.getContextWindowState"));
        let registry = permissions(service::SESSION_REGISTRY).unwrap();
        assert!(registry.publish_deny.iter().any(|d| d == "session.purge"));
        assert!(
            registry
                .subscribe_allow
                .contains(&"harness.*.*.session.agent.attach q".to_string())
        );
    }

    #[test]
    fn every_called_subject_is_declared() {
        for s in SERVICES {
            for c in s.calls {
                assert!(crate::rpc::find(c).is_some(), "{} calls undeclared {c}", s.name);
            }
        }
    }
}
