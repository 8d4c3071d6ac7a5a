//! Gemini API as Gemini CLI uses it: `POST /v1beta/models/{model}:streamGenerateContent?alt=sse`,
//! `:generateContent` and `:countTokens`.

use axum::http::{Method, StatusCode};
use serde_json::{Map, Value, json};

use crate::script::{Piece, Script, Step, last_user_turn};
use crate::{Outcome, array, json_response, new_id, sse_event, sse_response};

pub(crate) fn handle(method: &Method, path: &str, query: &str, body: &Value, script: &Script) -> Option<Outcome> {
    let (model, action) = path.strip_prefix("/v1beta/models/")?.rsplit_once(':')?;
    if method != Method::POST {
        return None;
    }
    match action {
        "countTokens" => Some(Outcome::side(json_response(
            StatusCode::OK,
            &json!({"totalTokens": 1000}),
        ))),
        "generateContent" => Some(generate(model, body, script, Mode::Json)),
        "streamGenerateContent" if query.split('&').any(|kv| kv == "alt=sse") => {
            Some(generate(model, body, script, Mode::Sse))
        }
        // Without alt=sse the stream is a JSON array of chunks.
        "streamGenerateContent" => Some(generate(model, body, script, Mode::JsonArray)),
        _ => None,
    }
}

enum Mode {
    Json,
    JsonArray,
    Sse,
}

fn generate(model: &str, body: &Value, script: &Script, mode: Mode) -> Outcome {
    let tools = tool_names(body);
    let main = !tools.is_empty();
    let contents = array(body.get("contents"));
    let (user_text, results) = last_user_turn(pieces(contents));
    let step = script.choose(user_text.as_deref(), results);
    let usage = script.usage_for(&step, main);
    let schema = body
        .pointer("/generationConfig/responseJsonSchema")
        .or_else(|| body.pointer("/generationConfig/responseSchema"));
    let part = match schema {
        // Router/classifier side calls parse the answer against their schema; give them a valid object.
        Some(schema) if !main => json!({"text": fill(schema).to_string()}),
        _ => part(&step, &tools),
    };
    let chunk = json!({
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        // Gemini's promptTokenCount includes the cached tokens (cachedContentTokenCount says how many).
        "usageMetadata": {"promptTokenCount": usage.input + usage.cached, "candidatesTokenCount": usage.output,
                          "cachedContentTokenCount": usage.cached,
                          "totalTokenCount": usage.input + usage.cached + usage.output},
        "modelVersion": model,
        "responseId": new_id(""),
    });
    let response = match mode {
        Mode::Json => json_response(StatusCode::OK, &chunk),
        Mode::JsonArray => json_response(StatusCode::OK, &json!([chunk])),
        Mode::Sse => {
            let mut out = String::new();
            sse_event(&mut out, None, &chunk);
            sse_response(out)
        }
    };
    Outcome {
        main,
        user_text,
        usage: Some(usage),
        response,
    }
}

/// Function names from `tools: [{functionDeclarations: [{name, ..}]}]`.
fn tool_names(body: &Value) -> Vec<String> {
    let tools = array(body.get("tools"));
    tools
        .iter()
        .filter_map(|t| t.get("functionDeclarations").and_then(Value::as_array))
        .flatten()
        .filter_map(|d| d.get("name").and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// User text parts and functionResponse parts in order; the model's turns carry neither.
fn pieces(contents: &[Value]) -> Vec<Piece> {
    let mut out = Vec::new();
    for content in contents
        .iter()
        .filter(|c| c.get("role").and_then(Value::as_str) == Some("user"))
    {
        for part in array(content.get("parts")) {
            if let Some(text) = part.get("text").and_then(Value::as_str) {
                out.push(Piece::UserText(text.to_string()));
            } else if part.get("functionResponse").is_some() {
                out.push(Piece::ToolResult);
            }
        }
    }
    out
}

/// `mcp__relay__relay_send` as Gemini CLI lists it: `mcp_relay_relay_send`.
fn gemini_mcp_name(name: &str) -> String {
    match name.strip_prefix("mcp__").and_then(|rest| rest.split_once("__")) {
        Some((server, tool)) => format!("mcp_{server}_{tool}"),
        None => name.to_string(),
    }
}

/// The one part answering `step`: a functionCall when the request offers the tool, else text.
fn part(step: &Step, tools: &[String]) -> Value {
    let offered = |name: &str| tools.iter().any(|t| t == name);
    let call = |name: &str, args: Value| json!({"functionCall": {"name": name, "args": args}});
    match step {
        Step::Shell { command, .. } if offered("run_shell_command") => call(
            "run_shell_command",
            json!({"command": command, "description": "Run a shell command"}),
        ),
        Step::Tool { name, input, .. } if offered(name) => call(name, input.clone()),
        // Gemini names an MCP tool `mcp_<server>_<tool>`; scripts use Claude's `mcp__<server>__<tool>`.
        Step::Tool { name, input, .. } if offered(&gemini_mcp_name(name)) => {
            call(&gemini_mcp_name(name), input.clone())
        }
        // `ask_user` (0.61; offered in the TUI, not in `-p`): questions of type choice with 2-4 {label, description}.
        Step::Question { question, options, .. } if offered("ask_user") => call(
            "ask_user",
            json!({"questions": [{
                "question": question, "header": "Question", "type": "choice", "multiSelect": false,
                "options": options.iter().map(|o| json!({"label": o, "description": o})).collect::<Vec<_>>(),
            }]}),
        ),
        _ => json!({"text": step.as_text()}),
    }
}

/// A value that satisfies `schema`: enum -> first value, numbers -> minimum or 1, strings -> "x",
/// objects -> every property, arrays -> one item.
pub(crate) fn fill(schema: &Value) -> Value {
    if let Some(first) = schema.get("enum").and_then(Value::as_array).and_then(|e| e.first()) {
        return first.clone();
    }
    if let Some(value) = schema.get("const") {
        return value.clone();
    }
    if let Some(first) = ["anyOf", "oneOf"]
        .iter()
        .find_map(|k| schema.get(*k)?.as_array()?.first())
    {
        return fill(first);
    }
    let kind = match schema.get("type") {
        Some(Value::String(t)) => t.to_ascii_lowercase(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null")
            .to_ascii_lowercase(),
        _ if schema.get("properties").is_some() => "object".into(),
        _ => String::new(),
    };
    match kind.as_str() {
        "object" => {
            let props = schema.get("properties").and_then(Value::as_object);
            let filled: Map<String, Value> = props
                .into_iter()
                .flatten()
                .map(|(name, s)| (name.clone(), fill(s)))
                .collect();
            Value::Object(filled)
        }
        "array" => json!([schema.get("items").map_or(Value::Null, fill)]),
        "string" => json!("x"),
        "integer" => schema
            .get("minimum")
            .and_then(Value::as_i64)
            .map_or(json!(1), |m| json!(m)),
        "number" => schema.get("minimum").cloned().unwrap_or(json!(1)),
        "boolean" => json!(false),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::fixture;

    fn contents(body: &Value) -> Vec<Value> {
        body["contents"].as_array().cloned().unwrap_or_default()
    }

    #[test]
    fn session_context_is_skipped_and_function_responses_count_as_steps() {
        let body = fixture("gemini_after_run_shell_command.json");
        assert_eq!(
            last_user_turn(pieces(&contents(&body))),
            (Some("RUNTOOL please".into()), 1)
        );
        assert!(tool_names(&body).contains(&"run_shell_command".to_string()));
    }

    #[test]
    fn router_side_call_gets_a_schema_filled_object() {
        let body = fixture("gemini_router.json");
        assert!(tool_names(&body).is_empty());
        assert_eq!(
            last_user_turn(pieces(&contents(&body))).0.as_deref(),
            Some("RUNTOOL please")
        );
        let schema = &body["generationConfig"]["responseJsonSchema"];
        assert_eq!(
            fill(schema),
            json!({"complexity_reasoning": "x", "complexity_score": 1})
        );
        let schema = json!({"type": "object", "properties": {"mode": {"enum": ["fast", "slow"]},
            "n": {"type": "number", "minimum": 5}, "tags": {"type": "array", "items": {"type": "string"}}}});
        assert_eq!(fill(&schema), json!({"mode": "fast", "n": 5, "tags": ["x"]}));
    }

    #[test]
    fn shell_becomes_run_shell_command_only_when_offered() {
        let step = Step::shell("touch ran.txt");
        let call = part(&step, &["run_shell_command".to_string()]);
        assert_eq!(call["functionCall"]["name"], "run_shell_command");
        assert_eq!(call["functionCall"]["args"]["command"], "touch ran.txt");
        assert!(part(&step, &[]).get("text").is_some());
    }

    #[test]
    fn a_scripted_mcp_tool_is_called_by_geminis_name_for_it() {
        assert_eq!(gemini_mcp_name("mcp__relay__relay_send"), "mcp_relay_relay_send");
        assert_eq!(gemini_mcp_name("run_shell_command"), "run_shell_command");
        let tools = vec!["mcp_relay_relay_send".to_string()];
        let call = part(&Step::tool("mcp__relay__relay_send", json!({"to": "@b"})), &tools);
        assert_eq!(call["functionCall"]["name"], "mcp_relay_relay_send");
    }
}
