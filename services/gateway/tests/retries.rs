//! A retried send is the same message, and answers what the first send did, at once, on every
//! surface that takes the client's message id: A2A `messageId` (through the official `a2a-sdk`,
//! blocking and streaming), REST, NATS and gRPC `session.sendMessage` `messageId`. A client that
//! lost the first reply retries: before, an A2A retry of a task that had ended waited for events
//! that had all happened (a blocking send until `run_timeout_ms`, a stream after its first
//! frame), and a session send retried once the session had closed was refused as a conflict.
//! "At once" is asserted as under a second: a bound that tells an answer from a hang, not a
//! timing.

mod attack;
mod common;

use common::{Gateway, Mesh, free_port, gateway, mesh};
use relay_proto::v1;
use relay_proto::v1::session_service_client::SessionServiceClient;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// What separates an answer from a hang (the retries used to wait 25 s and more).
const AT_ONCE: Duration = Duration::from_secs(1);

/// A mesh with the fake `claude` spawner, an open gateway, and a session with agent `handle`:
/// the session's id.
async fn with_agent(handle: &str) -> (Mesh, Gateway, relay_testkit::ServiceProcess, String) {
    let m = mesh().await;
    let surfaced = std::env::temp_dir().join(format!("retries-{}.log", free_port()));
    let spawner = common::spawner(&m, &surfaced).await;
    let g = gateway(&m, &[]).await;
    let (status, created) = g
        .post("/api/v1/sessions", json!({"cli": "claude", "agent": handle}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let session = created["sessionId"].as_str().unwrap().to_string();
    (m, g, spawner, session)
}

/// An A2A send of `text` as message `id` through the SDK's JSON-RPC transport: its answer
/// (`result`, or the error) and how long it took, as the driver measured it.
async fn a2a_send(a2a: &mut attack::Driver, url: &str, method: &str, id: &str, text: &str) -> (Value, Duration) {
    let answer = a2a
        .ask(json!({
            "op": "call",
            "key": null,
            "url": url,
            "method": method,
            "params": {"message": {"messageId": id, "role": "ROLE_USER", "parts": [{"text": text}]}},
            // A stream is read until it ends; a hang shows as the elapsed time.
            "wait": 60,
        }))
        .await;
    let elapsed = Duration::from_millis(answer["elapsedMs"].as_u64().unwrap_or(u64::MAX));
    (answer, elapsed)
}

fn state(task: &Value) -> &str {
    task["status"]["state"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn a_retried_a2a_send_answers_at_once_with_the_first_task_blocking_and_streaming() {
    let (_m, g, _spawner, _session) = with_agent("retry-worker").await;
    let mut a2a = attack::a2a_driver(&g.base);
    let url = format!("{}/api/v1/a2a/agents/retry-worker", g.base);

    // Blocking: the first send returns the task once the agent answered it.
    let (first, _) = a2a_send(&mut a2a, &url, "SendMessage", "retry-blocking-1", "hello").await;
    let task = &first["result"]["task"];
    assert_eq!(state(task), "TASK_STATE_COMPLETED", "{first}");
    let (retry, elapsed) = a2a_send(&mut a2a, &url, "SendMessage", "retry-blocking-1", "hello").await;
    assert!(elapsed < AT_ONCE, "the retry took {elapsed:?}: {retry}");
    assert_eq!(
        retry["result"], first["result"],
        "the retry answers the first send's task"
    );

    // Streaming: the retry streams what the first stream did, and ends.
    let (first, _) = a2a_send(&mut a2a, &url, "SendStreamingMessage", "retry-stream-1", "hello again").await;
    let frames = first["result"]["stream"].as_array().expect("a stream");
    let last = frames.last().expect("frames");
    assert_eq!(
        last["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
        "the first stream ends with the task completed: {first}"
    );
    let (retry, elapsed) = a2a_send(&mut a2a, &url, "SendStreamingMessage", "retry-stream-1", "hello again").await;
    assert!(elapsed < AT_ONCE, "the retried stream took {elapsed:?}: {retry}");
    assert_eq!(
        retry["result"], first["result"],
        "the retry streams the first send's updates"
    );

    // A blocking retry of the streamed send: the task as it ended.
    let (retry, elapsed) = a2a_send(&mut a2a, &url, "SendMessage", "retry-stream-1", "hello again").await;
    assert!(elapsed < AT_ONCE, "the retry took {elapsed:?}: {retry}");
    let task = &retry["result"]["task"];
    assert_eq!(state(task), "TASK_STATE_COMPLETED", "{retry}");
    assert_eq!(task["id"], last["statusUpdate"]["taskId"], "{retry}");
}

/// Runs `send` and returns its answer with how long it took.
async fn timed<T>(send: impl Future<Output = T>) -> (T, Duration) {
    let started = Instant::now();
    let answer = send.await;
    (answer, started.elapsed())
}

async fn grpc_send(sessions: &mut SessionServiceClient<tonic::transport::Channel>, session: &str, id: &str) -> Value {
    let text = prost_types::Value {
        kind: Some(prost_types::value::Kind::StringValue("over grpc".into())),
    };
    let r = sessions
        .send_message(v1::SendMessageRequest {
            session_id: session.into(),
            message: Some(text),
            message_id: Some(id.into()),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    json!({"messageId": r.message_id, "sessionId": r.session_id, "turnId": r.turn_id, "deliveryIds": r.delivery_ids})
}

#[tokio::test]
async fn a_retried_session_send_answers_at_once_with_the_first_result_over_rest_nats_and_grpc_even_once_the_session_closed()
 {
    let (m, g, _spawner, session) = with_agent("retry-rest").await;
    let path = format!("/api/v1/sessions/{session}/messages");
    let rest = |id: &str| json!({"message": format!("over rest {id}"), "messageId": id});
    let nats = |id: &str| json!({"sessionId": session, "message": "over nats", "messageId": id});
    let channel = tonic::transport::Channel::from_shared(g.base.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut sessions = SessionServiceClient::new(channel);

    let (status, rest_first) = g.post(&path, rest("retry-rest-1")).await;
    assert_eq!(status, StatusCode::OK, "{rest_first}");
    assert_eq!(
        rest_first["deliveryIds"].as_array().map(Vec::len),
        Some(1),
        "{rest_first}"
    );
    let nats_first = relay_testkit::expect_ok(&m.client, "session.sendMessage", nats("retry-nats-1")).await;
    let grpc_first = grpc_send(&mut sessions, &session, "retry-grpc-1").await;

    // Retried while the session is live, then once it closed (the messages were taken before).
    for when in ["live", "closed"] {
        if when == "closed" {
            let (status, closed) = g.post(&format!("/api/v1/sessions/{session}/close"), json!({})).await;
            assert_eq!(status, StatusCode::OK, "{closed}");
        }
        let ((status, again), elapsed) = timed(g.post(&path, rest("retry-rest-1"))).await;
        assert_eq!(status, StatusCode::OK, "REST retry, session {when}: {again}");
        assert_eq!(again, rest_first, "REST retry, session {when}");
        assert!(elapsed < AT_ONCE, "REST retry, session {when}: {elapsed:?}");

        let (again, elapsed) = timed(relay_testkit::expect_ok(
            &m.client,
            "session.sendMessage",
            nats("retry-nats-1"),
        ))
        .await;
        assert_eq!(again, nats_first, "NATS retry, session {when}");
        assert!(elapsed < AT_ONCE, "NATS retry, session {when}: {elapsed:?}");

        let (again, elapsed) = timed(grpc_send(&mut sessions, &session, "retry-grpc-1")).await;
        assert_eq!(again, grpc_first, "gRPC retry, session {when}");
        assert!(elapsed < AT_ONCE, "gRPC retry, session {when}: {elapsed:?}");
    }

    // A new message to the closed session is still refused: only a retry is answered.
    let (status, refused) = g.post(&path, rest("retry-rest-2")).await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
}
