//! OpenAI Responses API as Codex uses it: `POST /v1/responses` (SSE or JSON) and `GET /v1/models`.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::script::{Piece, Script, Step, Usage, last_user_turn};
use crate::{Outcome, array, json_response, new_id, sse_event, sse_response, tool_names};

pub(crate) fn handle(method: &Method, path: &str, body: &Value, script: &Script) -> Option<Outcome> {
    match (method.as_str(), path) {
        ("POST", "/v1/responses") => Some(responses(body, script)),
        ("GET", "/v1/models") => {
            let models = json!({"object": "list", "data": [{"id": "gpt-5.5", "object": "model", "created": 0, "owned_by": "fake"}]});
            Some(Outcome::side(json_response(StatusCode::OK, &models)))
        }
        _ => None,
    }
}

fn responses(body: &Value, script: &Script) -> Outcome {
    let tool_defs = array(body.get("tools"));
    let main = !tool_defs.is_empty();
    let items = array(body.get("input"));
    let (user_text, results) = last_user_turn(pieces(items));
    let step = script.choose(user_text.as_deref(), results);
    let usage = script.usage_for(&step, main);
    let output = vec![item(&step, tool_defs, items)];
    let model = body.get("model").and_then(Value::as_str).unwrap_or("gpt-fake");
    let id = new_id("resp_");
    let response = if body.get("stream").and_then(Value::as_bool).unwrap_or(false) {
        sse_response(stream(&id, model, &output, usage))
    } else {
        json_response(
            StatusCode::OK,
            &response_object(&id, model, "completed", &output, usage),
        )
    };
    Outcome {
        main,
        user_text,
        usage: Some(usage),
        response,
    }
}

/// `input` holds developer/system messages, Codex's injected user messages (`<environment_context>`,
/// AGENTS.md, ...) which `last_user_turn` skips, the user's own input_text, and tool outputs.
fn pieces(items: &[Value]) -> Vec<Piece> {
    let mut out = Vec::new();
    for item in items {
        let kind = item.get("type").and_then(Value::as_str).unwrap_or("message");
        match kind {
            "message" if item.get("role").and_then(Value::as_str) == Some("user") => match item.get("content") {
                Some(Value::String(text)) => out.push(Piece::UserText(text.clone())),
                Some(Value::Array(parts)) => {
                    for part in parts
                        .iter()
                        .filter(|p| p.get("type").and_then(Value::as_str) == Some("input_text"))
                    {
                        let text = part.get("text").and_then(Value::as_str).unwrap_or_default();
                        out.push(Piece::UserText(text.to_string()));
                    }
                }
                _ => {}
            },
            "function_call_output" | "custom_tool_call_output" => out.push(Piece::ToolResult),
            _ => {}
        }
    }
    out
}

/// The one output item answering `step`: a function call when the request offers the tool, else a message.
fn item(step: &Step, tool_defs: &[Value], items: &[Value]) -> Value {
    let tools = tool_names(tool_defs);
    let offered = |name: &str| tools.iter().any(|t| t == name);
    let shell_args = |extra: Value| {
        // `require_escalated` makes Codex ask for approval even for a command its sandbox allows. Under
        // approval policy never (`codex exec`) Codex tells the model to leave it out and would reject the
        // command, so the fake obeys like a real model.
        let mut args = if never_approves(items) {
            json!({})
        } else {
            json!({"sandbox_permissions": "require_escalated", "justification": "Fake model wants to run this command"})
        };
        crate::merge_into(&mut args, extra);
        args
    };
    match step {
        Step::Shell { command, .. } if offered("exec_command") => {
            function_call("exec_command", None, shell_args(json!({"cmd": command})))
        }
        Step::Shell { command, .. } if offered("shell") => {
            function_call("shell", None, shell_args(json!({"command": ["bash", "-lc", command]})))
        }
        Step::Shell { command, .. } if offered("shell_command") => {
            function_call("shell_command", None, shell_args(json!({"command": command})))
        }
        // Freeform tools (apply_patch) take their input as a raw string.
        Step::Tool { name, input, .. } if offered(name) && is_custom(tool_defs, name) => json!({
            "type": "custom_tool_call", "id": new_id("ctc_"), "call_id": new_id("call_"), "status": "completed",
            "name": name, "input": input.as_str().map_or_else(|| input.to_string(), str::to_string),
        }),
        Step::Tool { name, input, .. } if offered(name) => function_call(name, None, input.clone()),
        Step::Tool { name, input, .. } => match loaded_tool(items, name) {
            Some((namespace, short)) => function_call(&short, Some(&namespace), input.clone()),
            // Codex defers MCP tools behind client-side `tool_search`: search once, and the next request
            // carries a tool_search_output with the tool's namespace (not counted as a step).
            None if offered("tool_search") && !searched_this_turn(items) => json!({
                "type": "tool_search_call", "id": new_id("ts_"), "call_id": new_id("call_"),
                "status": "completed", "execution": "client",
                "arguments": {"query": name.split('_').filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" "), "limit": 8},
            }),
            None => message(&step.as_text()),
        },
        Step::Question { question, options, .. } if offered("request_user_input") => {
            function_call("request_user_input", None, question_args(question, options))
        }
        _ => message(&step.as_text()),
    }
}

fn is_custom(tool_defs: &[Value], name: &str) -> bool {
    tool_defs
        .iter()
        .any(|t| t.get("name").and_then(Value::as_str) == Some(name) && t["type"] == "custom")
}

/// Codex's developer message says "Approval policy is currently never" in `codex exec` and with
/// `-a never`; it then rejects every `sandbox_permissions` request.
fn never_approves(items: &[Value]) -> bool {
    items
        .iter()
        .filter(|i| i.get("role").and_then(Value::as_str) == Some("developer"))
        .any(|i| {
            let parts = array(i.get("content"));
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .any(|t| t.contains("Approval policy is currently never"))
        })
}

/// A tool that an earlier tool_search loaded: `(namespace, name)` where `namespace + "__" + name` is
/// the scripted name, e.g. `mcp__fake` + `echo` for `mcp__fake__echo`.
fn loaded_tool(items: &[Value], wanted: &str) -> Option<(String, String)> {
    let outputs = items
        .iter()
        .filter(|i| i.get("type").and_then(Value::as_str) == Some("tool_search_output"));
    let namespaces = outputs
        .filter_map(|o| o.get("tools").and_then(Value::as_array))
        .flatten();
    for ns in namespaces {
        let Some(ns_name) = ns.get("name").and_then(Value::as_str) else {
            continue;
        };
        let tools = array(ns.get("tools"));
        for name in tools.iter().filter_map(|t| t.get("name").and_then(Value::as_str)) {
            let full = format!("{}__{}", ns_name.trim_end_matches('_'), name);
            if full == wanted {
                return Some((ns_name.to_string(), name.to_string()));
            }
        }
    }
    None
}

/// A tool search already ran since the last user message (so a tool it did not find stays text, no loop).
fn searched_this_turn(items: &[Value]) -> bool {
    let start = items.iter().rposition(|i| {
        i.get("role").and_then(Value::as_str) == Some("user")
            && last_user_turn(pieces(std::slice::from_ref(i))).0.is_some()
    });
    items[start.map_or(0, |s| s + 1)..]
        .iter()
        .any(|i| i.get("type").and_then(Value::as_str) == Some("tool_search_output"))
}

/// Arguments for Codex's `request_user_input` (0.169 schema): {questions: [{id, header (<=12 chars),
/// question, options: [{label, description}]}]}.
fn question_args(question: &str, options: &[String]) -> Value {
    let options: Vec<Value> = options.iter().map(|o| json!({"label": o, "description": o})).collect();
    json!({"questions": [{"id": "q1", "header": "Question", "question": question, "options": options}]})
}

fn function_call(name: &str, namespace: Option<&str>, arguments: Value) -> Value {
    let mut call = json!({"type": "function_call", "id": new_id("fc_"), "call_id": new_id("call_"), "name": name,
           "arguments": arguments.to_string(), "status": "completed"});
    if let Some(namespace) = namespace {
        call["namespace"] = json!(namespace);
    }
    call
}

fn message(text: &str) -> Value {
    json!({"type": "message", "id": new_id("msg_"), "status": "completed", "role": "assistant",
           "content": [{"type": "output_text", "text": text, "annotations": []}]})
}

/// OpenAI's `input_tokens` includes the cached ones (`cached_tokens` says how many).
fn usage_json(usage: Usage) -> Value {
    let input = usage.input + usage.cached;
    json!({"input_tokens": input, "input_tokens_details": {"cached_tokens": usage.cached},
           "output_tokens": usage.output, "output_tokens_details": {"reasoning_tokens": 0},
           "total_tokens": input + usage.output})
}

fn response_object(id: &str, model: &str, status: &str, output: &[Value], usage: Usage) -> Value {
    let usage = if status == "completed" {
        usage_json(usage)
    } else {
        Value::Null
    };
    json!({"id": id, "object": "response", "created_at": 0, "status": status, "model": model,
           "output": output, "usage": usage})
}

/// created, in_progress, then per item: added, (text: content_part.added, delta, text.done, content_part.done),
/// done; then completed with the usage, as the real API streams it.
fn stream(id: &str, model: &str, output: &[Value], usage: Usage) -> String {
    let mut out = String::new();
    let mut seq = 0u64;
    let mut event = |out: &mut String, name: &str, mut data: Value| {
        data["type"] = json!(name);
        data["sequence_number"] = json!(seq);
        seq += 1;
        sse_event(out, Some(name), &data);
    };
    let pending = response_object(id, model, "in_progress", &[], usage);
    event(&mut out, "response.created", json!({"response": pending}));
    event(&mut out, "response.in_progress", json!({"response": pending}));
    for (index, item) in output.iter().enumerate() {
        let item_id = item["id"].clone();
        if item["type"] == "message" {
            let text = item["content"][0]["text"].clone();
            let mut empty = item.clone();
            empty["status"] = json!("in_progress");
            empty["content"] = json!([]);
            event(
                &mut out,
                "response.output_item.added",
                json!({"output_index": index, "item": empty}),
            );
            let part = json!({"type": "output_text", "text": "", "annotations": []});
            let at = json!({"item_id": item_id, "output_index": index, "content_index": 0});
            event(
                &mut out,
                "response.content_part.added",
                merge(&at, json!({"part": part})),
            );
            event(
                &mut out,
                "response.output_text.delta",
                merge(&at, json!({"delta": text})),
            );
            event(&mut out, "response.output_text.done", merge(&at, json!({"text": text})));
            let part = json!({"type": "output_text", "text": text, "annotations": []});
            event(
                &mut out,
                "response.content_part.done",
                merge(&at, json!({"part": part})),
            );
        } else {
            let mut empty = item.clone();
            empty["status"] = json!("in_progress");
            if empty.get("arguments").is_some() {
                empty["arguments"] = json!("");
            }
            event(
                &mut out,
                "response.output_item.added",
                json!({"output_index": index, "item": empty}),
            );
            if let Some(arguments) = item.get("arguments") {
                let at = json!({"item_id": item_id, "output_index": index});
                event(
                    &mut out,
                    "response.function_call_arguments.delta",
                    merge(&at, json!({"delta": arguments})),
                );
                event(
                    &mut out,
                    "response.function_call_arguments.done",
                    merge(&at, json!({"arguments": arguments})),
                );
            }
        }
        event(
            &mut out,
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
        );
    }
    let done = response_object(id, model, "completed", output, usage);
    event(&mut out, "response.completed", json!({"response": done}));
    out
}

fn merge(a: &Value, b: Value) -> Value {
    let mut out = a.clone();
    crate::merge_into(&mut out, b);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::fixture;

    fn input(body: &Value) -> Vec<Value> {
        body["input"].as_array().cloned().unwrap_or_default()
    }

    #[test]
    fn injected_context_is_skipped_and_function_call_outputs_count_as_steps() {
        // Codex 0.169 exec: developer messages, <environment_context> as a user message, the user's
        // input_text, then function_call + function_call_output.
        let body = fixture("codex_after_exec_command.json");
        let items = input(&body);
        assert_eq!(last_user_turn(pieces(&items)), (Some("RUNTOOL please".into()), 1));
        assert!(never_approves(&items), "exec runs with approval policy never");
    }

    #[test]
    fn shell_asks_for_escalation_unless_approval_policy_is_never() {
        let tools = [json!({"type": "function", "name": "exec_command"})];
        let asking = item(&Step::shell("touch a"), &tools, &[]);
        let args: Value = serde_json::from_str(asking["arguments"].as_str().unwrap_or_default()).expect("json args");
        assert_eq!(args["sandbox_permissions"], "require_escalated");
        assert_eq!(args["cmd"], "touch a");
        let items = input(&fixture("codex_after_exec_command.json"));
        let never = item(&Step::shell("touch a"), &tools, &items);
        let args: Value = serde_json::from_str(never["arguments"].as_str().unwrap_or_default()).expect("json args");
        assert_eq!(args, json!({"cmd": "touch a"}));
    }

    #[test]
    fn deferred_mcp_tool_is_searched_first_then_called_in_its_namespace() {
        let step = Step::tool("mcp__fake__echo", json!({"text": "ping"}));
        let tools = [
            json!({"type": "function", "name": "exec_command"}),
            json!({"type": "tool_search"}),
        ];
        let fresh =
            [json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "MCPTOOL"}]})];
        let search = item(&step, &tools, &fresh);
        assert_eq!(search["type"], "tool_search_call");
        assert_eq!(search["arguments"]["query"], "mcp fake echo");
        let body = fixture("codex_after_tool_search.json");
        let items = input(&body);
        assert_eq!(last_user_turn(pieces(&items)), (Some("MCPTOOL please".into()), 0));
        let call = item(&step, &tools, &items);
        assert_eq!(
            (call["name"].as_str(), call["namespace"].as_str()),
            (Some("echo"), Some("mcp__fake"))
        );
        // A tool the search did not load is answered as text instead of searching forever.
        let missing = item(&Step::tool("mcp__fake__nope", json!({})), &tools, &items);
        assert_eq!(missing["type"], "message");
    }

    #[test]
    fn freeform_tools_get_a_custom_tool_call_with_raw_input() {
        let tools = [json!({"type": "custom", "name": "apply_patch"})];
        let patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n";
        let call = item(&Step::tool("apply_patch", json!(patch)), &tools, &[]);
        assert_eq!(
            (call["type"].as_str(), call["input"].as_str()),
            (Some("custom_tool_call"), Some(patch))
        );
    }

    #[test]
    fn question_fills_request_user_input() {
        let tools = [json!({"type": "function", "name": "request_user_input"})];
        let call = item(&Step::question("Which?", ["A", "B"]), &tools, &[]);
        let args: Value = serde_json::from_str(call["arguments"].as_str().unwrap_or_default()).expect("json args");
        assert_eq!(args["questions"][0]["question"], "Which?");
        assert_eq!(
            args["questions"][0]["options"][0],
            json!({"label": "A", "description": "A"})
        );
    }
}
