//! Who is calling, and in which workspace: the request context every call carries in NATS
//! headers next to its trace context. The bus runtime reads it once and hands it to every
//! handler. With auth on only the mesh's own identities may publish on plain subjects, so their
//! headers are trusted; a harness is known by the subject it calls on ([`RequestContext::agent`]).

use std::fmt;

/// Who may call a subject: the source of every identity's NATS permissions ([`crate::access`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, strum::IntoStaticStr, strum::EnumIter)]
#[strum(serialize_all = "lowercase")]
pub enum Role {
    /// A person (or their tool) with an operator key: steers sessions and decides permissions.
    Operator,
    /// A person who may only look.
    Viewer,
    /// A relay-mesh service calling another.
    Service,
    /// An agent harness, for its one agent.
    Harness,
    /// A person with an admin key: keys, workspaces, policies, budgets (and all an operator may).
    Admin,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Header carrying the caller: `admin:<keyId>`, `operator:<keyId>`, `viewer:<keyId>`, `service:<name>`,
/// `agent:<agentId>` (a harness; `agent` alone before it attached) or `anonymous`.
pub const CALLER_HEADER: &str = "Relay-Caller";
/// Header carrying the workspace the call acts in.
pub const WORKSPACE_HEADER: &str = "Relay-Workspace";
/// Header carrying where a person's call came from: the client address the gateway saw.
pub const ORIGIN_HEADER: &str = "Relay-Origin";
/// The workspace of a call that names none.
pub const DEFAULT_WORKSPACE: &str = "default";

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Caller {
    /// A person with an admin key, through the gateway.
    Admin(String),
    /// A person through the gateway or a tool, by API key id.
    Operator(String),
    Viewer(String),
    /// A relay-mesh service, by micro service name.
    Service(String),
    /// A harness, for its agent (`None` until it attached).
    Agent(Option<String>),
    /// Nothing said who: a raw `nats req`, a test.
    #[default]
    Anonymous,
}

impl Caller {
    pub fn role(&self) -> Option<Role> {
        match self {
            Caller::Admin(_) => Some(Role::Admin),
            Caller::Operator(_) => Some(Role::Operator),
            Caller::Viewer(_) => Some(Role::Viewer),
            Caller::Service(_) => Some(Role::Service),
            Caller::Agent(_) => Some(Role::Harness),
            Caller::Anonymous => None,
        }
    }

    /// Reads the header value; anything unrecognised is `Anonymous`.
    pub fn parse(value: &str) -> Caller {
        let (kind, id) = value.split_once(':').unwrap_or((value, ""));
        let id = id.to_string();
        match kind {
            "admin" if !id.is_empty() => Caller::Admin(id),
            "operator" if !id.is_empty() => Caller::Operator(id),
            "viewer" if !id.is_empty() => Caller::Viewer(id),
            "service" if !id.is_empty() => Caller::Service(id),
            "agent" => Caller::Agent((!id.is_empty()).then_some(id)),
            _ => Caller::Anonymous,
        }
    }
}

impl fmt::Display for Caller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Caller::Admin(id) => write!(f, "admin:{id}"),
            Caller::Operator(id) => write!(f, "operator:{id}"),
            Caller::Viewer(id) => write!(f, "viewer:{id}"),
            Caller::Service(name) => write!(f, "service:{name}"),
            Caller::Agent(Some(id)) => write!(f, "agent:{id}"),
            Caller::Agent(None) => f.write_str("agent"),
            Caller::Anonymous => f.write_str("anonymous"),
        }
    }
}

/// What a handler is told about the call it serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestContext {
    pub caller: Caller,
    pub workspace: String,
    /// The agent whose harness made this call, proven by the subject it came on
    /// (`harness.<workspace>.<agentId>.…`, which only that harness may publish on); `None` for
    /// every other caller, whatever its headers claim.
    pub agent: Option<String>,
    /// Where the call came from, for the audit trail: the client address of a request through
    /// the gateway; `None` for calls over NATS (their NATS identity says who).
    pub origin: Option<String>,
}

impl Default for RequestContext {
    fn default() -> Self {
        RequestContext::new(Caller::Anonymous, DEFAULT_WORKSPACE)
    }
}

impl RequestContext {
    /// The one workspace this caller may see: a person's (by key) or an agent's; `None` for
    /// the mesh's own services and operators' tools, which act across workspaces.
    pub fn scope(&self) -> Option<&str> {
        match self.caller {
            Caller::Admin(_) | Caller::Operator(_) | Caller::Viewer(_) | Caller::Agent(_) => Some(&self.workspace),
            Caller::Service(_) | Caller::Anonymous => None,
        }
    }

    /// The context of a call a harness made on its own subject.
    pub fn harness(workspace: &str, agent_id: &str) -> Self {
        RequestContext {
            caller: Caller::Agent(Some(agent_id.to_string())),
            workspace: workspace.to_string(),
            agent: Some(agent_id.to_string()),
            origin: None,
        }
    }

    pub fn new(caller: Caller, workspace: impl Into<String>) -> Self {
        RequestContext {
            caller,
            workspace: workspace.into(),
            agent: None,
            origin: None,
        }
    }

    /// From the header values (any may be missing).
    pub fn from_headers(caller: Option<&str>, workspace: Option<&str>, origin: Option<&str>) -> Self {
        RequestContext {
            caller: caller.map(Caller::parse).unwrap_or_default(),
            workspace: workspace
                .filter(|w| !w.is_empty())
                .unwrap_or(DEFAULT_WORKSPACE)
                .to_string(),
            agent: None,
            origin: origin.filter(|o| !o.is_empty()).map(String::from),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_survives_its_header_form() {
        for c in [
            Caller::Admin("k0".into()),
            Caller::Operator("k1".into()),
            Caller::Viewer("k2".into()),
            Caller::Service("gateway".into()),
            Caller::Agent(Some("a1".into())),
            Caller::Agent(None),
            Caller::Anonymous,
        ] {
            assert_eq!(Caller::parse(&c.to_string()), c);
        }
        assert_eq!(Caller::parse("root"), Caller::Anonymous);
        assert_eq!(Caller::parse("operator:"), Caller::Anonymous);
    }
}
