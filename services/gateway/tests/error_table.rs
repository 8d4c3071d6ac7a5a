//! One error table on every surface (docs/reference/subjects.md, "Error codes"): the same faults — an unknown id,
//! another workspace's id, a viewer changing something, an invalid request, a conflict (a live
//! session archived, a send to a closed session, a taken handle) — driven through REST,
//! gRPC (the generated relay-proto client), MCP (the MCP Python SDK), A2A (the A2A Python SDK)
//! and AG-UI (`@ag-ui/client` `HttpAgent`), each answer checked against the table below. What
//! it found when written: a taken handle was 503 `unavailable, retryable: true` ("the claude
//! agent exited before attaching"); gRPC `SessionService/Get` of an unknown or another
//! workspace's session answered OK `{}`; an A2A conflict was `-32603 Internal error`; an MCP
//! tool error said its code only in its text.

mod attack;
mod common;

use attack::{Holes, a2a_driver, agui_driver, mcp_driver, ok, session_with_agent};
use common::{Bearer, free_port};
use relay_proto::v1;
use relay_proto::v1::session_service_client::SessionServiceClient;
use serde_json::{Value, json};
use tonic::Code;
use tonic::transport::Channel;

const ROOT: &str = "error-table-root-token";

/// The table, as docs/reference/subjects.md "Error codes" states it, for the codes the faults give.
struct Row {
    code: &'static str,
    http: u16,
    grpc: Code,
    /// A2A: the HTTP status of the answer, and the JSON-RPC code when the answer is 200.
    a2a_http: u16,
    a2a_jsonrpc: Option<i64>,
}

const TABLE: &[Row] = &[
    Row {
        code: "not_found",
        http: 404,
        grpc: Code::NotFound,
        a2a_http: 200,
        a2a_jsonrpc: Some(-32001),
    },
    Row {
        code: "forbidden",
        http: 403,
        grpc: Code::PermissionDenied,
        a2a_http: 403,
        a2a_jsonrpc: None,
    },
    Row {
        code: "invalid_request",
        http: 400,
        grpc: Code::InvalidArgument,
        a2a_http: 200,
        a2a_jsonrpc: Some(-32602),
    },
    Row {
        code: "conflict",
        http: 409,
        grpc: Code::FailedPrecondition,
        a2a_http: 200,
        a2a_jsonrpc: Some(-32050),
    },
];

fn row(code: &str) -> &'static Row {
    TABLE.iter().find(|r| r.code == code).unwrap()
}

/// The faults, each with the code every surface must answer.
const UNKNOWN: (&str, &str) = ("an unknown id", "not_found");
const OTHER_WORKSPACE: (&str, &str) = ("another workspace's id", "not_found");
const VIEWER: (&str, &str) = ("a viewer changing something", "forbidden");
const INVALID: (&str, &str) = ("an invalid request", "invalid_request");
const ARCHIVE_LIVE: (&str, &str) = ("archiving a live session", "conflict");
const TO_CLOSED: (&str, &str) = ("a message to a closed session's agent", "conflict");
const TAKEN: (&str, &str) = ("a taken handle", "conflict");

struct World {
    m: common::Mesh,
    g: common::Gateway,
    _spawner: relay_testkit::ServiceProcess,
    admin: Bearer,
    viewer: Bearer,
    /// Workspace A's live session and its agent (handle [`A_AGENT`]).
    session: String,
    agent: String,
    /// A's closed session.
    closed: String,
    /// Workspace B's session and agent.
    b_session: String,
    b_agent: String,
}

const A_AGENT: &str = "table-a";
const B_AGENT: &str = "table-b";

async fn world() -> World {
    let m = common::mesh().await;
    let surfaced = std::env::temp_dir().join(format!("error-table-{}.log", free_port()));
    let spawner = common::spawner(&m, &surfaced).await;
    let g = common::gateway(&m, &[("RELAY_API_TOKEN", ROOT)]).await;
    let root = Bearer::new(&g, ROOT);
    let (status, body) = root.post("/api/v1/workspaces", json!({"name": "table-b-ws"})).await;
    ok(status, &body, "workspace B");
    let (_, b) = root.create_key("b-admin", "admin", Some("table-b-ws")).await;
    let (b_session, b_agent, _) = session_with_agent(&b, B_AGENT).await;
    let (_, admin) = root.create_key("a-admin", "admin", None).await;
    let (_, viewer) = root.create_key("a-viewer", "viewer", None).await;
    let (session, agent, _) = session_with_agent(&admin, A_AGENT).await;
    let (status, made) = admin.post("/api/v1/sessions", json!({"title": "closed"})).await;
    ok(status, &made, "a session to close");
    let closed = made["sessionId"].as_str().unwrap().to_string();
    let (status, body) = admin.post(&format!("/api/v1/sessions/{closed}/close"), json!({})).await;
    ok(status, &body, "closing it");
    World {
        m,
        g,
        _spawner: spawner,
        admin,
        viewer,
        session,
        agent,
        closed,
        b_session,
        b_agent,
    }
}

fn unknown_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// Checks an HTTP answer (REST, AG-UI) against the table: its status, and the envelope's code.
fn check_http(holes: &mut Holes, surface: &str, fault: (&str, &str), status: u16, body: &Value) {
    let want = row(fault.1);
    let code = body["error"]["code"].as_str();
    if status != want.http || code.is_some_and(|c| c != want.code) {
        holes.add(
            format!("{surface}: {}", fault.0),
            "",
            format!("HTTP {} {}", want.http, want.code),
            format!("HTTP {status} {body}"),
        );
    }
}

async fn rest(w: &World, holes: &mut Holes) {
    let (status, body) = w.admin.get(&format!("/api/v1/sessions/{}", unknown_id())).await;
    check_http(holes, "REST", UNKNOWN, status.as_u16(), &body);
    let (status, body) = w.admin.get(&format!("/api/v1/sessions/{}", w.b_session)).await;
    check_http(holes, "REST", OTHER_WORKSPACE, status.as_u16(), &body);
    let (status, body) = w
        .viewer
        .post(&format!("/api/v1/sessions/{}/close", w.session), json!({}))
        .await;
    check_http(holes, "REST", VIEWER, status.as_u16(), &body);
    let (status, body) = w.admin.get("/api/v1/sessions?status=sideways").await;
    check_http(holes, "REST", INVALID, status.as_u16(), &body);
    let (status, body) = w
        .admin
        .post(&format!("/api/v1/sessions/{}/archive", w.session), json!({}))
        .await;
    check_http(holes, "REST", ARCHIVE_LIVE, status.as_u16(), &body);
    let (status, body) = w
        .admin
        .post("/api/v1/sessions", json!({"cli": "claude", "agent": A_AGENT}))
        .await;
    check_http(holes, "REST", TAKEN, status.as_u16(), &body);
}

fn authed<T>(token: &str, msg: T) -> tonic::Request<T> {
    let mut r = tonic::Request::new(msg);
    r.metadata_mut()
        .insert("authorization", format!("Bearer {token}").parse().unwrap());
    r
}

fn check_grpc<T: std::fmt::Debug>(
    holes: &mut Holes,
    fault: (&str, &str),
    answer: Result<tonic::Response<T>, tonic::Status>,
) {
    let want = row(fault.1);
    let got = match &answer {
        Ok(r) => format!("OK {:?}", r.get_ref()),
        Err(s) => {
            let wire = s.metadata().get("relay-error-code").and_then(|v| v.to_str().ok());
            if s.code() == want.grpc && wire == Some(want.code) {
                return;
            }
            format!("{:?} relay-error-code {wire:?}: {}", s.code(), s.message())
        }
    };
    holes.add(
        format!("gRPC: {}", fault.0),
        "",
        format!("{:?} with relay-error-code {}", want.grpc, want.code),
        got,
    );
}

async fn grpc(w: &World, holes: &mut Holes) {
    let ch = Channel::from_shared(w.g.base.clone()).unwrap().connect().await.unwrap();
    let mut sessions = SessionServiceClient::new(ch);
    let admin = w.admin.token.as_str();
    let get = |id: &str| v1::SessionRef { session_id: id.into() };
    let answer = sessions.get(authed(admin, get(&unknown_id()))).await;
    check_grpc(holes, UNKNOWN, answer);
    let answer = sessions.get(authed(admin, get(&w.b_session))).await;
    check_grpc(holes, OTHER_WORKSPACE, answer);
    let close = |id: &str| v1::CloseRequest {
        session_id: id.into(),
        reason: None,
    };
    let answer = sessions.close(authed(&w.viewer.token, close(&w.session))).await;
    check_grpc(holes, VIEWER, answer);
    let list = v1::ListRequest {
        status: Some("sideways".into()),
        ..Default::default()
    };
    let answer = sessions.list(authed(admin, list)).await;
    check_grpc(holes, INVALID, answer);
    let answer = sessions.archive(authed(admin, get(&w.session))).await;
    check_grpc(holes, ARCHIVE_LIVE, answer);
}

/// An MCP tool error must be one (`isError`), say its code first in its text, and carry the
/// REST envelope as its structured content.
async fn mcp(w: &World, holes: &mut Holes) {
    let mut mcp = mcp_driver(&w.g.base);
    let calls: Vec<((&str, &str), &Bearer, &str, Value)> = vec![
        (
            UNKNOWN,
            &w.admin,
            "send_message",
            json!({"sessionId": unknown_id(), "text": "hello"}),
        ),
        (
            OTHER_WORKSPACE,
            &w.admin,
            "send_message",
            json!({"sessionId": w.b_session, "text": "hello"}),
        ),
        (
            VIEWER,
            &w.viewer,
            "send_message",
            json!({"sessionId": w.session, "text": "hello"}),
        ),
        (INVALID, &w.admin, "list_sessions", json!({"status": "sideways"})),
        (
            TO_CLOSED,
            &w.admin,
            "send_message",
            json!({"sessionId": w.closed, "text": "hello"}),
        ),
        (
            TAKEN,
            &w.admin,
            "spawn_agent",
            json!({"cli": "claude", "handle": A_AGENT}),
        ),
    ];
    for (fault, who, tool, args) in calls {
        let a = mcp.ask(json!({"key": who.token, "tool": tool, "args": args})).await;
        let want = fault.1;
        let fine = a["isError"] == true
            && a["text"].as_str().is_some_and(|t| t.starts_with(&format!("{want}: ")))
            && a["structured"]["error"]["code"] == want;
        if !fine {
            holes.add(
                format!("MCP {tool}: {}", fault.0),
                "",
                format!("a tool error {want}: …, structured {{error: {{code: {want}}}}}"),
                a.to_string(),
            );
        }
    }
}

/// An A2A answer: the table's HTTP status, and for a JSON-RPC error its code, with the relay
/// code in the error's data (A2A's `ErrorInfo`, which the SDK hands over as `data` for the codes
/// it knows) or, for a code it does not, first in the message.
fn check_a2a(holes: &mut Holes, fault: (&str, &str), method: &str, a: &Value) {
    let want = row(fault.1);
    let status = a["statuses"].as_array().and_then(|s| s.last()).and_then(Value::as_u64);
    let fine = match want.a2a_jsonrpc {
        None => status == Some(want.a2a_http as u64) && a["error"].is_string(),
        Some(code) => {
            status == Some(want.a2a_http as u64)
                && a["code"] == code
                && (a["data"]["code"] == want.code
                    || a["message"]
                        .as_str()
                        .is_some_and(|m| m.contains(&format!("{code}: {}: ", want.code))))
        }
    };
    if !fine {
        holes.add(
            format!("A2A {method}: {}", fault.0),
            "",
            format!("HTTP {} JSON-RPC {:?} {}", want.a2a_http, want.a2a_jsonrpc, want.code),
            a.to_string(),
        );
    }
}

fn a2a_send(who: &Bearer, url: String, text: &str) -> Value {
    json!({
        "op": "call", "key": who.token, "url": url, "method": "SendMessage",
        "params": {
            "message": {"messageId": unknown_id(), "role": "ROLE_USER", "parts": [{"text": text}]},
            "configuration": {"returnImmediately": true},
        },
    })
}

async fn a2a(w: &World, holes: &mut Holes, a2a: &mut attack::Driver) {
    let agent_url = |name: &str| format!("{}/api/v1/a2a/agents/{name}", w.g.base);
    let a = a2a.ask(a2a_send(&w.admin, agent_url("nobody-here"), "hello")).await;
    check_a2a(holes, UNKNOWN, "SendMessage", &a);
    let a = a2a.ask(a2a_send(&w.admin, agent_url(B_AGENT), "hello")).await;
    check_a2a(holes, OTHER_WORKSPACE, "SendMessage", &a);
    let a = a2a.ask(a2a_send(&w.admin, agent_url(&w.b_agent), "hello")).await;
    check_a2a(holes, OTHER_WORKSPACE, "SendMessage (by agent id)", &a);
    let a = a2a.ask(a2a_send(&w.viewer, agent_url(A_AGENT), "hello")).await;
    check_a2a(holes, VIEWER, "SendMessage", &a);
    // The workspace's endpoint lists one context's tasks: without contextId it is invalid.
    let list = json!({
        "op": "call", "key": w.admin.token, "url": format!("{}/api/v1/a2a", w.g.base),
        "method": "ListTasks", "params": {},
    });
    let a = a2a.ask(list).await;
    check_a2a(holes, INVALID, "ListTasks", &a);
}

/// Runs after A's session closed: its agent (by id) takes no message.
async fn a2a_to_closed(w: &World, holes: &mut Holes, a2a: &mut attack::Driver) {
    let url = format!("{}/api/v1/a2a/agents/{}", w.g.base, w.agent);
    let a = a2a.ask(a2a_send(&w.admin, url, "hello")).await;
    check_a2a(holes, TO_CLOSED, "SendMessage", &a);
}

/// AG-UI answers before its stream starts with the REST status; `HttpAgent` reports it.
fn check_agui(holes: &mut Holes, fault: (&str, &str), a: &Value) {
    let want = row(fault.1);
    let status = a["error"]["status"].as_u64();
    if status != Some(want.http as u64) {
        holes.add(
            format!("AG-UI run: {}", fault.0),
            "",
            format!("HTTP {} {}", want.http, want.code),
            a.to_string(),
        );
    }
}

fn agui_run(who: &Bearer, agent: &str, resume: Option<Value>) -> Value {
    let mut input = json!({
        "threadId": unknown_id(), "runId": unknown_id(),
        "messages": [{"id": unknown_id(), "role": "user", "content": "hello"}],
    });
    if let Some(r) = resume {
        input["resume"] = r;
    }
    json!({"key": who.token, "agent": agent, "input": input})
}

async fn agui(w: &World, holes: &mut Holes, agui: &mut attack::Driver) {
    let a = agui.ask(agui_run(&w.admin, "nobody-here", None)).await;
    check_agui(holes, UNKNOWN, &a);
    let a = agui.ask(agui_run(&w.admin, B_AGENT, None)).await;
    check_agui(holes, OTHER_WORKSPACE, &a);
    let a = agui.ask(agui_run(&w.viewer, A_AGENT, None)).await;
    check_agui(holes, VIEWER, &a);
    let resume = json!([{"interruptId": "bogus:1", "status": "resolved", "payload": {}}]);
    let a = agui.ask(agui_run(&w.admin, A_AGENT, Some(resume))).await;
    check_agui(holes, INVALID, &a);
}

/// The bus itself: a spawn naming a taken handle is refused as a conflict, not retryable.
async fn nats_taken(w: &World, holes: &mut Holes) {
    let (status, made) = w.admin.post("/api/v1/sessions", json!({"title": "spawn here"})).await;
    ok(status, &made, "a session to spawn in");
    let spawn = json!({"sessionId": made["sessionId"], "cli": "claude", "agentName": A_AGENT});
    match relay_testkit::call_json(&w.m.client, "agent.spawn", spawn).await {
        Err(e) if e.code().as_str() == "conflict" && !e.error.retryable => {}
        other => holes.add(
            "NATS agent.spawn: a taken handle",
            "",
            "conflict, not retryable",
            format!("{other:?}"),
        ),
    }
}

#[tokio::test]
async fn the_same_fault_answers_the_same_code_on_rest_grpc_mcp_a2a_and_ag_ui() {
    let w = world().await;
    let mut holes = Holes::default();
    let (mut a2a_client, mut agui_client) = (a2a_driver(&w.g.base), agui_driver(&w.g.base));
    rest(&w, &mut holes).await;
    grpc(&w, &mut holes).await;
    mcp(&w, &mut holes).await;
    a2a(&w, &mut holes, &mut a2a_client).await;
    agui(&w, &mut holes, &mut agui_client).await;
    nats_taken(&w, &mut holes).await;

    // A's session closed: its agent, named by id, takes no message (A2A and AG-UI).
    let (status, body) = w
        .admin
        .post(&format!("/api/v1/sessions/{}/close", w.session), json!({}))
        .await;
    ok(status, &body, "closing A's session");
    a2a_to_closed(&w, &mut holes, &mut a2a_client).await;
    let a = agui_client.ask(agui_run(&w.admin, &w.agent, None)).await;
    check_agui(&mut holes, TO_CLOSED, &a);
    holes.assert_none("the error table", 26);
}
