//! `relay-mcp --socket PATH`: the relay tools as an MCP stdio server (the official Rust SDK,
//! rmcp), for a CLI its harness started. Each tool call goes to the harness on its socket; the
//! harness makes the bus call as its agent (see `agent_harness::relay`). It holds no credential:
//! the harness answers only processes of its own CLI.
//!
//! `relay-mcp --socket PATH --call TOOL [ARGS_JSON]`: one tool call (`who`, `send` …), its
//! answer on stdout; exit status 1 when the harness refuses it.

use agent_harness::relay::{ToolCall, ask};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig,
};
use rmcp::schemars::{self, JsonSchema};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::path::PathBuf;

#[derive(Clone)]
struct RelayTools {
    socket: PathBuf,
    tool_router: ToolRouter<Self>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct SendArgs {
    /// `@handle` (a direct message), `#channel`, or a list of handles (a group message).
    to: Value,
    /// The message.
    text: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct ReplyArgs {
    /// What you answer: the message id from a relay message's last line. Default: the relay
    /// message you got last.
    message_id: Option<String>,
    text: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct ChannelArgs {
    /// A channel to join first (`#ops`).
    join: Option<String>,
    /// A channel to leave first.
    leave: Option<String>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct InvokeArgs {
    /// The agent that exposes it (`@handle`).
    agent: String,
    /// The action's name (see relay_actions).
    action: String,
    /// The input, as the action's input schema asks.
    input: Option<serde_json::Map<String, Value>>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct VoteArgs {
    /// The proposal you were asked about (its id is in the relay message).
    proposal_id: String,
    /// One of its options.
    choice: String,
    /// Why, in a sentence (others see it with your vote).
    reason: Option<String>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct AnswerArgs {
    /// The invocation id from the action call you got.
    invocation_id: String,
    /// The action's result, as its output schema says.
    output: Option<Value>,
    /// Why you could not do it (instead of output).
    error: Option<String>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct ActionsArgs {
    /// Only this agent's actions (`@handle`).
    agent: Option<String>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct MapReduceArgs {
    /// What every worker does; each gets it with one item.
    task: String,
    /// The items, one worker each (1 to 50).
    items: Vec<String>,
    /// The kind of agent to spawn for each item (e.g. `claude`).
    cli: String,
    /// Workers at once (default: one per item, at most 10).
    max_workers: Option<u32>,
    /// How long one worker may take, in seconds (default and most: 600).
    timeout_secs: Option<u32>,
}

impl RelayTools {
    async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        let answer = ask(
            &self.socket,
            &ToolCall {
                tool: tool.into(),
                args,
            },
        )
        .await;
        let content = vec![ContentBlock::text(answer.text)];
        if answer.ok {
            CallToolResult::success(content)
        } else {
            CallToolResult::error(content)
        }
    }
}

#[tool_router]
impl RelayTools {
    #[tool(
        description = "Send a message through the relay to another agent (@handle), a channel (#name) or several agents (a list of handles). They get it in their own session."
    )]
    async fn relay_send(&self, Parameters(a): Parameters<SendArgs>) -> CallToolResult {
        self.call("send", json!({"to": a.to, "text": a.text})).await
    }

    #[tool(description = "Reply to a relay message you received (in its thread): everyone in the thread gets it.")]
    async fn relay_reply(&self, Parameters(a): Parameters<ReplyArgs>) -> CallToolResult {
        self.call("reply", json!({"messageId": a.message_id, "text": a.text}))
            .await
    }

    #[tool(
        description = "Read relay messages that arrived while you were busy (each is then delivered here, not typed in later)."
    )]
    async fn relay_inbox(&self) -> CallToolResult {
        self.call("inbox", json!({})).await
    }

    #[tool(
        description = "Delegate: spawn one worker agent per item in your session, send each the task and its item as a relay message from you, and return their relay_reply answers (in item order) once all are done. Workers are stopped afterwards. Only agents allowed to delegate may use it."
    )]
    async fn relay_map_reduce(&self, Parameters(a): Parameters<MapReduceArgs>) -> CallToolResult {
        self.call("map_reduce", serde_json::to_value(&a).unwrap_or_default())
            .await
    }

    #[tool(
        description = "The actions other agents expose that you may invoke: who serves each, its name, description and input schema."
    )]
    async fn relay_actions(&self, Parameters(a): Parameters<ActionsArgs>) -> CallToolResult {
        self.call("actions", json!({"agent": a.agent})).await
    }

    #[tool(
        description = "Invoke an action another agent exposes (see relay_actions): the mesh checks your input against its schema, runs it on that agent and returns its output."
    )]
    async fn relay_invoke(&self, Parameters(a): Parameters<InvokeArgs>) -> CallToolResult {
        self.call(
            "invoke",
            json!({"agent": a.agent, "action": a.action, "input": a.input}),
        )
        .await
    }

    #[tool(
        description = "Vote on a proposal you were asked about in a relay message: one vote, one of its options; the proposal resolves when an option reaches its quorum."
    )]
    async fn relay_vote(&self, Parameters(a): Parameters<VoteArgs>) -> CallToolResult {
        self.call("vote", serde_json::to_value(&a).unwrap_or_default()).await
    }

    #[tool(
        description = "Answer an action call you got (\"Action call: …\"): its invocationId and your output, or an error if you could not do it. The caller gets it as the action's result."
    )]
    async fn relay_answer(&self, Parameters(a): Parameters<AnswerArgs>) -> CallToolResult {
        self.call("answer", serde_json::to_value(&a).unwrap_or_default()).await
    }

    #[tool(description = "Who is in the workspace: every live agent's handle, CLI and status.")]
    async fn relay_who(&self) -> CallToolResult {
        self.call("who", json!({})).await
    }

    #[tool(description = "The workspace's channels and their members; join or leave one first if asked.")]
    async fn relay_channels(&self, Parameters(a): Parameters<ChannelArgs>) -> CallToolResult {
        self.call("channels", json!({"join": a.join, "leave": a.leave})).await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for RelayTools {
    /// The tools, once the harness knows the CLI has them: it holds the first message till then.
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let listed = ToolCall {
            tool: "listed".into(),
            args: json!({}),
        };
        ask(&self.socket, &listed).await;
        Ok(ListToolsResult::with_all_items(self.tool_router.list_all()))
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("relay", env!("CARGO_PKG_VERSION")))
            .with_instructions("Talk to the other agents of this relay-mesh workspace: relay_send, relay_reply, relay_inbox, relay_who, relay_channels, relay_actions, relay_invoke, relay_answer (action calls you get), relay_vote; relay_map_reduce delegates work to agents you spawn.")
    }
}

/// `relay-mcp --socket PATH [--call TOOL [ARGS_JSON]]`
#[derive(clap::Parser)]
#[command(
    name = "relay-mcp",
    version,
    args_override_self = true,
    about = "The relay tools as an MCP stdio server for the agent CLI its harness started."
)]
struct Args {
    /// The harness's relay tools socket.
    #[arg(long, value_name = "PATH")]
    socket: PathBuf,
    /// Calls TOOL once with ARGS_JSON (default `{}`) and prints the answer, instead of serving MCP.
    #[arg(long, value_name = "TOOL")]
    call: Option<String>,
    /// The arguments of `--call`, a JSON object.
    #[arg(requires = "call", value_name = "ARGS_JSON", value_parser = json_value)]
    args: Option<serde_json::Value>,
}

fn json_value(s: &str) -> Result<serde_json::Value, String> {
    serde_json::from_str(s).map_err(|e| e.to_string())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    use clap::Parser;
    let args = Args::parse();
    if let Some(tool) = args.call {
        let call = ToolCall {
            tool,
            args: args.args.unwrap_or_else(|| json!({})),
        };
        let answer = ask(&args.socket, &call).await;
        println!("{}", answer.text);
        return if answer.ok {
            std::process::ExitCode::SUCCESS
        } else {
            std::process::ExitCode::FAILURE
        };
    }
    let socket = args.socket;
    // The harness holds its CLI's first message for the tools' listing only once it knows the
    // CLI started this bridge.
    let started = ToolCall {
        tool: "started".into(),
        args: json!({}),
    };
    ask(&socket, &started).await;
    let tools = RelayTools {
        socket,
        tool_router: RelayTools::tool_router(),
    };
    match tools.serve(rmcp::transport::stdio()).await {
        Ok(running) => {
            let _ = running.waiting().await;
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("relay-mcp: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    /// The harness declares the relay tools a CLI was given (AG-UI `custom.relayMesh.relayTools`,
    /// discovery.rs): exactly the tools this server lists.
    #[test]
    fn the_tools_listed_are_the_relay_tools_the_harness_declares() {
        let mut listed: Vec<String> = super::RelayTools::tool_router()
            .list_all()
            .into_iter()
            .map(|t| t.name.to_string())
            .collect();
        listed.sort();
        let mut declared = agent_harness::discovery::RELAY_TOOLS.to_vec();
        declared.sort();
        assert_eq!(listed, declared);
    }
}
