//! `/api/v1/mcp`: the mesh as an MCP server (Streamable HTTP, the official Rust SDK rmcp), for
//! an MCP client such as an IDE or an assistant to watch and steer agents.
//!
//! Stateless: every POST is answered on its own, so any gateway replica serves any request and
//! nothing lives in one replica's memory. Each tool makes the operation (`crate::ops`) of the
//! REST call of the same name, as the caller's key (its role and workspace), which the bearer
//! middleware put in the request's extensions and rmcp hands each tool with the HTTP request
//! parts.

use crate::auth::Principal;
use crate::ops::call;
use crate::{ApiError, AppState};
use relay_contracts::cost::ReportRequest;
use relay_contracts::permission::{self, AnswerRequest};
use relay_contracts::rpc;
use relay_contracts::session::{AgentListRequest, ListRequest, StatusFilter};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::schemars::{self, JsonSchema};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};
use std::future::Future;
use std::sync::Arc;

/// The service mounted at `/api/v1/mcp` (behind the bearer middleware).
pub fn service(state: AppState) -> StreamableHttpService<Tools, NeverSessionManager> {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_max_request_body_bytes(state.settings.body_limit_bytes)
        // Every request carries a bearer key, checked before rmcp sees it; the host name
        // proves nothing more.
        .disable_allowed_hosts();
    StreamableHttpService::new(
        move || Ok(Tools::new(state.clone())),
        Arc::new(NeverSessionManager::default()),
        config,
    )
}

#[derive(Clone)]
pub struct Tools {
    state: AppState,
    tool_router: ToolRouter<Self>,
}

#[derive(Deserialize, JsonSchema)]
struct ListSessionsArgs {
    /// `active` (the default), `closed`, `archived` or `all`.
    status: Option<String>,
    /// At most this many (1 to 500, default 50).
    limit: Option<i64>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct EventsArgs {
    session_id: String,
    /// Only events after this seq (a cursor from an earlier answer's `nextCursor`).
    #[schemars(range(min = 0))]
    after: Option<i64>,
    /// At most this many (1 to 1000, default 100).
    #[schemars(range(min = 1, max = 1000))]
    limit: Option<i64>,
}

/// Arguments a tool checks itself: its input schema is `T`'s, and arguments that do not fit it
/// are a tool error (`invalid_request: …`) the model can read and correct, where rmcp's own
/// parsing would end the call with a JSON-RPC error.
struct Checked<T>(Result<T, String>);

impl<T: JsonSchema> JsonSchema for Checked<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
}

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for Checked<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Ok(Checked(serde_json::from_value(v).map_err(|e| e.to_string())))
    }
}

impl<T> Checked<T> {
    fn args(self) -> Result<T, ApiError> {
        self.0.map_err(ApiError::Invalid)
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct SendArgs {
    session_id: String,
    /// The message, as a person would type it.
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct SpawnArgs {
    /// The kind of agent (a spawner's command name: `claude`, `codex`, `gemini`, …).
    cli: String,
    /// Its first message.
    task: Option<String>,
    /// A handle for it in the workspace (`@name`).
    handle: Option<String>,
    /// A title for its session.
    title: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct PendingArgs {
    /// Only this session's.
    session_id: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct DecideArgs {
    /// The request's id (from list_permissions).
    request_id: String,
    /// `approve` or `deny`.
    decision: String,
    /// Why, for the audit trail and the agent.
    reason: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct AnswerArgs {
    /// The question's id (from list_questions).
    question_id: String,
    answer: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct CostsArgs {
    /// Only this session's.
    session_id: Option<String>,
}

impl Tools {
    fn new(state: AppState) -> Tools {
        Tools {
            state,
            tool_router: Tools::tool_router(),
        }
    }

    /// Runs `work` as the request's caller and answers with its JSON, or its error as a tool
    /// error (the model reads it; a JSON-RPC error would end its turn).
    async fn run<T: serde::Serialize, F: Future<Output = Result<T, ApiError>>>(
        &self,
        parts: &axum::http::request::Parts,
        work: impl FnOnce(AppState) -> F,
    ) -> CallToolResult {
        let Some(p) = parts.extensions.get::<Principal>() else {
            return CallToolResult::error(vec![ContentBlock::text("unauthorized: no caller")]);
        };
        let result = relay_bus::context::act_as(p.ctx.clone(), work(self.state.clone())).await;
        match result.map(|v| serde_json::to_value(v).unwrap_or(Value::Null)) {
            Ok(v) => {
                let text = serde_json::to_string_pretty(&v).unwrap_or_default();
                let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
                if v.is_object() {
                    r.structured_content = Some(v);
                }
                r
            }
            // The error table's MCP column: the text starts with the code, and the structured
            // content is the envelope REST answers, so a client need not parse the text.
            Err(e) => {
                let mut r = CallToolResult::error(vec![ContentBlock::text(e.with_code())]);
                r.structured_content = serde_json::to_value(e.wire()).ok();
                r
            }
        }
    }
}

type Parts = Extension<axum::http::request::Parts>;

#[tool_router]
impl Tools {
    #[tool(description = "The workspace's sessions, newest first: id, title, status, agents.")]
    async fn list_sessions(
        &self,
        Extension(parts): Parts,
        Parameters(a): Parameters<ListSessionsArgs>,
    ) -> CallToolResult {
        self.run(&parts, |s| async move {
            let status = match a.status.as_deref() {
                None => None,
                Some(v) => Some(
                    serde_json::from_value::<StatusFilter>(json!(v))
                        .map_err(|_| ApiError::Invalid(format!("status {v:?}: active, closed, archived or all")))?,
                ),
            };
            let req = ListRequest {
                status,
                limit: Some(a.limit.unwrap_or(50)),
                ..Default::default()
            };
            call::<rpc::SessionList>(&s, &req).await
        })
        .await
    }

    #[tool(description = "The workspace's live agents: id, handle, CLI, status, session, capabilities.")]
    async fn list_agents(&self, Extension(parts): Parts) -> CallToolResult {
        self.run(&parts, |s| async move {
            call::<rpc::AgentList>(&s, &AgentListRequest::default()).await
        })
        .await
    }

    #[tool(
        description = "A session's recent events from the event log, oldest first, with their seq (pass the answer's nextCursor as `after` for the next page)."
    )]
    async fn session_events(
        &self,
        Extension(parts): Parts,
        Parameters(a): Parameters<Checked<EventsArgs>>,
    ) -> CallToolResult {
        self.run(&parts, |s| async move {
            let a = a.args()?;
            let limit = a.limit.unwrap_or(100);
            if !(1..=1000).contains(&limit) {
                return Err(ApiError::Invalid(format!("limit {limit}: 1 to 1000")));
            }
            if a.after.is_some_and(|after| after < 0) {
                return Err(ApiError::Invalid("after must be a seq, 0 or more".into()));
            }
            // An unknown session (or another workspace's) is not found, not an empty page.
            crate::ops::find_session(&s, a.session_id.clone()).await?;
            let query = crate::ops::events::EventsQuery {
                session_id: Some(a.session_id),
                cursor: a.after,
                limit: Some(limit),
                ..Default::default()
            };
            crate::ops::events::query(&s, query).await
        })
        .await
    }

    #[tool(description = "Send a message to a session's agents, as a person would type it.")]
    async fn send_message(&self, Extension(parts): Parts, Parameters(a): Parameters<SendArgs>) -> CallToolResult {
        self.run(&parts, |s| async move {
            let req: crate::ops::sessions::SendMessage =
                serde_json::from_value(json!({ "message": a.text })).map_err(|e| ApiError::Invalid(e.to_string()))?;
            crate::ops::sessions::send(&s, a.session_id, req).await
        })
        .await
    }

    #[tool(
        description = "Start an agent in a new session (optionally with a first task); answers once it is attached."
    )]
    async fn spawn_agent(&self, Extension(parts): Parts, Parameters(a): Parameters<SpawnArgs>) -> CallToolResult {
        self.run(&parts, |s| async move {
            let req = crate::ops::sessions::CreateSession {
                cli: Some(a.cli),
                task: a.task,
                agent: a.handle,
                title: a.title,
                ..Default::default()
            };
            crate::ops::sessions::create(&s, req).await
        })
        .await
    }

    #[tool(description = "Permission requests waiting for a decision (what an agent wants to run or change).")]
    async fn list_permissions(
        &self,
        Extension(parts): Parts,
        Parameters(a): Parameters<PendingArgs>,
    ) -> CallToolResult {
        self.run(&parts, |s| async move {
            let req = pending(a.session_id);
            call::<rpc::PermissionList>(&s, &req).await
        })
        .await
    }

    #[tool(description = "Approve or deny a pending permission request.")]
    async fn decide_permission(
        &self,
        Extension(parts): Parts,
        Parameters(a): Parameters<DecideArgs>,
    ) -> CallToolResult {
        self.run(&parts, |s| async move {
            let approved = match a.decision.as_str() {
                "approve" => true,
                "deny" => false,
                other => return Err(ApiError::Invalid(format!("decision {other:?}: approve or deny"))),
            };
            crate::ops::decide_permission(&s, a.request_id, approved, a.reason).await
        })
        .await
    }

    #[tool(description = "Questions agents asked that wait for an answer.")]
    async fn list_questions(&self, Extension(parts): Parts, Parameters(a): Parameters<PendingArgs>) -> CallToolResult {
        self.run(&parts, |s| async move {
            let req = pending(a.session_id);
            call::<rpc::QuestionList>(&s, &req).await
        })
        .await
    }

    #[tool(description = "Answer an agent's pending question.")]
    async fn answer_question(&self, Extension(parts): Parts, Parameters(a): Parameters<AnswerArgs>) -> CallToolResult {
        self.run(&parts, |s| async move {
            let req = AnswerRequest {
                question_id: a.question_id,
                answer: a.answer,
            };
            call::<rpc::QuestionAnswer>(&s, &req).await
        })
        .await
    }

    #[tool(description = "Token usage and estimated cost in USD, in total and by agent, session and model.")]
    async fn get_costs(&self, Extension(parts): Parts, Parameters(a): Parameters<CostsArgs>) -> CallToolResult {
        self.run(&parts, |s| async move {
            let req = ReportRequest {
                session: a.session_id,
                ..Default::default()
            };
            call::<rpc::CostReport>(&s, &req).await
        })
        .await
    }
}

fn pending(session_id: Option<String>) -> permission::ListRequest {
    permission::ListRequest {
        session_id,
        status: Some("pending".into()),
        limit: Some(100),
        ..Default::default()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Tools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("relay-mesh", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Watch and steer the agents of a relay-mesh workspace: list_sessions, list_agents, session_events, \
                 send_message, spawn_agent, list_permissions and decide_permission, list_questions and answer_question, \
                 get_costs. You act with the key you connected with: its workspace and role.",
            )
    }
}
