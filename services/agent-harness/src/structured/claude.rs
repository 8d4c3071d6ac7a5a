//! Claude Code's stream-json protocol (the transport of its SDKs): user messages in, one JSON
//! object per line out, and permission prompts as `can_use_tool` control requests when started
//! with `--permission-prompt-tool stdio`.

use super::{Codec, Seen, Usage};
use crate::prompts::Ask;
use serde_json::{Value, json};
use std::collections::HashMap;

#[derive(Default)]
pub struct Claude {
    session_id: String,
    /// Tool names by tool_use id, to name the tool a result belongs to.
    tools: HashMap<String, String>,
    /// Bash commands by tool_use id: a successful result is a command executed.
    commands: HashMap<String, String>,
    requests: u64,
}

/// The tool Claude asks the user a question with; it comes as a `can_use_tool` request too.
const ASK_USER: &str = "AskUserQuestion";

impl Codec for Claude {
    fn args(&mut self, resume: Option<&str>) -> Vec<String> {
        // The session id is ours (new) or the one to continue, so a restart can resume it.
        self.session_id = resume.map_or_else(|| uuid::Uuid::new_v4().to_string(), String::from);
        let mut args: Vec<String> = [
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-prompt-tool",
            "stdio",
            // Each user message is echoed once Claude took it: that is when it is delivered.
            "--replay-user-messages",
        ]
        .iter()
        .map(std::string::ToString::to_string)
        .collect();
        let flag = if resume.is_some() { "--resume" } else { "--session-id" };
        args.extend([flag.to_string(), self.session_id.clone()]);
        args
    }

    fn start(&mut self, _cwd: &str, _resume: Option<&str>) -> Vec<Value> {
        self.requests += 1;
        vec![json!({
            "type": "control_request",
            "request_id": format!("relay-init-{}", self.requests),
            "request": { "subtype": "initialize" },
        })]
    }

    fn send(&mut self, text: &str) -> Vec<Value> {
        vec![json!({
            "type": "user",
            "message": { "role": "user", "content": text },
            "parent_tool_use_id": null,
            "session_id": self.session_id,
        })]
    }

    fn read(&mut self, line: Value) -> Vec<Seen> {
        match line["type"].as_str().unwrap_or_default() {
            "control_response" => {
                // The answer to our initialize: the CLI takes messages from now on.
                let r = &line["response"];
                if r["subtype"] == "error" {
                    return vec![Seen::Error(format!("claude refused a control request: {}", r["error"]))];
                }
                if r["request_id"].as_str().is_some_and(|id| id.starts_with("relay-init-")) {
                    return vec![Seen::Ready {
                        cli_session: self.session_id.clone(),
                    }];
                }
                vec![]
            }
            "system" if line["subtype"] == "init" => {
                if let Some(id) = line["session_id"].as_str() {
                    self.session_id = id.to_string();
                }
                vec![]
            }
            "assistant" => self.assistant(&line["message"]),
            "user" if line["isReplay"] == true => vec![Seen::Taken],
            "user" => self.tool_results(&line),
            "control_request" => self.control_request(&line),
            "result" => result(&line),
            _ => vec![],
        }
    }

    fn decide(&mut self, token: &Value, approved: bool) -> Vec<Value> {
        let response = if approved {
            json!({ "behavior": "allow", "updatedInput": token["input"] })
        } else {
            json!({ "behavior": "deny", "message": "The user denied this tool use through relay-mesh." })
        };
        vec![control_response(token, response)]
    }

    fn answer(&mut self, token: &Value, answer: &str) -> Vec<Value> {
        // AskUserQuestion takes its answers as part of its input: question text → chosen label.
        let mut input = token["input"].clone();
        let mut answers = serde_json::Map::new();
        if let Some(questions) = input["questions"].as_array() {
            for q in questions {
                if let Some(text) = q["question"].as_str() {
                    answers.insert(text.to_string(), Value::String(answer.to_string()));
                }
            }
        }
        input["answers"] = Value::Object(answers);
        vec![control_response(
            token,
            json!({ "behavior": "allow", "updatedInput": input }),
        )]
    }

    /// The SDK control protocol's interrupt: the turn ends with a result line.
    fn interrupt(&mut self) -> Vec<Value> {
        vec![json!({
            "type": "control_request",
            "request_id": uuid::Uuid::new_v4().to_string(),
            "request": { "subtype": "interrupt" },
        })]
    }
}

impl Claude {
    fn assistant(&mut self, message: &Value) -> Vec<Seen> {
        let mut seen = Vec::new();
        for block in message["content"].as_array().into_iter().flatten() {
            match block["type"].as_str().unwrap_or_default() {
                "text" => {
                    if let Some(text) = block["text"].as_str().filter(|t| !t.is_empty()) {
                        seen.push(Seen::Text(text.to_string()));
                    }
                }
                "tool_use" => {
                    let id = block["id"].as_str().unwrap_or_default().to_string();
                    let tool = block["name"].as_str().unwrap_or_default().to_string();
                    if tool == "Bash"
                        && let Some(cmd) = block["input"]["command"].as_str()
                    {
                        self.commands.insert(id.clone(), cmd.to_string());
                    }
                    if let Some(path) = block["input"]["file_path"].as_str() {
                        let operation = match tool.as_str() {
                            "Write" => "create",
                            "Edit" | "MultiEdit" => "update",
                            "Read" => "read",
                            _ => "",
                        };
                        if !operation.is_empty() {
                            seen.push(Seen::File {
                                path: path.to_string(),
                                operation: operation.to_string(),
                            });
                        }
                    }
                    self.tools.insert(id.clone(), tool.clone());
                    seen.push(Seen::ToolCalled {
                        id,
                        tool,
                        input: block["input"].clone(),
                    });
                }
                _ => {}
            }
        }
        seen
    }

    fn tool_results(&mut self, line: &Value) -> Vec<Seen> {
        let mut seen = Vec::new();
        for block in line["message"]["content"].as_array().into_iter().flatten() {
            if block["type"] != "tool_result" {
                continue;
            }
            let id = block["tool_use_id"].as_str().unwrap_or_default().to_string();
            let tool = self.tools.remove(&id).unwrap_or_default();
            let ok = !block["is_error"].as_bool().unwrap_or(false);
            let output = match &block["content"] {
                Value::String(s) => Some(s.clone()),
                Value::Array(parts) => Some(
                    parts
                        .iter()
                        .filter_map(|p| p["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                ),
                _ => None,
            };
            if let Some(command) = self.commands.remove(&id)
                && ok
            {
                seen.push(Seen::Command {
                    command,
                    exit_code: Some(0),
                });
            }
            seen.push(Seen::ToolCompleted { id, tool, ok, output });
        }
        seen
    }

    fn control_request(&mut self, line: &Value) -> Vec<Seen> {
        let request = &line["request"];
        if request["subtype"] != "can_use_tool" {
            // Nothing else is asked of a client in this mode; say so rather than leave it hanging.
            let id = line["request_id"].clone();
            return vec![Seen::Write(json!({
                "type": "control_response",
                "response": { "subtype": "error", "request_id": id, "error": format!("relay-mesh does not handle {}", request["subtype"]) },
            }))];
        }
        let tool = request["tool_name"].as_str().unwrap_or_default().to_string();
        let input = request["input"].clone();
        let token = json!({ "requestId": line["request_id"], "input": input });
        if tool == ASK_USER {
            let q = &input["questions"][0];
            let options = super::labels(&q["options"]);
            return vec![Seen::Question {
                token,
                question: q["question"].as_str().unwrap_or_default().to_string(),
                options,
            }];
        }
        let description = request["description"]
            .as_str()
            .or(input["description"].as_str())
            .unwrap_or_default()
            .to_string();
        vec![Seen::Permission {
            token,
            ask: Ask {
                tool,
                command: input["command"].as_str().map(String::from),
                file_path: input["file_path"]
                    .as_str()
                    .or(request["blocked_path"].as_str())
                    .map(String::from),
                description,
            },
        }]
    }
}

fn control_response(token: &Value, response: Value) -> Value {
    json!({
        "type": "control_response",
        "response": { "subtype": "success", "request_id": token["requestId"], "response": response },
    })
}

/// The end of a turn: its usage (all model calls of the turn) and how it ended.
fn result(line: &Value) -> Vec<Seen> {
    let u = &line["usage"];
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    let model = line["modelUsage"]
        .as_object()
        .and_then(|m| m.keys().next())
        .map(|m| m.trim_end_matches("[1m]").to_string());
    let error = (line["is_error"] == true || line["subtype"] != "success").then(|| {
        line["result"]
            .as_str()
            .map_or_else(|| format!("the turn ended with {}", line["subtype"]), String::from)
    });
    vec![
        Seen::Usage(Usage {
            input: n(&u["input_tokens"]),
            output: n(&u["output_tokens"]),
            cache_read: n(&u["cache_read_input_tokens"]),
            cache_write: n(&u["cache_creation_input_tokens"]),
            model,
        }),
        Seen::TurnDone { error },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claude() -> Claude {
        let mut c = Claude::default();
        c.args(None);
        c.start("/w", None);
        c
    }

    fn line(s: &str) -> Value {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn a_new_session_gets_an_id_of_ours_and_a_resumed_one_keeps_its_own() {
        let mut c = Claude::default();
        let args = c.args(None);
        let at = args.iter().position(|a| a == "--session-id").unwrap();
        assert_eq!(args[at + 1], c.session_id);
        let args = Claude::default().args(Some("s-1"));
        assert!(args.windows(2).any(|w| w == ["--resume", "s-1"]), "{args:?}");
    }

    #[test]
    fn the_answer_to_initialize_makes_it_ready_with_its_session() {
        let mut c = claude();
        let seen = c.read(line(
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"relay-init-1","response":{"pid":1}}}"#,
        ));
        assert_eq!(
            seen,
            vec![Seen::Ready {
                cli_session: c.session_id.clone()
            }]
        );
    }

    #[test]
    fn can_use_tool_is_a_permission_answered_allow_with_the_input_or_deny() {
        let mut c = claude();
        let seen = c.read(line(
            r#"{"type":"control_request","request_id":"r-1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"touch ran.txt","description":"Create ran.txt"},"description":"Create ran.txt","blocked_path":"/w/ran.txt","tool_use_id":"t-1"}}"#,
        ));
        let Seen::Permission { token, ask } = &seen[0] else {
            panic!("{seen:?}")
        };
        assert_eq!(ask.tool, "Bash");
        assert_eq!(ask.command.as_deref(), Some("touch ran.txt"));
        let allow = &c.decide(token, true)[0];
        assert_eq!(allow["response"]["request_id"], "r-1");
        assert_eq!(allow["response"]["response"]["behavior"], "allow");
        assert_eq!(
            allow["response"]["response"]["updatedInput"]["command"],
            "touch ran.txt"
        );
        let deny = &c.decide(token, false)[0];
        assert_eq!(deny["response"]["response"]["behavior"], "deny");
    }

    #[test]
    fn ask_user_question_is_a_question_answered_with_the_answers_in_its_input() {
        let mut c = claude();
        let seen = c.read(line(
            r#"{"type":"control_request","request_id":"r-2","request":{"subtype":"can_use_tool","tool_name":"AskUserQuestion","input":{"questions":[{"question":"Which color do you prefer?","header":"Color","options":[{"label":"Red","description":"warm"},{"label":"Blue","description":"cool"}],"multiSelect":false}]}}}"#,
        ));
        let Seen::Question {
            token,
            question,
            options,
        } = &seen[0]
        else {
            panic!("{seen:?}")
        };
        assert_eq!(question, "Which color do you prefer?");
        assert_eq!(options, &["Red", "Blue"]);
        let reply = &c.answer(token, "Blue")[0];
        let input = &reply["response"]["response"]["updatedInput"];
        assert_eq!(input["answers"]["Which color do you prefer?"], "Blue");
        assert_eq!(input["questions"][0]["header"], "Color", "the original input is kept");
    }

    #[test]
    fn the_result_line_ends_the_turn_with_its_usage() {
        let mut c = claude();
        let seen = c.read(line(
            r#"{"type":"result","subtype":"success","is_error":false,"result":"done","usage":{"input_tokens":3000,"cache_creation_input_tokens":0,"cache_read_input_tokens":10,"output_tokens":1600},"modelUsage":{"claude-opus-4-8[1m]":{"inputTokens":3000}}}"#,
        ));
        assert_eq!(
            seen,
            vec![
                Seen::Usage(Usage {
                    input: 3000,
                    output: 1600,
                    cache_read: 10,
                    cache_write: 0,
                    model: Some("claude-opus-4-8".into())
                }),
                Seen::TurnDone { error: None },
            ]
        );
    }

    #[test]
    fn a_bash_tool_use_and_its_result_are_a_tool_call_and_a_command() {
        let mut c = claude();
        let called = c.read(line(
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"I'll run that."},{"type":"tool_use","id":"t-1","name":"Bash","input":{"command":"ls"}}]}}"#,
        ));
        assert_eq!(called[0], Seen::Text("I'll run that.".into()));
        assert!(matches!(&called[1], Seen::ToolCalled { tool, .. } if tool == "Bash"));
        let done = c.read(line(
            r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t-1","type":"tool_result","content":"a.txt","is_error":false}]}}"#,
        ));
        assert_eq!(
            done[0],
            Seen::Command {
                command: "ls".into(),
                exit_code: Some(0)
            }
        );
        assert!(matches!(&done[1], Seen::ToolCompleted { ok: true, .. }));
    }
}
