//! Anthropic Messages API as Claude Code uses it: `POST /v1/messages[?beta=true]` (SSE or JSON)
//! and `POST /v1/messages/count_tokens`.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::script::{Piece, Script, Step, Usage, last_user_turn};
use crate::{Outcome, array, json_response, new_id, sse_event, sse_response, tool_names};

pub(crate) fn handle(method: &Method, path: &str, body: &Value, script: &Script) -> Option<Outcome> {
    if method != Method::POST {
        return None;
    }
    match path {
        // Claude's /context view; any plausible number will do.
        "/v1/messages/count_tokens" => Some(Outcome::side(json_response(
            StatusCode::OK,
            &json!({"input_tokens": 1000}),
        ))),
        "/v1/messages" => Some(messages(body, script)),
        _ => None,
    }
}

fn messages(body: &Value, script: &Script) -> Outcome {
    let tools = tool_names(array(body.get("tools")));
    let main = !tools.is_empty();
    let (user_text, results) = last_user_turn(pieces(body));
    let step = script.choose(user_text.as_deref(), results);
    let usage = script.usage_for(&step, main);
    let content = vec![block(&step, &tools, searched_this_turn(body))];
    let stop_reason = if content.iter().any(|b| b["type"] == "tool_use") {
        "tool_use"
    } else {
        "end_turn"
    };
    let model = body.get("model").and_then(Value::as_str).unwrap_or("claude-fake");
    let id = new_id("msg_");
    let response = if body.get("stream").and_then(Value::as_bool).unwrap_or(false) {
        sse_response(stream(&id, model, &content, stop_reason, usage))
    } else {
        json_response(
            StatusCode::OK,
            &json!({
                "id": id, "type": "message", "role": "assistant", "model": model,
                "content": content, "stop_reason": stop_reason, "stop_sequence": null,
                "usage": usage_json(usage, usage.output),
            }),
        )
    };
    Outcome {
        main,
        user_text,
        usage: Some(usage),
        response,
    }
}

/// The ids of the assistant's ToolSearch calls: their results load tools, they are not steps.
fn tool_search_ids(body: &Value) -> Vec<String> {
    let messages = array(body.get("messages"));
    messages
        .iter()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
        .flat_map(|m| array(m.get("content")))
        .filter(|b| b["type"] == "tool_use" && b["name"] == TOOL_SEARCH)
        .filter_map(|b| b.get("id").and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// A ToolSearch already ran since the user last typed (so a tool it did not load stays text,
/// no loop): its result is the last thing in the conversation.
fn searched_this_turn(body: &Value) -> bool {
    let searches = tool_search_ids(body);
    let messages = array(body.get("messages"));
    let last = messages
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"));
    last.is_some_and(|m| array(m.get("content")).iter().any(|b| is_search_result(b, &searches)))
}

fn is_search_result(block: &Value, searches: &[String]) -> bool {
    block["type"] == "tool_result"
        && block
            .get("tool_use_id")
            .and_then(Value::as_str)
            .is_some_and(|id| searches.iter().any(|s| s == id))
}

/// Claude Code's client-side tool search (2.1.33x): MCP tools are listed by name only, and
/// their schemas load when the model calls it with `select:<name>`.
const TOOL_SEARCH: &str = "ToolSearch";

/// User text blocks and tool results in conversation order; `role: "system"` messages
/// (Claude's mid-conversation system beta) and assistant turns carry neither. ToolSearch
/// results are not steps of the script.
fn pieces(body: &Value) -> Vec<Piece> {
    let searches = tool_search_ids(body);
    let mut out = Vec::new();
    let messages = array(body.get("messages"));
    for message in messages
        .iter()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
    {
        match message.get("content") {
            Some(Value::String(text)) => out.push(Piece::UserText(text.clone())),
            Some(Value::Array(blocks)) => {
                // Claude Code answers a ToolSearch with the loaded tools and a "Tool loaded." text.
                if blocks.iter().any(|b| is_search_result(b, &searches)) {
                    continue;
                }
                for block in blocks {
                    match block.get("type").and_then(Value::as_str) {
                        Some("text") => {
                            let text = block.get("text").and_then(Value::as_str).unwrap_or_default();
                            out.push(Piece::UserText(text.to_string()));
                        }
                        Some("tool_result") => out.push(Piece::ToolResult),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The one content block answering `step`: a tool_use when the request offers the tool, a
/// ToolSearch that loads it when it is deferred (once per turn), else text.
fn block(step: &Step, tools: &[String], searched: bool) -> Value {
    let offered = |name: &str| tools.iter().any(|t| t == name);
    let tool_use =
        |name: &str, input: Value| json!({"type": "tool_use", "id": new_id("toolu_"), "name": name, "input": input});
    match step {
        Step::Shell { command, .. } if offered("Bash") => tool_use(
            "Bash",
            json!({"command": command, "description": "Run a shell command"}),
        ),
        Step::Tool { name, input, .. } if offered(name) => tool_use(name, input.clone()),
        Step::Tool { name, .. } if offered(TOOL_SEARCH) && !searched => tool_use(
            TOOL_SEARCH,
            json!({"query": format!("select:{name}"), "max_results": 5}),
        ),
        // AskUserQuestion's input_schema (2.1.197): 1-4 questions, each with a <=12 char header
        // and 2-4 options of {label, description}.
        Step::Question { question, options, .. } if offered("AskUserQuestion") => tool_use(
            "AskUserQuestion",
            json!({"questions": [{
                "question": question,
                "header": "Question",
                "options": options.iter().map(|o| json!({"label": o, "description": o})).collect::<Vec<_>>(),
                "multiSelect": false,
            }]}),
        ),
        _ => json!({"type": "text", "text": step.as_text()}),
    }
}

/// Anthropic counts cache reads apart from `input_tokens`.
fn usage_json(usage: Usage, output: u64) -> Value {
    json!({"input_tokens": usage.input, "output_tokens": output, "cache_creation_input_tokens": 0,
           "cache_read_input_tokens": usage.cached})
}

/// The event sequence of a real streamed message: start, one block (start/delta/stop), delta with
/// stop reason and final output tokens, stop. Input tokens go in message_start, output tokens in message_delta.
fn stream(id: &str, model: &str, content: &[Value], stop_reason: &str, usage: Usage) -> String {
    let mut out = String::new();
    let start = json!({"type": "message_start", "message": {
        "id": id, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": null, "stop_sequence": null, "usage": usage_json(usage, 0),
    }});
    sse_event(&mut out, Some("message_start"), &start);
    for (index, block) in content.iter().enumerate() {
        let (empty, delta) = if block["type"] == "tool_use" {
            let mut empty = block.clone();
            empty["input"] = json!({});
            (
                empty,
                json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
            )
        } else {
            (
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": block["text"]}),
            )
        };
        sse_event(
            &mut out,
            Some("content_block_start"),
            &json!({"type": "content_block_start", "index": index, "content_block": empty}),
        );
        sse_event(
            &mut out,
            Some("content_block_delta"),
            &json!({"type": "content_block_delta", "index": index, "delta": delta}),
        );
        sse_event(
            &mut out,
            Some("content_block_stop"),
            &json!({"type": "content_block_stop", "index": index}),
        );
    }
    let delta = json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null},
        "usage": {"output_tokens": usage.output}});
    sse_event(&mut out, Some("message_delta"), &delta);
    sse_event(&mut out, Some("message_stop"), &json!({"type": "message_stop"}));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::fixture;

    #[test]
    fn system_reminders_and_system_messages_are_skipped_and_tool_results_count_as_steps() {
        // Claude Code 2.1.197: [<system-reminder> block, user text], a role "system" message, the Bash
        // tool_use, then a user message with the tool_result.
        let body = fixture("claude_after_bash.json");
        assert_eq!(last_user_turn(pieces(&body)), (Some("RUNTOOL please".into()), 1));
        let script = Script::new().on(
            "RUNTOOL",
            [Step::shell("touch ran.txt"), Step::text("done").usage(100, 20)],
        );
        let outcome = messages(&body, &script);
        assert!(outcome.main);
        assert_eq!(outcome.user_text.as_deref(), Some("RUNTOOL please"));
    }

    #[test]
    fn a_deferred_mcp_tool_is_loaded_with_tool_search_once_then_called() {
        let script = Script::new().on(
            "MCPTOOL",
            [
                Step::tool("mcp__fake__echo", json!({"text": "ping"})),
                Step::text("mcp done"),
            ],
        );
        // Claude Code 2.1.332's first request: the MCP tool is named only in a system message.
        let mut first = fixture("claude_after_tool_search.json");
        let messages = first["messages"].as_array_mut().unwrap();
        messages.truncate(2);
        first["tools"] = json!([{"name": "ToolSearch"}, {"name": "Bash"}]);
        let search = &block(&Step::tool("mcp__fake__echo", json!({})), &["ToolSearch".into()], false);
        assert_eq!(search["name"], "ToolSearch");
        assert_eq!(search["input"]["query"], "select:mcp__fake__echo");
        assert!(!searched_this_turn(&first));
        // The next request carries the tool_reference result and "Tool loaded.", which are not
        // the user's words and not a step: the same step is chosen, and the tool is offered.
        let body = fixture("claude_after_tool_search.json");
        assert!(searched_this_turn(&body));
        assert_eq!(last_user_turn(pieces(&body)), (Some("MCPTOOL please".into()), 0));
        let outcome = messages_outcome_block(&body, &script);
        assert_eq!(
            (outcome["name"].as_str(), &outcome["input"]),
            (Some("mcp__fake__echo"), &json!({"text": "ping"}))
        );
        // A search that did not load the tool is not repeated.
        assert_eq!(
            block(&Step::tool("mcp__x__y", json!({})), &["ToolSearch".into()], true)["type"],
            "text"
        );
    }

    fn messages_outcome_block(body: &Value, script: &Script) -> Value {
        let tools = tool_names(array(body.get("tools")));
        let (user_text, results) = last_user_turn(pieces(body));
        block(
            &script.choose(user_text.as_deref(), results),
            &tools,
            searched_this_turn(body),
        )
    }

    #[test]
    fn steps_become_tool_use_blocks_only_for_offered_tools() {
        let tools = [
            "Bash".to_string(),
            "AskUserQuestion".to_string(),
            "mcp__fake__echo".to_string(),
        ];
        let bash = block(&Step::shell("touch a"), &tools, false);
        assert_eq!(
            (bash["type"].as_str(), bash["name"].as_str()),
            (Some("tool_use"), Some("Bash"))
        );
        assert_eq!(bash["input"]["command"], "touch a");
        let mcp = block(&Step::tool("mcp__fake__echo", json!({"text": "hi"})), &tools, false);
        assert_eq!(mcp["input"], json!({"text": "hi"}));
        let ask = block(&Step::question("Which?", ["A", "B"]), &tools, false);
        assert_eq!(
            ask["input"]["questions"][0]["options"][1],
            json!({"label": "B", "description": "B"})
        );
        assert_eq!(ask["input"]["questions"][0]["multiSelect"], false);
        assert_eq!(block(&Step::shell("touch a"), &[], false)["type"], "text");
    }

    #[test]
    fn stream_puts_input_tokens_in_message_start_and_output_tokens_in_message_delta() {
        let content = [json!({"type": "text", "text": "hi"})];
        let sse = stream(
            "msg_1",
            "m",
            &content,
            "end_turn",
            Usage {
                input: 1500,
                output: 800,
                cached: 0,
            },
        );
        let events: Vec<Value> = sse
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter_map(|d| serde_json::from_str(d).ok())
            .collect();
        assert_eq!(events[0]["message"]["usage"]["input_tokens"], 1500);
        assert_eq!(events[0]["message"]["usage"]["output_tokens"], 0);
        let delta = events
            .iter()
            .find(|e| e["type"] == "message_delta")
            .expect("message_delta");
        assert_eq!(delta["usage"], json!({"output_tokens": 800}));
        assert_eq!(events.last().map(|e| e["type"].clone()), Some(json!("message_stop")));
    }
}
