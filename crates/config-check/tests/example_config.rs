//! config/relay.example.toml is the reference of every setting: each key of every service's
//! `Settings` (serialized from its `Default`) is in it, set (or commented out, for one without
//! a default value) to its default and described by a comment; and it names no key that no
//! service reads. A setting added to a struct and not to the file, or a key the file keeps for a
//! setting that is gone, fails here.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

const EXAMPLE: &str = include_str!("../../../config/relay.example.toml");

/// Tables whose entries are the user's data (a rule, a budget, an agent kind, a model prefix, a
/// label), not settings: the table is documented, what it holds is not compared.
const DATA_TABLES: &[&str] = &[
    "registry.model_adapters",
    "permissions.policies",
    "costs.budgets",
    "spawner.agents",
    "spawner.commands",
    "spawner.labels",
    "harness.patterns",
];

struct Service {
    name: &'static str,
    defaults: Value,
    example: Value,
}

fn service<T: Serialize + DeserializeOwned + Default>(name: &'static str) -> Service {
    let example: T = relay_bus::settings::load_example()
        .unwrap_or_else(|e| panic!("{name}: config/relay.example.toml does not load: {e}"));
    Service {
        name,
        defaults: serde_json::to_value(T::default()).unwrap(),
        example: serde_json::to_value(example).unwrap(),
    }
}

/// Every binary that reads the configuration file (relayctl reads only `nats` and `database`,
/// which every service has).
fn services() -> Vec<Service> {
    vec![
        service::<session_registry::Settings>("session-registry"),
        service::<event_ingest::Settings>("event-ingest"),
        service::<delivery_runner::Settings>("delivery-runner"),
        service::<permission_manager::Settings>("permission-manager"),
        service::<cost_aggregator::Settings>("cost-aggregator"),
        service::<automation::Settings>("automation"),
        service::<coordination::Settings>("coordination"),
        service::<gateway::Settings>("gateway"),
        service::<agent_harness::Settings>("agent-harness and agent-spawner"),
    ]
}

fn in_data_table(path: &str) -> bool {
    DATA_TABLES
        .iter()
        .any(|t| path.strip_prefix(t).is_some_and(|rest| rest.starts_with('.')))
}

/// Every setting's path (`section.key`, `section.sub.key`); a data table is one path.
fn settings(prefix: &str, value: &Value, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) if !DATA_TABLES.contains(&prefix) => {
            for (key, child) in map {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                settings(&path, child, out);
            }
        }
        _ => {
            out.insert(prefix.to_string());
        }
    }
}

/// A key the example file names, set or commented out.
struct Line {
    number: usize,
    described: bool,
}

/// The keys (`section.key`) and tables the example names, each with its line and whether a
/// comment describes it (on its line, or above it and the keys grouped under that comment).
fn documented() -> BTreeMap<String, Line> {
    let mut out = BTreeMap::new();
    let mut real_section = String::new();
    let mut section = String::new();
    // Whether the lines above, up to this group of keys, are a comment.
    let mut under_comment = false;
    for (i, line) in EXAMPLE.lines().enumerate() {
        let trimmed = line.trim();
        let (commented, body) = match trimmed.strip_prefix('#') {
            Some(rest) => (true, rest.trim()),
            None => (false, trimmed),
        };
        if body.starts_with('[') && body.ends_with(']') {
            let name = body.trim_matches(|c| c == '[' || c == ']').to_string();
            if !commented {
                real_section = name.clone();
            }
            section = name.clone();
            out.insert(
                name,
                Line {
                    number: i + 1,
                    described: true,
                },
            );
            under_comment = false;
            continue;
        }
        let key = body
            .split_once('=')
            .map(|(k, _)| k.trim())
            .filter(|k| !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
        let Some(key) = key else {
            // A blank line ends a group; prose starts one.
            under_comment = commented && !body.is_empty();
            continue;
        };
        let table = if commented { &section } else { &real_section };
        let value = body.split_once('=').unwrap().1;
        // A `#` after the value that is not inside a string.
        let trailing = value.split('#').count() > 1 && value.matches('"').count() % 2 == 0;
        out.insert(
            format!("{table}.{key}"),
            Line {
                number: i + 1,
                described: trailing || under_comment,
            },
        );
    }
    out
}

/// The paths at which two settings trees differ.
fn differences(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for key in x.keys().chain(y.keys()).collect::<BTreeSet<_>>() {
                let null = Value::Null;
                let child = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                differences(&child, x.get(key).unwrap_or(&null), y.get(key).unwrap_or(&null), out);
            }
        }
        // The example shows a data table's built-in entries (the policies), which the default
        // leaves unset to mean the same.
        _ if DATA_TABLES.contains(&path) => {}
        _ if a != b => out.push(format!("{path}: the example sets {b}, the default is {a}")),
        _ => {}
    }
}

#[test]
fn the_example_config_documents_every_setting_of_every_service_with_its_default() {
    let services = services();
    let documented = documented();
    let mut problems = Vec::new();
    let mut known = BTreeSet::new();
    for s in &services {
        let mut own = BTreeSet::new();
        settings("", &s.defaults, &mut own);
        for path in &own {
            let shown = documented.contains_key(path)
                || (DATA_TABLES.contains(&path.as_str())
                    && documented.keys().any(|d| d.starts_with(&format!("{path}."))));
            if !shown {
                problems.push(format!(
                    "{}: `{path}` (default {}) is not in the example",
                    s.name,
                    s.defaults
                        .pointer(&format!("/{}", path.replace('.', "/")))
                        .unwrap_or(&Value::Null)
                ));
            }
        }
        let mut changed = Vec::new();
        differences("", &s.defaults, &s.example, &mut changed);
        problems.extend(changed.into_iter().map(|d| format!("{}: {d}", s.name)));
        known.extend(own);
    }
    for (path, line) in &documented {
        let table = known.iter().any(|k| k.starts_with(&format!("{path}.")));
        if !known.contains(path) && !table && !in_data_table(path) {
            problems.push(format!("line {}: `{path}` is no service's setting", line.number));
        }
        if !line.described && !in_data_table(path) {
            problems.push(format!(
                "line {}: `{path}` has no comment saying what it does",
                line.number
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "config/relay.example.toml and the services' settings disagree ({}):\n  {}",
        problems.len(),
        problems.join("\n  ")
    );
}
