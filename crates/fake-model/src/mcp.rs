//! A minimal stdio MCP server with one tool, `echo` ({text} -> "echo: <text>"), so tests can make the
//! CLIs call an MCP tool without Python or Node helpers: `fake-model --mcp-echo`.

use std::io::{BufRead, Write};

use serde_json::{Value, json};

/// Serves newline-delimited JSON-RPC until `input` closes.
pub fn serve_echo(input: impl BufRead, mut output: impl Write) -> std::io::Result<()> {
    for line in input.lines() {
        let Ok(request) = serde_json::from_str::<Value>(&line?) else {
            continue;
        };
        // Notifications (no id) need no answer.
        let Some(id) = request.get("id").cloned() else { continue };
        let params = request.get("params").cloned().unwrap_or(Value::Null);
        let reply = match request.get("method").and_then(Value::as_str).unwrap_or_default() {
            "initialize" => json!({"result": {
                "protocolVersion": params.get("protocolVersion").cloned().unwrap_or(json!("2025-06-18")),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "fake-model-echo", "version": env!("CARGO_PKG_VERSION")},
            }}),
            "tools/list" => json!({"result": {"tools": [{
                "name": "echo", "description": "Echo the text back",
                "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            }]}}),
            "tools/call" => {
                let text = params
                    .pointer("/arguments/text")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                json!({"result": {"content": [{"type": "text", "text": format!("echo: {text}")}], "isError": false}})
            }
            "ping" => json!({"result": {}}),
            other => json!({"error": {"code": -32601, "message": format!("method not found: {other}")}}),
        };
        let mut reply = reply;
        reply["jsonrpc"] = json!("2.0");
        reply["id"] = id;
        writeln!(output, "{reply}")?;
        output.flush()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_initialize_list_and_call_and_ignores_notifications() {
        let input = [
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#,
            "not json",
        ]
        .join("\n");
        let mut out = Vec::new();
        serve_echo(input.as_bytes(), &mut out).expect("serves");
        let replies: Vec<Value> = String::from_utf8_lossy(&out)
            .lines()
            .map(|l| serde_json::from_str(l).expect("json line"))
            .collect();
        assert_eq!(replies.len(), 3);
        assert_eq!(replies[0]["result"]["protocolVersion"], "2025-06-18");
        assert_eq!(replies[1]["result"]["tools"][0]["name"], "echo");
        assert_eq!(replies[2]["result"]["content"][0]["text"], "echo: hi");
    }
}
