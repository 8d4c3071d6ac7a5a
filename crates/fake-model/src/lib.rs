//! A scripted fake LLM provider on loopback that the real agent CLIs (Claude Code, Codex, Gemini CLI)
//! can be pointed at: Anthropic Messages, OpenAI Responses and Gemini generateContent, streaming and not.
//!
//! ```no_run
//! # async fn demo() {
//! use fake_model::{FakeModel, Script, Step};
//! let model = FakeModel::start(
//!     Script::new().on("RUNTOOL", [Step::shell("touch ran.txt").usage(1500, 800), Step::text("done").usage(100, 20)]),
//! )
//! .await;
//! let base_url = model.url(); // point the CLI here (see `clis`)
//! # }
//! ```

mod anthropic;
pub mod clis;
mod gemini;
pub mod mcp;
mod openai;
mod script;

pub use script::{DEFAULT_FALLBACK, Rule, Script, Step, Usage};

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::Response;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::oneshot;

/// Which provider API a request was addressed to (by path).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Api {
    Anthropic,
    OpenAi,
    Gemini,
    Other,
}

/// One request the fake received.
#[derive(Clone, Debug, Serialize)]
pub struct Recorded {
    pub api: Api,
    pub method: String,
    /// Path with the query, e.g. `/v1/messages?beta=true`.
    pub path: String,
    /// The JSON body; `null` when empty, a string when it was not JSON.
    pub body: Value,
    /// The request offered tools: a real turn of the agent, not a side call (title, router, summary).
    pub main: bool,
    /// The last user-typed text in the conversation, as the script saw it.
    pub user_text: Option<String>,
    /// The usage the fake reported in its answer (none: the request got no model answer).
    pub usage: Option<Usage>,
    /// Lowercased names; credentials are replaced by `<redacted>`.
    pub headers: Vec<(String, String)>,
}

/// The running server. Dropping it stops accepting connections.
pub struct FakeModel {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: Option<oneshot::Sender<()>>,
}

struct Shared {
    script: Mutex<Script>,
    log: Mutex<Vec<Recorded>>,
    /// The binary prints every request as a JSON line.
    echo: AtomicBool,
}

impl FakeModel {
    /// Starts on 127.0.0.1 with a free port.
    pub async fn start(script: Script) -> FakeModel {
        let addr = SocketAddr::from(([127, 0, 0, 1], 0));
        FakeModel::bind(addr, script)
            .await
            .expect("fake-model: bind 127.0.0.1:0")
    }

    /// Starts on `addr`, which must be a loopback address.
    pub async fn bind(addr: SocketAddr, script: Script) -> std::io::Result<FakeModel> {
        if !addr.ip().is_loopback() {
            return Err(std::io::Error::other(format!(
                "fake-model only listens on loopback, not {addr}"
            )));
        }
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            script: Mutex::new(script),
            log: Mutex::new(Vec::new()),
            echo: AtomicBool::new(false),
        });
        // Request bodies grow with the conversation; axum's default 2 MB limit would cut long sessions.
        let app = Router::new()
            .fallback(handle)
            .layer(DefaultBodyLimit::disable())
            .with_state(shared.clone());
        let (shutdown, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
                let _ = stopped.await;
            });
            if let Err(e) = serve.await {
                eprintln!("fake-model: server error: {e}");
            }
        });
        Ok(FakeModel {
            addr,
            shared,
            shutdown: Some(shutdown),
        })
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash or API prefix.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Everything received so far, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.shared.log).clone()
    }

    /// Only the requests that offered tools (the agent's real turns).
    pub fn main_requests(&self) -> Vec<Recorded> {
        self.requests().into_iter().filter(|r| r.main).collect()
    }

    /// The sum of the usage reported to every request so far: what a CLI was told it used.
    pub fn reported_usage(&self) -> Usage {
        self.requests()
            .iter()
            .filter_map(|r| r.usage)
            .fold(Usage::default(), |sum, u| sum + u)
    }

    /// The distinct user-typed texts seen in main requests, in first-seen order.
    pub fn user_texts(&self) -> Vec<String> {
        let mut texts: Vec<String> = Vec::new();
        for text in self.main_requests().into_iter().filter_map(|r| r.user_text) {
            if !texts.contains(&text) {
                texts.push(text);
            }
        }
        texts
    }

    /// Whether a user-typed text the model was sent contains `needle`.
    pub fn heard(&self, needle: &str) -> bool {
        self.user_texts().iter().any(|t| t.contains(needle))
    }

    /// Replaces the rules; requests already being answered keep the old ones.
    pub fn set_script(&self, script: Script) {
        *lock(&self.shared.script) = script;
    }

    /// Print each request as one JSON line on stdout (the binary's log).
    pub fn echo_requests(&self, on: bool) {
        self.shared.echo.store(on, Ordering::Relaxed);
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}

/// A poisoned lock only means a panic elsewhere; the data is still usable.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What an API module made of a request.
pub(crate) struct Outcome {
    pub main: bool,
    pub user_text: Option<String>,
    /// The usage the response reported (a model answer), none for anything else.
    pub usage: Option<Usage>,
    pub response: Response,
}

impl Outcome {
    fn side(response: Response) -> Outcome {
        Outcome {
            main: false,
            user_text: None,
            usage: None,
            response,
        }
    }
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path();
    let query = uri.query().unwrap_or("");
    let api = if path.starts_with("/v1/messages") {
        Api::Anthropic
    } else if path == "/v1/responses" || path.starts_with("/v1/models") {
        Api::OpenAi
    } else if path.starts_with("/v1beta/") {
        Api::Gemini
    } else {
        Api::Other
    };
    let parsed = if body.is_empty() {
        Ok(Value::Null)
    } else {
        serde_json::from_slice::<Value>(&body)
    };
    let script = lock(&shared.script).clone();
    let (body, outcome) = match parsed {
        Err(e) => {
            let text = String::from_utf8_lossy(&body).into_owned();
            (
                Value::String(text),
                Outcome::side(error(StatusCode::BAD_REQUEST, &format!("body is not JSON: {e}"))),
            )
        }
        Ok(value) => {
            let outcome = match api {
                Api::Anthropic => anthropic::handle(&method, path, &value, &script),
                Api::OpenAi => openai::handle(&method, path, &value, &script),
                Api::Gemini => gemini::handle(&method, path, query, &value, &script),
                Api::Other => None,
            };
            (
                value,
                outcome.unwrap_or_else(|| Outcome::side(not_found(&method, path))),
            )
        }
    };
    let recorded = Recorded {
        api,
        method: method.to_string(),
        path: uri
            .path_and_query()
            .map_or_else(|| path.to_string(), std::string::ToString::to_string),
        body,
        main: outcome.main,
        user_text: outcome.user_text,
        usage: outcome.usage,
        headers: headers
            .iter()
            .map(|(name, value)| {
                let name = name.as_str().to_ascii_lowercase();
                let secret = matches!(
                    name.as_str(),
                    "authorization" | "x-api-key" | "x-goog-api-key" | "proxy-authorization" | "cookie"
                );
                let value = if secret {
                    "<redacted>".into()
                } else {
                    String::from_utf8_lossy(value.as_bytes()).into()
                };
                (name, value)
            })
            .collect(),
    };
    if shared.echo.load(Ordering::Relaxed)
        && let Ok(line) = serde_json::to_string(&recorded)
    {
        println!("{line}");
    }
    lock(&shared.log).push(recorded);
    outcome.response
}

pub(crate) fn json_response(status: StatusCode, value: &Value) -> Response {
    let mut response = Response::new(Body::from(value.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

/// A whole SSE stream as one body: the clients parse events from the byte stream either way.
pub(crate) fn sse_response(events: String) -> Response {
    let mut response = Response::new(Body::from(events));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, header::HeaderValue::from_static("no-cache"));
    response
}

/// One SSE event; `name` None gives a data-only event (Gemini).
pub(crate) fn sse_event(out: &mut String, name: Option<&str>, data: &Value) {
    if let Some(name) = name {
        out.push_str("event: ");
        out.push_str(name);
        out.push('\n');
    }
    out.push_str("data: ");
    out.push_str(&data.to_string());
    out.push_str("\n\n");
}

pub(crate) fn error(status: StatusCode, message: &str) -> Response {
    json_response(
        status,
        &json!({"error": {"code": status.as_u16(), "type": "fake_model_error", "message": message}}),
    )
}

fn not_found(method: &Method, path: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        &format!("fake-model has no route {method} {path}"),
    )
}

pub(crate) fn new_id(prefix: &str) -> String {
    format!("{prefix}{}", uuid::Uuid::new_v4().simple())
}

/// The array at `value`, or nothing when it is missing or not an array: request data is never trusted.
pub(crate) fn array(value: Option<&Value>) -> &[Value] {
    value.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

/// Names of the tools in a request's tool list: `name`, else the tool's `type` (OpenAI built-ins).
pub(crate) fn tool_names(tools: &[Value]) -> Vec<String> {
    tools
        .iter()
        .filter_map(|t| t.get("name").or_else(|| t.get("type")).and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

/// Adds `extra`'s fields to the object `into` (both JSON objects; anything else is left alone).
pub(crate) fn merge_into(into: &mut Value, extra: Value) {
    if let (Some(into), Value::Object(extra)) = (into.as_object_mut(), extra) {
        into.extend(extra);
    }
}

/// A request body captured from a real CLI (`tests/fixtures/<name>`).
#[cfg(test)]
pub(crate) fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).expect("fixture exists")).expect("fixture is JSON")
}
