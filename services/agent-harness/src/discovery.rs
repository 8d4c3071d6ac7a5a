//! What a harness-run agent declares to clients (seed 004's AG-UI capability document, which
//! the gateway also turns into its A2A card's skills): derived from what its path really does,
//! never more, then the spawner entry's own additions (`spawner.agents.<cli>.capabilities`)
//! merged over it.
//!
//! - tools, usage and the terminal: what the path's events say it observes (seed 000 emits);
//! - approvals: every known CLI's permission prompts reach the permission manager, on either
//!   path; a generic CLI's only when its patterns catch them, so it claims none;
//! - interventions: a running turn can be interrupted (`session.turn.cancel`);
//! - state: a known CLI keeps its conversation, and a restarted harness resumes it;
//! - multi-agent: the relay tools (or the output convention) let it message other agents;
//!   `delegation` only with the entry's `delegate`;
//! - execution: the coding CLIs run commands, sandboxed when the harness runs them in bwrap.

use crate::HarnessSettings;
use relay_contracts::capabilities::{AgUiCapabilities, AgentSessionCapabilities, AgentSessionEventType};
use serde_json::{Map, Value, json};

/// The relay tools a CLI is given as an MCP server (`relay_tools`): the tools `relay-mcp` lists
/// (its test checks the two agree; they live in its binary, out of this library's reach).
pub const RELAY_TOOLS: &[&str] = &[
    "relay_send",
    "relay_reply",
    "relay_inbox",
    "relay_who",
    "relay_channels",
    "relay_actions",
    "relay_invoke",
    "relay_answer",
    "relay_vote",
    "relay_map_reduce",
];

/// The vendor and product of a CLI the harness knows (`--cli`, its patterns' name).
fn product(cli: &str) -> Option<(&'static str, &'static str)> {
    match cli {
        "claude" => Some(("Anthropic", "Claude Code")),
        "codex" => Some(("OpenAI", "Codex CLI")),
        "gemini" => Some(("Google", "Gemini CLI")),
        _ => None,
    }
}

/// The AG-UI capability document of the agent `h` runs, whose seed 000 capabilities are `caps`.
/// `additions` (a JSON object of AG-UI categories) is merged over the derived one, key by key.
pub fn declared(h: &HarnessSettings, caps: &AgentSessionCapabilities) -> Result<AgUiCapabilities, String> {
    let known = product(&h.cli);
    let adapter = h.adapter.clone().unwrap_or_else(|| h.cli.clone());
    let emits = |t: AgentSessionEventType| caps.events.emits.contains(&t);
    let path = if h.protocol == "pty" {
        "its terminal (PTY)".to_string()
    } else {
        format!("its structured protocol ({})", h.protocol)
    };
    let description = match known {
        Some((_, name)) => format!("{name} run by the relay-mesh harness on {path}"),
        None => format!("`{}` run by the relay-mesh harness on {path}", h.command.join(" ")),
    };
    let relay_tools: Vec<&str> = if h.relay_tools && known.is_some() {
        RELAY_TOOLS.to_vec()
    } else {
        Vec::new()
    };
    let doc = json!({
        "identity": {
            "name": h.handle.as_ref().map_or(adapter.clone(), |handle| format!("@{handle}")),
            "type": adapter,
            "description": description,
            "provider": known.map(|(vendor, _)| vendor),
            "metadata": {"cli": h.cli, "protocol": h.protocol},
        },
        // The gateway's streams: SSE with the event seq as its id, webhooks.
        "transport": {"streaming": true, "resumable": true, "pushNotifications": true},
        "tools": {"supported": emits(AgentSessionEventType::ToolCalled), "clientProvided": false},
        "output": {"supportedMimeTypes": ["text/plain"]},
        "state": {"persistentState": known.is_some()},
        "multiAgent": {
            "supported": caps.messaging.send == Some(true),
            "delegation": h.delegate,
        },
        "execution": {
            "codeExecution": known.is_some(),
            "sandboxed": known.is_some() && h.sandbox == "bwrap",
        },
        "humanInTheLoop": {
            "supported": true,
            "approvals": known.is_some(),
            "interventions": true,
        },
        "custom": {
            "relayMesh": {
                "usage": emits(AgentSessionEventType::UsageUpdated),
                "terminal": emits(AgentSessionEventType::TerminalScreen),
                "questions": known.is_some(),
                "resume": known.is_some(),
                "relayTools": relay_tools,
            }
        },
    });
    let mut doc = strip_nulls(doc);
    if let Some(additions) = &h.capabilities {
        let additions: Value = serde_json::from_str(additions).map_err(|e| format!("capabilities {additions}: {e}"))?;
        if !additions.is_object() {
            return Err(format!(
                "capabilities must be a JSON object of AG-UI categories, got {additions}"
            ));
        }
        merge(&mut doc, additions);
    }
    serde_json::from_value(doc).map_err(|e| format!("capabilities: {e}"))
}

/// `over` merged into `base`: objects key by key, anything else replaced.
fn merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(base), Value::Object(over)) => {
            for (k, v) in over {
                merge(base.entry(k).or_insert(Value::Null), v);
            }
        }
        (base, over) => *base = over,
    }
}

fn strip_nulls(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, strip_nulls(v)))
                .collect::<Map<_, _>>(),
        ),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(cli: &str, protocol: &str) -> HarnessSettings {
        HarnessSettings {
            cli: cli.into(),
            adapter: Some(format!("{cli}-x")),
            protocol: protocol.into(),
            command: vec![cli.into()],
            ..HarnessSettings::default()
        }
    }

    #[test]
    fn a_structured_claude_declares_approvals_usage_resume_and_the_relay_tools_but_no_terminal() {
        let h = settings("claude", "claude-stream-json");
        let doc = serde_json::to_value(declared(&h, &crate::structured::capabilities()).unwrap()).unwrap();
        assert_eq!(doc["identity"]["provider"], "Anthropic", "{doc}");
        assert_eq!(doc["humanInTheLoop"]["approvals"], true, "{doc}");
        assert_eq!(doc["tools"]["supported"], true, "{doc}");
        assert_eq!(doc["state"]["persistentState"], true, "{doc}");
        assert_eq!(doc["multiAgent"]["delegation"], false, "{doc}");
        assert_eq!(doc["execution"]["sandboxed"], false, "{doc}");
        let relay = &doc["custom"]["relayMesh"];
        assert_eq!(relay["usage"], true, "{doc}");
        assert_eq!(relay["terminal"], false, "{doc}");
        assert!(
            relay["relayTools"].as_array().unwrap().contains(&json!("relay_send")),
            "{doc}"
        );
    }

    #[test]
    fn a_generic_pty_cli_claims_no_approvals_no_resume_and_no_relay_tools() {
        let h = settings("generic", "pty");
        let doc = serde_json::to_value(declared(&h, &crate::driver::capabilities(false)).unwrap()).unwrap();
        assert_eq!(doc["humanInTheLoop"]["approvals"], false, "{doc}");
        assert_eq!(doc["state"]["persistentState"], false, "{doc}");
        assert_eq!(doc["execution"]["codeExecution"], false, "{doc}");
        assert!(doc["identity"].get("provider").is_none(), "{doc}");
        assert_eq!(doc["custom"]["relayMesh"]["usage"], false, "{doc}");
        assert_eq!(doc["custom"]["relayMesh"]["terminal"], true, "{doc}");
        assert_eq!(doc["custom"]["relayMesh"]["relayTools"], json!([]), "{doc}");
    }

    #[test]
    fn delegation_and_the_sandbox_follow_the_settings_and_the_spawner_entry_adds_its_own() {
        let mut h = settings("codex", "codex-app-server");
        h.delegate = true;
        h.sandbox = "bwrap".into();
        h.capabilities = Some(r#"{"identity":{"description":"reviews PRs"},"reasoning":{"supported":true}}"#.into());
        let doc = serde_json::to_value(declared(&h, &crate::structured::capabilities()).unwrap()).unwrap();
        assert_eq!(doc["multiAgent"]["delegation"], true, "{doc}");
        assert_eq!(doc["execution"]["sandboxed"], true, "{doc}");
        assert_eq!(doc["identity"]["description"], "reviews PRs", "{doc}");
        assert_eq!(
            doc["identity"]["provider"], "OpenAI",
            "the rest of the category stays: {doc}"
        );
        assert_eq!(doc["reasoning"]["supported"], true, "{doc}");
    }

    #[test]
    fn additions_that_are_not_an_object_of_categories_are_refused_by_name() {
        let mut h = settings("claude", "pty");
        h.capabilities = Some("[1]".into());
        let err = declared(&h, &crate::driver::capabilities(true)).unwrap_err();
        assert!(err.contains("capabilities"), "{err}");
        h.capabilities = Some(r#"{"tools": 3}"#.into());
        assert!(declared(&h, &crate::driver::capabilities(true)).is_err());
    }
}
