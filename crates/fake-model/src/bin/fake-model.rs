//! `fake-model --listen 127.0.0.1:8765 [--script script.json]`: the scripted fake provider as a
//! process, printing every request it receives as one JSON line on stdout.
//! `fake-model --mcp-echo`: a stdio MCP server with one `echo` tool instead (for MCP configs in tests).

use std::net::SocketAddr;
use std::process::ExitCode;

use fake_model::{FakeModel, Script};

const USAGE: &str = "usage: fake-model [--listen 127.0.0.1:8765] [--script script.json] | fake-model --mcp-echo";

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fake-model: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), String> {
    let mut listen = "127.0.0.1:8765".to_string();
    let mut script = Script::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--listen" => listen = args.next().ok_or(USAGE)?,
            "--script" => {
                let path = args.next().ok_or(USAGE)?;
                let text = std::fs::read_to_string(&path).map_err(|e| format!("read {path}: {e}"))?;
                script = serde_json::from_str(&text).map_err(|e| format!("script {path}: {e}"))?;
            }
            "--mcp-echo" => {
                let stdin = std::io::stdin().lock();
                return fake_model::mcp::serve_echo(stdin, std::io::stdout().lock()).map_err(|e| e.to_string());
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    let addr: SocketAddr = listen.parse().map_err(|e| format!("--listen {listen}: {e}"))?;
    let model = FakeModel::bind(addr, script)
        .await
        .map_err(|e| format!("listen on {addr}: {e}"))?;
    model.echo_requests(true);
    eprintln!("fake-model: listening on {}", model.url());
    tokio::signal::ctrl_c().await.map_err(|e| e.to_string())?;
    Ok(())
}
