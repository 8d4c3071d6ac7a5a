//! The gateway's gRPC side over real HTTP/2, with the generated relay-proto clients, in front of
//! the real mesh on a private NATS and a fresh database.

mod common;

use common::{Gateway, Mesh, gateway, mesh};
use relay_proto::v1;
use relay_proto::v1::cost_service_client::CostServiceClient;
use relay_proto::v1::event_service_client::EventServiceClient;
use relay_proto::v1::permission_service_client::PermissionServiceClient;
use relay_proto::v1::session_service_client::SessionServiceClient;
use std::time::Duration;
use tonic::transport::Channel;
use tonic::{Code, Request};

/// Sessions of `default` for the events appended below: a caller's events may name only
/// sessions it can see.
async fn create_sessions(m: &Mesh, ids: &[&str]) {
    for id in ids {
        relay_testkit::expect_ok(&m.client, "session.create", serde_json::json!({"sessionId": id})).await;
    }
}

async fn channel(g: &Gateway) -> Channel {
    Channel::from_shared(g.base.clone()).unwrap().connect().await.unwrap()
}

fn payload(n: usize) -> prost_types::Struct {
    let number = prost_types::Value {
        kind: Some(prost_types::value::Kind::NumberValue(n as f64)),
    };
    prost_types::Struct {
        fields: [("n".to_string(), number)].into(),
    }
}

/// Appends `n` events through `EventService.Append`; returns their seqs.
async fn append(events: &mut EventServiceClient<Channel>, session: &str, kind: &str, n: usize) -> Vec<i64> {
    let batch = (0..n)
        .map(|i| v1::NewEvent {
            r#type: kind.into(),
            session_id: Some(session.into()),
            agent_name: Some("agent-1".into()),
            payload: Some(payload(i)),
            ..Default::default()
        })
        .collect();
    let r = events
        .append(v1::AppendRequest { events: batch })
        .await
        .unwrap()
        .into_inner();
    r.appended.iter().map(|a| a.seq).collect()
}

/// The next `n` events of a Subscribe stream, failing after 20 s of silence.
async fn take(stream: &mut tonic::Streaming<v1::Event>, n: usize) -> Vec<v1::Event> {
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let next = tokio::time::timeout(Duration::from_secs(20), stream.message())
            .await
            .unwrap_or_else(|_| panic!("only {} of {n} events arrived", out.len()));
        out.push(next.unwrap().expect("the stream does not end"));
    }
    out
}

fn seqs(events: &[v1::Event]) -> Vec<i64> {
    events.iter().map(|e| e.seq).collect()
}

#[tokio::test]
async fn unary_rpcs_reach_the_services_and_bus_errors_become_grpc_codes() {
    let m: Mesh = mesh().await;
    let g = gateway(&m, &[]).await;
    let ch = channel(&g).await;
    let mut sessions = SessionServiceClient::new(ch.clone());

    let created = sessions
        .create(v1::CreateRequest {
            title: Some("over grpc".into()),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let got = sessions
        .get(v1::SessionRef {
            session_id: created.session_id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .session
        .expect("the session exists");
    assert_eq!(got.session_id, created.session_id);
    assert_eq!(got.status, "active");
    assert_eq!(got.title.as_deref(), Some("over grpc"));
    assert!(
        got.created_at > 1_700_000_000_000,
        "int64 survives the JSON bridge: {}",
        got.created_at
    );

    let listed = sessions.list(v1::ListRequest::default()).await.unwrap().into_inner();
    assert_eq!(listed.total, 1);
    assert_eq!(listed.sessions[0].session_id, created.session_id);

    // Same session, closed over gRPC, seen over REST.
    sessions
        .close(v1::CloseRequest {
            session_id: created.session_id.clone(),
            reason: Some("done".into()),
        })
        .await
        .unwrap();
    let (_, rest) = g.get(&format!("/api/v1/sessions/{}", created.session_id)).await;
    assert_eq!(rest["status"], "closed", "{rest}");

    // Bus error codes map to gRPC codes; the wire code rides along as metadata.
    let missing = sessions
        .resume(v1::SessionRef {
            session_id: "no-such-session".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), Code::NotFound, "{missing:?}");
    assert_eq!(missing.metadata().get("relay-error-code").unwrap(), "not_found");
    let invalid = sessions
        .list(v1::ListRequest {
            status: Some("sideways".into()),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(invalid.code(), Code::InvalidArgument, "{invalid:?}");
    assert_eq!(invalid.metadata().get("relay-error-code").unwrap(), "invalid_request");

    let pending = PermissionServiceClient::new(ch.clone())
        .list(v1::PermissionListRequest {
            agent_id: Some("nobody".into()),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(pending.permissions.is_empty());
    let models = CostServiceClient::new(ch.clone())
        .models(v1::ModelsRequest {})
        .await
        .unwrap()
        .into_inner();
    assert!(!models.models.is_empty() && !models.source.is_empty(), "{models:?}");

    // An event the log refuses: the bus error's details travel as binary metadata.
    let mut events = EventServiceClient::new(ch.clone());
    let refused = events
        .append(v1::AppendRequest {
            events: vec![v1::NewEvent {
                r#type: "message.sent".into(),
                ..Default::default()
            }],
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::InvalidArgument);
    let details = refused.metadata().get_bin("relay-error-details-bin").unwrap();
    let details: serde_json::Value = serde_json::from_slice(&details.to_bytes().unwrap()).unwrap();
    assert!(details.to_string().contains("message.sent"), "{details}");
    // Repeated fields cannot be absent in proto3: an empty filter list is no filter.
    create_sessions(&m, &["s1"]).await;
    let seq = append(&mut events, "s1", "test.tick", 2).await;
    let page = events.query(v1::QueryRequest::default()).await.unwrap().into_inner();
    // (The registry's own session events may land after these: it forwards them later.)
    let got = seqs(&page.events);
    assert!(seq.iter().all(|s| got.contains(s)), "{seq:?} not all in {got:?}");

    // A request that is not the rpc's message is refused, not forwarded.
    let garbage = tonic::client::Grpc::new(ch.clone());
    let status = raw_call(garbage, "/relay.v1.SessionService/Get", vec![0xff, 0xff, 0xff]).await;
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
}

/// Sends raw bytes as the request message of `path`.
async fn raw_call(mut grpc: tonic::client::Grpc<Channel>, path: &'static str, body: Vec<u8>) -> tonic::Status {
    grpc.ready().await.unwrap();
    // Vec<u8> is google.protobuf.BytesValue: field 1 holds the bytes, which a SessionRef reads
    // as its string field session_id, and 0xff is not UTF-8.
    let codec = tonic_prost::ProstCodec::<Vec<u8>, ()>::default();
    grpc.unary(Request::new(body), path.parse().unwrap(), codec)
        .await
        .unwrap_err()
}

#[tokio::test]
async fn subscribe_replays_then_streams_live_filtered_and_resumes_after_seq_without_gap_or_duplicate() {
    let m = mesh().await;
    create_sessions(&m, &["s1", "s2", "s3"]).await;
    let g = gateway(&m, &[]).await;
    let ch = channel(&g).await;
    let mut events = EventServiceClient::new(ch.clone());

    let before = append(&mut events, "s1", "test.tick", 50).await;
    append(&mut events, "s2", "test.tick", 10).await;

    // Replay from the start of s1's events, filtered to session s1.
    let mut stream = events
        .subscribe(v1::SubscribeRequest {
            session_id: Some("s1".into()),
            after_seq: Some(before[0] - 1),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let replayed = take(&mut stream, 50).await;
    assert_eq!(seqs(&replayed), before);
    assert_eq!(
        replayed[7].payload.as_ref().unwrap().fields["n"],
        payload(7).fields["n"]
    );

    // Live: more events for s1 and s2 arrive in batches while the stream is open.
    let writer = {
        let mut events = events.clone();
        tokio::spawn(async move {
            let mut s1 = Vec::new();
            for _ in 0..10 {
                s1.extend(append(&mut events, "s1", "test.tick", 10).await);
                append(&mut events, "s2", "test.tick", 2).await;
            }
            s1
        })
    };
    let live = take(&mut stream, 40).await;
    drop(stream);
    let written = writer.await.unwrap();
    assert_eq!(
        seqs(&live),
        written[..40].to_vec(),
        "live events of s1, in order, none twice"
    );
    assert!(live.iter().all(|e| e.session_id.as_deref() == Some("s1")));

    // Resume after the last seq received: the rest, no gap, no duplicate.
    let mut resumed = events
        .subscribe(v1::SubscribeRequest {
            session_id: Some("s1".into()),
            after_seq: Some(live.last().unwrap().seq),
            since: Some(0), // after_seq wins
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(seqs(&take(&mut resumed, 60).await), written[40..].to_vec());

    // A type filter with no replay point starts live.
    let mut typed = events
        .subscribe(v1::SubscribeRequest {
            types: vec!["test.tool".into()],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    // No pause: the stream starts at the head as of the subscribe call, so events written
    // once it has answered are all delivered.
    append(&mut events, "s3", "test.tick", 5).await;
    let tools = append(&mut events, "s3", "test.tool", 3).await;
    assert_eq!(seqs(&take(&mut typed, 3).await), tools);

    let bad = events
        .subscribe(v1::SubscribeRequest {
            after_seq: Some(-1),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(bad.code(), Code::InvalidArgument);
}

#[tokio::test]
async fn with_a_token_grpc_needs_bearer_metadata_while_health_stays_open_and_reflection_lists_services() {
    let m = mesh().await;
    let g = gateway(&m, &[("RELAY_API_TOKEN", "s3cret")]).await;
    let ch = channel(&g).await;

    let denied = SessionServiceClient::new(ch.clone())
        .list(v1::ListRequest::default())
        .await
        .unwrap_err();
    assert_eq!(denied.code(), Code::Unauthenticated);

    let with_token = |mut req: Request<()>| {
        req.metadata_mut()
            .insert("authorization", "Bearer s3cret".parse().unwrap());
        Ok(req)
    };
    let mut sessions = SessionServiceClient::with_interceptor(ch.clone(), with_token);
    let listed = sessions.list(v1::ListRequest::default()).await.unwrap().into_inner();
    assert_eq!(listed.total, 0);
    let wrong = SessionServiceClient::with_interceptor(ch.clone(), |mut req: Request<()>| {
        req.metadata_mut()
            .insert("authorization", "Bearer guess".parse().unwrap());
        Ok(req)
    })
    .list(v1::ListRequest::default())
    .await
    .unwrap_err();
    assert_eq!(wrong.code(), Code::Unauthenticated);
    // The console's sign-in cookie without its CSRF token: refused, as over REST (a page of
    // another site could otherwise make the browser call gRPC-web with it).
    let by_cookie = SessionServiceClient::with_interceptor(ch.clone(), |mut req: Request<()>| {
        req.metadata_mut()
            .insert("cookie", "relay_key=s3cret; relay_csrf=abc".parse().unwrap());
        Ok(req)
    })
    .create(v1::CreateRequest::default())
    .await
    .unwrap_err();
    assert_eq!(by_cookie.code(), Code::PermissionDenied, "{by_cookie:?}");

    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
    let mut health = HealthClient::new(ch.clone());
    for service in ["", "relay.v1.SessionService", "relay.v1.EventService"] {
        let status = health
            .check(HealthCheckRequest {
                service: service.into(),
            })
            .await
            .unwrap()
            .into_inner()
            .status();
        assert_eq!(status, ServingStatus::Serving, "health of {service:?}");
    }

    use tonic_reflection::pb::v1::ServerReflectionRequest;
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
    let ask = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut reflection = ServerReflectionClient::with_interceptor(ch.clone(), with_token);
    let mut answers = reflection
        .server_reflection_info(futures::stream::iter([ask]))
        .await
        .unwrap()
        .into_inner();
    let Some(MessageResponse::ListServicesResponse(list)) = answers.message().await.unwrap().unwrap().message_response
    else {
        panic!("reflection did not list services");
    };
    let names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    for service in [
        "relay.v1.SessionService",
        "relay.v1.EventService",
        "relay.v1.CostService",
        // The health service answers, so reflection lists it too.
        "grpc.health.v1.Health",
    ] {
        assert!(names.iter().any(|n| n == service), "{service} missing from {names:?}");
    }
}
