//! The Agent Client Protocol (JSON-RPC 2.0 over stdio; `gemini --acp` and any agent that speaks
//! it): `session/new` (or `session/load` to continue), one `session/prompt` per message whose
//! reply ends the turn, `session/update` notifications, and `session/request_permission`.

use super::{Codec, Seen, Usage, rpc, rpc_result};
use crate::prompts::Ask;
use serde_json::{Value, json};

#[derive(Default)]
pub struct Acp {
    next_id: u64,
    session_id: String,
    resume: Option<String>,
    cwd: String,
    /// The id of the `session/prompt` whose reply ends the running turn.
    prompt_id: Option<u64>,
    /// Agent text of the turn so far, streamed in chunks: emitted whole.
    text: String,
    /// Tool names by tool call id.
    tools: std::collections::HashMap<String, String>,
    /// The agent said something about the running prompt: it took it.
    taken: bool,
}

const INITIALIZE: u64 = 1;
const SESSION: u64 = 2;

impl Codec for Acp {
    fn args(&mut self, _resume: Option<&str>) -> Vec<String> {
        Vec::new() // the configured command says how to start ACP mode (`gemini --acp`)
    }

    fn start(&mut self, cwd: &str, resume: Option<&str>) -> Vec<Value> {
        self.cwd = cwd.to_string();
        self.resume = resume.map(String::from);
        self.next_id = SESSION;
        vec![rpc(
            INITIALIZE,
            "initialize",
            json!({
                "protocolVersion": 1,
                "clientCapabilities": { "fs": { "readTextFile": false, "writeTextFile": false }, "terminal": false },
            }),
        )]
    }

    /// Gemini CLI 0.61 stores a session in a file named after the minute it was created, and
    /// `session/load` in that same minute starts that file afresh, wiping the history: wait for
    /// the minute to pass when the session's file says it is now.
    fn resume_delay(&self, resume: &str) -> std::time::Duration {
        let Some(home) = std::env::var_os("HOME") else {
            return std::time::Duration::ZERO;
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let minute = format_minute(now.as_secs());
        let prefix = resume.get(..8).unwrap_or(resume);
        let pattern = format!("{minute}-{prefix}.jsonl");
        let tmp = std::path::Path::new(&home).join(".gemini/tmp");
        let same_minute = std::fs::read_dir(tmp)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|project| std::fs::read_dir(project.path().join("chats")).ok())
            .flatten()
            .flatten()
            .any(|f| f.file_name().to_string_lossy().ends_with(&pattern));
        if same_minute {
            // One second past the minute, so the new file has another name.
            std::time::Duration::from_secs(61 - now.as_secs() % 60)
        } else {
            std::time::Duration::ZERO
        }
    }

    fn send(&mut self, text: &str) -> Vec<Value> {
        self.next_id += 1;
        self.prompt_id = Some(self.next_id);
        self.text.clear();
        self.taken = false;
        vec![rpc(
            self.next_id,
            "session/prompt",
            json!({ "sessionId": self.session_id, "prompt": [{ "type": "text", "text": text }] }),
        )]
    }

    fn read(&mut self, line: Value) -> Vec<Seen> {
        let method = line["method"].as_str().unwrap_or_default();
        if method.is_empty() {
            return self.response(&line);
        }
        if !line["id"].is_null() {
            return self.agent_request(method, &line);
        }
        if method == "session/update" {
            let mut seen = Vec::new();
            // The first word about the running prompt shows the agent took it.
            if self.prompt_id.is_some() && !self.taken {
                self.taken = true;
                seen.push(Seen::Taken);
            }
            seen.extend(self.update(&line["params"]["update"]));
            return seen;
        }
        vec![]
    }

    fn decide(&mut self, token: &Value, approved: bool) -> Vec<Value> {
        let kinds: &[&str] = if approved {
            &["allow_once", "allow_always"]
        } else {
            &["reject_once", "reject_always"]
        };
        let option = kinds.iter().find_map(|kind| {
            token["options"]
                .as_array()?
                .iter()
                .find(|o| o["kind"] == *kind)
                .and_then(|o| o["optionId"].as_str())
        });
        let outcome = match option {
            Some(id) => json!({ "outcome": "selected", "optionId": id }),
            // No option to reject with: cancelling the prompt is the protocol's denial.
            None => json!({ "outcome": "cancelled" }),
        };
        vec![rpc_result(&token["id"], json!({ "outcome": outcome }))]
    }

    fn answer(&mut self, token: &Value, answer: &str) -> Vec<Value> {
        // ACP has no question request; a permission option chosen by its name is the nearest.
        let option = token["options"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|o| o["name"] == answer || o["optionId"] == answer)
            .and_then(|o| o["optionId"].as_str());
        let outcome = match option {
            Some(id) => json!({ "outcome": "selected", "optionId": id }),
            None => json!({ "outcome": "cancelled" }),
        };
        vec![rpc_result(&token["id"], json!({ "outcome": outcome }))]
    }

    /// `session/cancel` (a notification): the prompt then ends with stopReason `cancelled`.
    fn interrupt(&mut self) -> Vec<Value> {
        vec![json!({ "jsonrpc": "2.0", "method": "session/cancel", "params": { "sessionId": self.session_id } })]
    }
}

/// The usage of one model request in Gemini CLI's telemetry (`gemini_cli.api_response`, one
/// per request: main turns, router and utility calls alike); anything else is not usage.
/// Gemini's input count includes the cached tokens and not the tool-use prompt; thinking is
/// billed as output.
pub fn telemetry_usage(record: &Value) -> Option<Usage> {
    let a = &record["attributes"];
    if a["event.name"] != "gemini_cli.api_response" {
        return None;
    }
    let n = |k: &str| a[k].as_u64().unwrap_or(0);
    let cached = n("cached_content_token_count");
    Some(Usage {
        input: n("input_token_count").saturating_sub(cached) + n("tool_token_count"),
        output: n("output_token_count") + n("thoughts_token_count"),
        cache_read: cached,
        cache_write: 0,
        model: a["model"].as_str().map(String::from),
    })
}

/// `YYYY-MM-DDTHH-MM` (UTC) of a Unix time, as Gemini names its session files.
fn format_minute(secs: u64) -> String {
    let (y, mo, d) = relay_bus::civil_from_days((secs / 86_400) as i64);
    let (h, m) = ((secs % 86_400) / 3600, (secs % 3600) / 60);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}-{m:02}")
}

impl Acp {
    fn response(&mut self, line: &Value) -> Vec<Seen> {
        let id = line["id"].as_u64().unwrap_or_default();
        if let Some(err) = line.get("error") {
            let e = format!("the agent refused request {id}: {}", err["message"]);
            return vec![Seen::Error(e.clone()), Seen::TurnDone { error: Some(e) }];
        }
        let result = &line["result"];
        match id {
            INITIALIZE => {
                let (method, params) = match &self.resume {
                    Some(session) => (
                        "session/load",
                        json!({ "sessionId": session, "cwd": self.cwd, "mcpServers": [] }),
                    ),
                    None => ("session/new", json!({ "cwd": self.cwd, "mcpServers": [] })),
                };
                vec![Seen::Write(rpc(SESSION, method, params))]
            }
            SESSION => {
                self.session_id = result["sessionId"]
                    .as_str()
                    .map(String::from)
                    .or_else(|| self.resume.clone())
                    .unwrap_or_default();
                vec![Seen::Ready {
                    cli_session: self.session_id.clone(),
                }]
            }
            id if Some(id) == self.prompt_id => {
                self.prompt_id = None;
                let mut seen = Vec::new();
                if !self.text.is_empty() {
                    seen.push(Seen::Text(std::mem::take(&mut self.text)));
                }
                // A rejected call gets no update from the agent: it ends here, not run.
                for (id, tool) in std::mem::take(&mut self.tools) {
                    seen.push(Seen::ToolCompleted {
                        id,
                        tool,
                        ok: false,
                        output: Some("not run".into()),
                    });
                }
                let tokens = &result["_meta"]["quota"]["token_count"];
                if tokens.is_object() {
                    seen.push(Seen::Usage(Usage {
                        input: tokens["input_tokens"].as_u64().unwrap_or(0),
                        output: tokens["output_tokens"].as_u64().unwrap_or(0),
                        cache_read: 0,
                        cache_write: 0,
                        model: result["_meta"]["quota"]["model_usage"][0]["model"]
                            .as_str()
                            .map(String::from),
                    }));
                }
                let stop = result["stopReason"].as_str().unwrap_or("end_turn");
                let error = (stop != "end_turn").then(|| format!("the turn stopped: {stop}"));
                seen.push(Seen::TurnDone { error });
                seen
            }
            _ => vec![],
        }
    }

    fn agent_request(&mut self, method: &str, line: &Value) -> Vec<Seen> {
        let p = &line["params"];
        match method {
            "session/request_permission" => {
                let call = &p["toolCall"];
                let kind = call["kind"].as_str().unwrap_or_default();
                let title = call["title"].as_str().unwrap_or_default().to_string();
                let tool = match kind {
                    "execute" => "Bash".to_string(),
                    "edit" => "Edit".to_string(),
                    "delete" => "Delete".to_string(),
                    other if !other.is_empty() => other.to_string(),
                    _ => "tool".to_string(),
                };
                let description = call["content"][0]["content"]["text"]
                    .as_str()
                    .unwrap_or(&title)
                    .to_string();
                // The request carries the pending call: it starts the tool call, unless an
                // update already did.
                let id = call["toolCallId"].as_str().unwrap_or_default().to_string();
                let mut seen = Vec::new();
                if !self.tools.contains_key(&id) {
                    self.tools.insert(id.clone(), tool.clone());
                    seen.push(Seen::ToolCalled {
                        id,
                        tool: tool.clone(),
                        input: call["rawInput"].clone(),
                    });
                }
                seen.push(Seen::Permission {
                    token: json!({ "id": line["id"], "options": p["options"] }),
                    ask: Ask {
                        command: (kind == "execute").then(|| title.clone()),
                        file_path: call["locations"][0]["path"].as_str().map(String::from),
                        tool,
                        description,
                    },
                });
                seen
            }
            other => vec![
                Seen::Error(format!("the agent asked {other}, which relay-mesh does not handle")),
                Seen::Write(
                    json!({ "jsonrpc": "2.0", "id": line["id"], "error": { "code": -32601, "message": format!("relay-mesh does not handle {other}") } }),
                ),
            ],
        }
    }

    fn update(&mut self, u: &Value) -> Vec<Seen> {
        match u["sessionUpdate"].as_str().unwrap_or_default() {
            "agent_message_chunk" => {
                // Gemini reports mode switches as agent text; they are not the model's words.
                if let Some(t) = u["content"]["text"]
                    .as_str()
                    .filter(|t| !t.starts_with("[MODE_UPDATE]"))
                {
                    self.text.push_str(t);
                }
                vec![]
            }
            "tool_call" => {
                let id = u["toolCallId"].as_str().unwrap_or_default().to_string();
                let tool = u["title"].as_str().unwrap_or_default().to_string();
                if self.tools.insert(id.clone(), tool.clone()).is_some() {
                    return vec![];
                }
                let mut seen = Vec::new();
                if !self.text.is_empty() {
                    seen.push(Seen::Text(std::mem::take(&mut self.text)));
                }
                seen.push(Seen::ToolCalled {
                    id,
                    tool,
                    input: u["rawInput"].clone(),
                });
                seen
            }
            "tool_call_update" => {
                let status = u["status"].as_str().unwrap_or_default();
                if status != "completed" && status != "failed" {
                    return vec![];
                }
                let id = u["toolCallId"].as_str().unwrap_or_default().to_string();
                let tool = self.tools.remove(&id).unwrap_or_default();
                let output = u["content"][0]["content"]["text"].as_str().map(String::from);
                vec![Seen::ToolCompleted {
                    id,
                    tool,
                    ok: status == "completed",
                    output,
                }]
            }
            _ => vec![],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(s: &str) -> Value {
        serde_json::from_str(s).unwrap()
    }

    fn ready() -> Acp {
        let mut a = Acp::default();
        a.start("/w", None);
        let seen = a.read(line(
            r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}"#,
        ));
        assert!(
            matches!(&seen[0], Seen::Write(v) if v["method"] == "session/new"),
            "{seen:?}"
        );
        let seen = a.read(line(r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s-1"}}"#));
        assert_eq!(
            seen,
            vec![Seen::Ready {
                cli_session: "s-1".into()
            }]
        );
        a
    }

    const PERMISSION: &str = r#"{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s-1","options":[{"optionId":"proceed_always","name":"Allow for this session","kind":"allow_always"},{"optionId":"proceed_once","name":"Allow","kind":"allow_once"},{"optionId":"cancel","name":"Reject","kind":"reject_once"}],"toolCall":{"toolCallId":"tc-1","status":"pending","title":"touch ran.txt","content":[],"locations":[],"kind":"execute"}}}"#;

    #[test]
    fn a_permission_request_starts_the_call_and_is_answered_with_allow_once_or_reject() {
        let mut a = ready();
        let seen = a.read(line(PERMISSION));
        assert!(matches!(&seen[0], Seen::ToolCalled { id, .. } if id == "tc-1"));
        let Seen::Permission { token, ask } = &seen[1] else {
            panic!("{seen:?}")
        };
        assert_eq!(ask.command.as_deref(), Some("touch ran.txt"));
        let allow = &a.decide(token, true)[0];
        assert_eq!(allow["id"], 0, "request ids start at 0");
        assert_eq!(allow["result"]["outcome"]["optionId"], "proceed_once");
        let reject = &a.decide(token, false)[0];
        assert_eq!(reject["result"]["outcome"]["optionId"], "cancel");
    }

    #[test]
    fn the_prompt_reply_ends_the_turn_with_its_text_usage_and_the_rejected_call_closed() {
        let mut a = ready();
        a.send("RUNTOOL");
        a.read(line(PERMISSION));
        let chunk = |t: &str| {
            line(&format!(
                r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s-1","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{t}"}}}}}}}}"#
            ))
        };
        a.read(chunk("[MODE_UPDATE] plan"));
        a.read(chunk("Tool finished. "));
        a.read(chunk("DONE."));
        let seen = a.read(line(
            r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","_meta":{"quota":{"token_count":{"input_tokens":3000,"output_tokens":1600},"model_usage":[{"model":"gemini-3.8-flash"}]}}}}"#,
        ));
        assert_eq!(seen[0], Seen::Text("Tool finished. DONE.".into()));
        assert!(matches!(&seen[1], Seen::ToolCompleted { id, ok: false, .. } if id == "tc-1"));
        assert!(matches!(&seen[2], Seen::Usage(u) if u.input == 3000 && u.output == 1600));
        assert_eq!(seen[3], Seen::TurnDone { error: None });
    }

    #[test]
    fn every_api_response_in_geminis_telemetry_is_a_requests_usage_with_cached_input_apart() {
        let router = line(
            r#"{"hrTime":[1,2],"attributes":{"event.name":"gemini_cli.api_response","model":"gemini-3.5-flash-lite","input_token_count":46,"output_token_count":4,"cached_content_token_count":6,"thoughts_token_count":0,"tool_token_count":0,"role":"utility_router"}}"#,
        );
        assert_eq!(
            telemetry_usage(&router),
            Some(Usage {
                input: 40,
                output: 4,
                cache_read: 6,
                cache_write: 0,
                model: Some("gemini-3.5-flash-lite".into())
            })
        );
        let request = line(r#"{"attributes":{"event.name":"gemini_cli.api_request","model":"m"}}"#);
        assert_eq!(telemetry_usage(&request), None);
        assert_eq!(telemetry_usage(&line(r#"{"resource":{},"scopeMetrics":[]}"#)), None);
    }

    #[test]
    fn gemini_session_files_are_named_after_the_utc_minute() {
        assert_eq!(format_minute(0), "1970-01-01T00-00");
        assert_eq!(format_minute(1_795_494_184), "2026-11-24T04-23");
        assert_eq!(format_minute(951_782_400), "2000-02-29T00-00");
    }
}
