//! The MCP server's tools as an MCP client calls them, through the official MCP Python SDK
//! (`mcp` 2.3.0, driven a line at a time by tests/py/attack_mcp.py, as attack_protocols.rs
//! does): a call outside a tool's input schema, or naming nothing, is a tool error that says
//! so, never a page of nothing.

mod common;
use common::{Bearer, gateway, mesh};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const ROOT: &str = "mcp-tools-root-token";

/// The SDK's client: one request a line in, one answer a line out.
struct Mcp {
    _child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl Mcp {
    fn start(base: &str) -> Mcp {
        let python = relay_testkit::python_venv("mcp-2.3.0", &["mcp==2.3.0"]);
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/py/attack_mcp.py");
        let mut child = tokio::process::Command::new(python)
            .arg(script)
            .env("BASE", base)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        Mcp {
            stdin: child.stdin.take().unwrap(),
            lines: BufReader::new(child.stdout.take().unwrap()).lines(),
            _child: child,
        }
    }

    async fn ask(&mut self, req: Value) -> Value {
        self.stdin.write_all(format!("{req}\n").as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
        let line = tokio::time::timeout(Duration::from_secs(120), self.lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("no answer within 120 s to {req}"))
            .unwrap()
            .unwrap_or_else(|| panic!("the MCP client ended at {req}"));
        serde_json::from_str(&line).unwrap()
    }

    async fn call(&mut self, tool: &str, args: Value) -> Value {
        self.ask(json!({"key": ROOT, "tool": tool, "args": args})).await
    }
}

#[tokio::test]
async fn session_events_refuses_arguments_outside_its_schema_and_an_unknown_session_is_not_found() {
    let m = mesh().await;
    let g = gateway(&m, &[("RELAY_API_TOKEN", ROOT)]).await;
    let root = Bearer::new(&g, ROOT);
    let (_, created) = root.post("/api/v1/sessions", json!({"title": "watched"})).await;
    let session = created["sessionId"].as_str().unwrap().to_string();
    let mut mcp = Mcp::start(&g.base);

    // What the tool announces is what it keeps.
    let tools = mcp.ask(json!({"key": ROOT})).await;
    let tool = tools["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{tools}"))
        .iter()
        .find(|t| t["name"] == "session_events")
        .unwrap_or_else(|| panic!("{tools}"))
        .clone();
    let schema = &tool["inputSchema"];
    assert_eq!(schema["properties"]["limit"]["minimum"], 1, "{schema}");
    assert_eq!(schema["properties"]["limit"]["maximum"], 1000, "{schema}");
    assert_eq!(schema["additionalProperties"], false, "{schema}");

    let page = mcp
        .call("session_events", json!({"sessionId": session, "limit": 10}))
        .await;
    assert_eq!(page["isError"], false, "{page}");
    assert!(page["structured"]["events"].is_array(), "{page}");

    for (args, names) in [
        (json!({"sessionId": session, "limit": 0}), "limit"),
        (json!({"sessionId": session, "limit": 100000}), "limit"),
        (json!({"sessionId": session, "after": -1}), "after"),
        (json!({"sessionId": session, "verbose": true}), "verbose"),
        (json!({"limit": 10}), "sessionId"),
    ] {
        let refused = mcp.call("session_events", args.clone()).await;
        assert_eq!(refused["isError"], true, "{args}: {refused}");
        let text = refused["text"].as_str().unwrap_or_default();
        assert!(
            text.contains("invalid_request") && text.contains(names),
            "{args}: {refused}"
        );
    }

    let unknown = mcp
        .call("session_events", json!({"sessionId": "no-such-session"}))
        .await;
    assert_eq!(unknown["isError"], true, "{unknown}");
    let text = unknown["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("not_found") && text.contains("no-such-session"),
        "{unknown}"
    );
}
