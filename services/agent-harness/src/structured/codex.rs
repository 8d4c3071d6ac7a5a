//! Codex's app-server protocol (`codex app-server`): JSON-RPC 2.0 over stdio. A thread is
//! the CLI session; each message is a `turn/start`; approvals and questions are requests from
//! the server that wait for our reply.

use super::{Codec, Seen, Usage, rpc, rpc_result};
use crate::prompts::Ask;
use serde_json::{Value, json};

#[derive(Default)]
pub struct Codex {
    next_id: u64,
    thread_id: String,
    /// The running turn (from turn/start's reply).
    turn_id: String,
    resume: Option<String>,
    cwd: String,
    /// The thread's cumulative usage when the current turn started: a turn costs the difference.
    total_at_turn_start: Totals,
    total: Totals,
    model: Option<String>,
}

#[derive(Default, Clone, Copy)]
struct Totals {
    input: u64,
    cached: u64,
    output: u64,
}

const INITIALIZE: u64 = 1;
const THREAD: u64 = 2;

impl Codec for Codex {
    fn args(&mut self, _resume: Option<&str>) -> Vec<String> {
        vec!["app-server".into()]
    }

    fn start(&mut self, cwd: &str, resume: Option<&str>) -> Vec<Value> {
        self.cwd = cwd.to_string();
        self.resume = resume.map(String::from);
        self.next_id = THREAD + 1;
        vec![rpc(
            INITIALIZE,
            "initialize",
            json!({ "clientInfo": { "name": "relay-mesh", "title": "relay-mesh agent harness", "version": env!("CARGO_PKG_VERSION") } }),
        )]
    }

    fn send(&mut self, text: &str) -> Vec<Value> {
        self.total_at_turn_start = self.total;
        let id = self.id();
        vec![rpc(
            id,
            "turn/start",
            json!({ "threadId": self.thread_id, "input": [{ "type": "text", "text": text }] }),
        )]
    }

    fn read(&mut self, line: Value) -> Vec<Seen> {
        let method = line["method"].as_str().unwrap_or_default();
        let has_id = !line["id"].is_null();
        if method.is_empty() {
            return self.response(&line);
        }
        if has_id {
            return self.server_request(method, &line);
        }
        self.notification(method, &line["params"])
    }

    fn decide(&mut self, token: &Value, approved: bool) -> Vec<Value> {
        let decision = if approved { "accept" } else { "decline" };
        vec![rpc_result(&token["id"], json!({ "decision": decision }))]
    }

    fn interrupt(&mut self) -> Vec<Value> {
        let id = self.id();
        vec![rpc(
            id,
            "turn/interrupt",
            json!({ "threadId": self.thread_id, "turnId": self.turn_id }),
        )]
    }

    fn answer(&mut self, token: &Value, answer: &str) -> Vec<Value> {
        // Every question of the request gets the one answer the user gave.
        let mut answers = serde_json::Map::new();
        for q in token["questions"].as_array().into_iter().flatten() {
            if let Some(id) = q["id"].as_str() {
                answers.insert(id.to_string(), json!({ "answers": [answer] }));
            }
        }
        vec![rpc_result(&token["id"], json!({ "answers": answers }))]
    }
}

impl Codex {
    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Replies to our requests: the handshake, then turn/start acknowledgements.
    fn response(&mut self, line: &Value) -> Vec<Seen> {
        let id = line["id"].as_u64().unwrap_or_default();
        if let Some(err) = line.get("error") {
            let e = format!("codex app-server refused request {id}: {}", err["message"]);
            return match id {
                // Without a thread there is no session: the turn loop would wait forever.
                INITIALIZE | THREAD => vec![Seen::Error(e.clone()), Seen::TurnDone { error: Some(e) }],
                _ => vec![Seen::Error(e.clone()), Seen::TurnDone { error: Some(e) }],
            };
        }
        match id {
            INITIALIZE => {
                let (method, params) = match &self.resume {
                    // The history stays with Codex; it is not needed here.
                    Some(thread) => ("thread/resume", json!({ "threadId": thread, "excludeTurns": true })),
                    None => (
                        "thread/start",
                        json!({ "cwd": self.cwd, "approvalPolicy": "on-request", "sandbox": "workspace-write" }),
                    ),
                };
                vec![
                    Seen::Write(json!({ "jsonrpc": "2.0", "method": "initialized" })),
                    Seen::Write(rpc(THREAD, method, params)),
                ]
            }
            THREAD => {
                let result = &line["result"];
                self.thread_id = result["thread"]["id"].as_str().unwrap_or_default().to_string();
                self.model = result["model"].as_str().map(String::from);
                vec![Seen::Ready {
                    cli_session: self.thread_id.clone(),
                }]
            }
            _ => {
                // A turn/start acknowledgement names the turn: `turn/interrupt` needs it.
                if let Some(turn) = line["result"]["turn"]["id"].as_str() {
                    self.turn_id = turn.to_string();
                }
                vec![Seen::Taken]
            }
        }
    }

    fn server_request(&mut self, method: &str, line: &Value) -> Vec<Seen> {
        let p = &line["params"];
        match method {
            "item/commandExecution/requestApproval" => {
                let command = p["commandActions"][0]["command"]
                    .as_str()
                    .or(p["command"].as_str())
                    .map(String::from);
                vec![Seen::Permission {
                    token: json!({ "id": line["id"] }),
                    ask: Ask {
                        tool: "Bash".into(),
                        command,
                        file_path: None,
                        description: p["reason"].as_str().unwrap_or("run a command").to_string(),
                    },
                }]
            }
            "item/fileChange/requestApproval" => vec![Seen::Permission {
                token: json!({ "id": line["id"] }),
                ask: Ask {
                    tool: "Edit".into(),
                    command: None,
                    file_path: p["grantRoot"].as_str().map(String::from),
                    description: p["reason"].as_str().unwrap_or("change files").to_string(),
                },
            }],
            "item/tool/requestUserInput" => {
                let q = &p["questions"][0];
                let options = super::labels(&q["options"]);
                vec![Seen::Question {
                    token: json!({ "id": line["id"], "questions": p["questions"] }),
                    question: q["question"].as_str().unwrap_or_default().to_string(),
                    options,
                }]
            }
            other => {
                // An unknown request must still be answered, or the turn hangs.
                vec![
                    Seen::Error(format!("codex asked {other}, which relay-mesh does not handle")),
                    Seen::Write(
                        json!({ "jsonrpc": "2.0", "id": line["id"], "error": { "code": -32601, "message": format!("relay-mesh does not handle {other}") } }),
                    ),
                ]
            }
        }
    }

    fn notification(&mut self, method: &str, p: &Value) -> Vec<Seen> {
        match method {
            "item/started" => {
                let item = &p["item"];
                match item["type"].as_str().unwrap_or_default() {
                    "commandExecution" => vec![Seen::ToolCalled {
                        id: item["id"].as_str().unwrap_or_default().to_string(),
                        tool: "Bash".into(),
                        input: json!({ "command": item["command"] }),
                    }],
                    "mcpToolCall" => vec![Seen::ToolCalled {
                        id: item["id"].as_str().unwrap_or_default().to_string(),
                        tool: format!(
                            "mcp__{}__{}",
                            item["server"].as_str().unwrap_or_default(),
                            item["tool"].as_str().unwrap_or_default()
                        ),
                        input: item["arguments"].clone(),
                    }],
                    _ => vec![],
                }
            }
            "item/completed" => {
                let item = &p["item"];
                let id = item["id"].as_str().unwrap_or_default().to_string();
                match item["type"].as_str().unwrap_or_default() {
                    "agentMessage" => item["text"]
                        .as_str()
                        .filter(|t| !t.is_empty())
                        .map(|t| vec![Seen::Text(t.to_string())])
                        .unwrap_or_default(),
                    "commandExecution" => {
                        let ok = item["status"] == "completed" && item["exitCode"].as_i64() == Some(0);
                        let mut seen = Vec::new();
                        if item["status"] == "completed" {
                            seen.push(Seen::Command {
                                command: item["command"].as_str().unwrap_or_default().to_string(),
                                exit_code: item["exitCode"].as_i64(),
                            });
                        }
                        seen.push(Seen::ToolCompleted {
                            id,
                            tool: "Bash".into(),
                            ok,
                            output: item["aggregatedOutput"].as_str().map(String::from),
                        });
                        seen
                    }
                    "fileChange" => item["changes"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|c| {
                            let operation = match c["kind"]["type"].as_str().or(c["kind"].as_str())? {
                                "add" => "create",
                                "delete" => "delete",
                                _ => "update",
                            };
                            Some(Seen::File {
                                path: c["path"].as_str()?.to_string(),
                                operation: operation.into(),
                            })
                        })
                        .collect(),
                    _ => vec![],
                }
            }
            "thread/tokenUsage/updated" => {
                let t = &p["tokenUsage"]["total"];
                self.total = Totals {
                    input: t["inputTokens"].as_u64().unwrap_or(0),
                    cached: t["cachedInputTokens"].as_u64().unwrap_or(0),
                    output: t["outputTokens"].as_u64().unwrap_or(0),
                };
                vec![]
            }
            "turn/completed" => {
                let (now, then) = (self.total, self.total_at_turn_start);
                self.total_at_turn_start = now;
                let error = p["turn"]["error"]["message"]
                    .as_str()
                    .map(String::from)
                    .or_else(|| (p["turn"]["status"] == "failed").then(|| "the turn failed".to_string()));
                // Codex's inputTokens include the cached ones (OpenAI's convention); relay-mesh
                // counts input apart from cache reads, so cached tokens are not counted twice.
                let uncached = |t: Totals| t.input.saturating_sub(t.cached);
                vec![
                    Seen::Usage(Usage {
                        input: uncached(now).saturating_sub(uncached(then)),
                        output: now.output.saturating_sub(then.output),
                        cache_read: now.cached.saturating_sub(then.cached),
                        cache_write: 0,
                        model: self.model.clone(),
                    }),
                    Seen::TurnDone { error },
                ]
            }
            "error" => vec![Seen::Error(
                p["error"]["message"].as_str().unwrap_or("codex error").to_string(),
            )],
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

    fn ready() -> Codex {
        let mut c = Codex::default();
        c.start("/w", None);
        let seen = c.read(line(r#"{"id":1,"result":{"userAgent":"codex"}}"#));
        assert!(
            matches!(&seen[1], Seen::Write(v) if v["method"] == "thread/start"),
            "{seen:?}"
        );
        let seen = c.read(line(r#"{"id":2,"result":{"thread":{"id":"th-1"},"model":"gpt-5.5"}}"#));
        assert_eq!(
            seen,
            vec![Seen::Ready {
                cli_session: "th-1".into()
            }]
        );
        c
    }

    #[test]
    fn a_resumed_session_is_a_thread_resume() {
        let mut c = Codex::default();
        c.start("/w", Some("th-9"));
        let seen = c.read(line(r#"{"id":1,"result":{}}"#));
        assert!(
            matches!(&seen[1], Seen::Write(v) if v["method"] == "thread/resume" && v["params"]["threadId"] == "th-9")
        );
    }

    #[test]
    fn approval_requests_are_permissions_answered_accept_or_decline() {
        let mut c = ready();
        let seen = c.read(line(
            r#"{"method":"item/commandExecution/requestApproval","id":0,"params":{"threadId":"th-1","reason":"Fake model wants to run this command","command":"/bin/bash -lc 'touch ran.txt'","commandActions":[{"type":"unknown","command":"touch ran.txt"}]}}"#,
        ));
        let Seen::Permission { token, ask } = &seen[0] else {
            panic!("{seen:?}")
        };
        assert_eq!(ask.command.as_deref(), Some("touch ran.txt"));
        assert_eq!(c.decide(token, true)[0]["result"]["decision"], "accept");
        assert_eq!(c.decide(token, false)[0]["result"]["decision"], "decline");
        assert_eq!(c.decide(token, false)[0]["id"], 0);
    }

    #[test]
    fn a_turn_costs_the_growth_of_the_thread_total() {
        let mut c = ready();
        let usage = |input: u64, output: u64| {
            line(&format!(
                r#"{{"method":"thread/tokenUsage/updated","params":{{"tokenUsage":{{"total":{{"inputTokens":{input},"cachedInputTokens":0,"outputTokens":{output}}}}}}}}}"#
            ))
        };
        let done = || line(r#"{"method":"turn/completed","params":{"turn":{"status":"completed"}}}"#);
        c.send("one");
        c.read(usage(1500, 800));
        let first = c.read(done());
        assert!(
            matches!(&first[0], Seen::Usage(u) if u.input == 1500 && u.output == 800),
            "{first:?}"
        );
        c.send("two");
        c.read(usage(1600, 820));
        let second = c.read(done());
        assert!(
            matches!(&second[0], Seen::Usage(u) if u.input == 100 && u.output == 20),
            "{second:?}"
        );
        assert_eq!(second[1], Seen::TurnDone { error: None });
    }

    #[test]
    fn cached_input_is_counted_once_as_cache_reads_not_again_as_input() {
        let mut c = ready();
        c.send("one");
        c.read(line(
            r#"{"method":"thread/tokenUsage/updated","params":{"tokenUsage":{"total":{"inputTokens":3816,"cachedInputTokens":159,"outputTokens":100}}}}"#,
        ));
        let seen = c.read(line(
            r#"{"method":"turn/completed","params":{"turn":{"status":"completed"}}}"#,
        ));
        let Seen::Usage(u) = &seen[0] else { panic!("{seen:?}") };
        assert_eq!((u.input, u.cache_read, u.output), (3657, 159, 100));
        assert_eq!(u.input + u.cache_read + u.output, 3916, "the thread's total, once");
    }

    #[test]
    fn an_unknown_server_request_is_answered_with_an_error_not_left_hanging() {
        let mut c = ready();
        let seen = c.read(line(r#"{"method":"item/somethingNew","id":7,"params":{}}"#));
        assert!(
            matches!(&seen[1], Seen::Write(v) if v["id"] == 7 && v["error"]["code"] == -32601),
            "{seen:?}"
        );
    }
}
