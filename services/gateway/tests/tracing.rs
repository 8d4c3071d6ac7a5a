//! "One HTTP call is one trace across every service it touches": the mesh exports its spans
//! to an OTLP collector running in this test, and each REST call is checked to be one trace
//! that holds spans of the services it reached, continuing the caller's `traceparent`.

mod common;
use common::{gateway, mesh_with};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{TraceService, TraceServiceServer};
use opentelemetry_proto::tonic::collector::trace::v1::{ExportTraceServiceRequest, ExportTraceServiceResponse};
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use reqwest::StatusCode;
use serde_json::json;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

/// One exported span, flattened.
#[derive(Debug, Clone)]
struct Span {
    service: String,
    trace_id: String,
    parent: String,
    name: String,
}

#[derive(Clone, Default)]
struct Collector(Arc<Mutex<Vec<Span>>>);

#[tonic::async_trait]
impl TraceService for Collector {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let mut spans = self.0.lock().unwrap();
        for rs in request.into_inner().resource_spans {
            let service = rs
                .resource
                .iter()
                .flat_map(|r| &r.attributes)
                .find(|a| a.key == "service.name")
                .and_then(|a| match a.value.as_ref()?.value.as_ref()? {
                    AnyValue::StringValue(s) => Some(s.clone()),
                    _ => None,
                })
                .unwrap_or_default();
            for ss in rs.scope_spans {
                for s in ss.spans {
                    spans.push(Span {
                        service: service.clone(),
                        trace_id: hex(&s.trace_id),
                        parent: hex(&s.parent_span_id),
                        name: s.name,
                    });
                }
            }
        }
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Collector {
    /// A collector serving OTLP/gRPC on a free loopback port, and the environment that points
    /// a service at it.
    async fn start() -> (Collector, [(&'static str, String); 2]) {
        let collector = Collector::default();
        let endpoint = collector.serve().await;
        let env = [
            ("RELAY_TELEMETRY__OTLP_ENDPOINT", endpoint),
            // Export within a fraction of a second instead of every five.
            ("OTEL_BSP_SCHEDULE_DELAY", "100".to_string()),
        ];
        (collector, env)
    }

    /// Serves OTLP/gRPC on a free loopback port; its endpoint.
    async fn serve(&self) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let svc = TraceServiceServer::new(self.clone());
        let router = axum::Router::new().route_service(
            "/opentelemetry.proto.collector.trace.v1.TraceService/{*rest}",
            tower::ServiceExt::map_request(svc, |req: axum::extract::Request| req.map(tonic::body::Body::new)),
        );
        tokio::spawn(async move { axum::serve(listener, router).await });
        format!("http://{addr}")
    }

    /// The services with spans in trace `id`, once every one of `expected` has one there.
    async fn services_in(&self, id: &str, expected: &[&str]) -> BTreeSet<String> {
        relay_testkit::wait_for(|| async {
            let seen: BTreeSet<String> = self
                .0
                .lock()
                .unwrap()
                .iter()
                .filter(|s| s.trace_id == id)
                .map(|s| s.service.clone())
                .collect();
            expected.iter().all(|e| seen.contains(*e)).then_some(seen)
        })
        .await
    }

    fn spans(&self) -> Vec<Span> {
        self.0.lock().unwrap().clone()
    }

    /// Every span of trace `id` hangs off the client's span: one trace, no second root.
    fn assert_no_second_root(&self, id: &str) {
        let roots: Vec<Span> = self
            .spans()
            .into_iter()
            .filter(|s| s.trace_id == id && s.parent.is_empty())
            .collect();
        assert!(
            roots.is_empty(),
            "spans that start their own root in the client's trace: {roots:?}"
        );
    }
}

/// `env` as the `(key, value)` pairs the test processes take.
fn pairs<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// A W3C `traceparent` a client would send, for a new trace id.
fn traceparent() -> (String, String) {
    let trace_id = format!("{:032x}", uuid::Uuid::new_v4().as_u128());
    (format!("00-{trace_id}-00f067aa0ba902b7-01"), trace_id)
}

#[tokio::test]
async fn a_rest_call_is_one_trace_across_the_services_it_touches() {
    let (collector, env) = Collector::start().await;
    let telemetry = pairs(&env);
    let m = mesh_with(&telemetry).await;
    let g = gateway(&m, &telemetry).await;

    // A client's trace is continued: the gateway's span and the registry's are in it.
    let mut committed = m.client.subscribe("event.committed.session.created").await.unwrap();
    m.client.flush().await.unwrap();
    let (parent, trace_id) = traceparent();
    let created = g
        .req(reqwest::Method::POST, "/api/v1/sessions")
        .header("traceparent", &parent)
        .json(&json!({"sessionId": "traced"}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);
    let services = collector.services_in(&trace_id, &["gateway", "session-registry"]).await;
    println!("POST /sessions touched {services:?}");
    // The event it committed is published live in the same trace.
    let live = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        futures::StreamExt::next(&mut committed),
    )
    .await
    .expect("session.created is published")
    .unwrap();
    let carried = live
        .headers
        .as_ref()
        .and_then(|h| h.get("traceparent"))
        .map(std::string::ToString::to_string);
    assert!(
        carried.as_deref().is_some_and(|tp| tp.contains(&trace_id)),
        "event.committed.session.created carries {carried:?}, not the trace {trace_id}"
    );

    collector.assert_no_second_root(&trace_id);

    // The permission routes: a lookup and a decision, each in the caller's trace.
    let (parent, trace_id) = traceparent();
    let listed = g
        .req(reqwest::Method::GET, "/api/v1/agents/nobody/permissions")
        .header("traceparent", &parent)
        .send()
        .await
        .unwrap();
    assert_eq!(listed.status(), StatusCode::OK);
    collector
        .services_in(&trace_id, &["gateway", "permission-manager"])
        .await;

    // Without a traceparent the gateway starts the trace: the registry's span is in the trace
    // of the gateway's span for that request.
    let before = collector.spans().len();
    let (st, _) = g.get("/api/v1/sessions/traced").await;
    assert_eq!(st, StatusCode::OK);
    let gateway_trace = relay_testkit::wait_for(|| async {
        collector.spans()[before..]
            .iter()
            .find(|s| s.service == "gateway" && s.name == "GET /api/v1/sessions/traced")
            .map(|s| s.trace_id.clone())
    })
    .await;
    collector
        .services_in(&gateway_trace, &["gateway", "session-registry"])
        .await;

    assert_no_polling_traces(&collector);
}

/// Background polling (the SSE hub and the followers read `event.since` all the time) is not
/// exported: no `event.since` span starts a trace of its own.
fn assert_no_polling_traces(collector: &Collector) {
    let polling_roots: Vec<Span> = collector
        .spans()
        .into_iter()
        .filter(|s| s.parent.is_empty() && s.name == "event.since")
        .collect();
    assert!(polling_roots.is_empty(), "polling made traces: {polling_roots:?}");
}

/// The three calls that cross the most services: a session with a spawned agent and its task,
/// a message to that agent, and a human's approval of the command the agent asked to run. Each
/// is one trace that reaches every service the work goes through — including the harness, the
/// delivery runner and the event log, which do their part after the REST call has answered.
#[tokio::test]
async fn spawning_sending_and_approving_are_each_one_trace_through_every_service_they_touch() {
    let (collector, env) = Collector::start().await;
    let telemetry = pairs(&env);
    let m = mesh_with(&telemetry).await;
    let surfaced = std::env::temp_dir().join(format!("traced-{}.log", uuid::Uuid::new_v4().simple()));
    let _spawner = common::spawner_with(&m, &surfaced, &telemetry).await;
    let g = gateway(&m, &telemetry).await;

    let (parent, spawn_trace) = traceparent();
    let created: serde_json::Value = g
        .req(reqwest::Method::POST, "/api/v1/sessions")
        .header("traceparent", &parent)
        .json(&json!({"sessionId": "traced-agent", "cli": "claude", "task": "hello"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let agent = created["agentId"].as_str().expect("an agent id").to_string();
    let everywhere = [
        "gateway",
        "session-registry",
        "agent-spawner",
        "agent-harness",
        "delivery-runner",
        "event-ingest",
    ];
    let services = collector.services_in(&spawn_trace, &everywhere).await;
    println!("POST /sessions with a cli touched {services:?}");

    let (parent, send_trace) = traceparent();
    let sent = g
        .req(reqwest::Method::POST, "/api/v1/sessions/traced-agent/messages")
        .header("traceparent", &parent)
        .json(&json!({"message": "ask-permission Bash rm -rf build"}))
        .send()
        .await
        .unwrap();
    assert!(sent.status().is_success(), "{}", sent.text().await.unwrap());
    let delivered = [
        "gateway",
        "session-registry",
        "delivery-runner",
        "agent-harness",
        "event-ingest",
    ];
    let services = collector.services_in(&send_trace, &delivered).await;
    println!("POST /sessions/{{id}}/messages touched {services:?}");

    let request_id = relay_testkit::wait_for(|| async {
        let (_, list) = g.get(&format!("/api/v1/agents/{agent}/permissions")).await;
        list["permissions"][0]["requestId"].as_str().map(String::from)
    })
    .await;
    let (parent, approve_trace) = traceparent();
    let approved = g
        .req(
            reqwest::Method::POST,
            &format!("/api/v1/agents/{agent}/permissions/{request_id}/approve"),
        )
        .header("traceparent", &parent)
        .send()
        .await
        .unwrap();
    assert_eq!(approved.status(), StatusCode::OK);
    let decided = ["gateway", "permission-manager", "agent-harness", "event-ingest"];
    let services = collector.services_in(&approve_trace, &decided).await;
    println!("POST …/approve touched {services:?}");

    for trace in [&spawn_trace, &send_trace, &approve_trace] {
        collector.assert_no_second_root(trace);
    }
    assert_no_polling_traces(&collector);
}

impl Collector {
    /// Waits until no span has arrived for a while (every service exports within 100 ms), so
    /// what the work caused after the REST call answered is all in; the spans since `from`.
    async fn settled_since(&self, from: usize) -> Vec<Span> {
        let mut seen = self.spans().len();
        let mut still = 0;
        relay_testkit::wait_for_within(std::time::Duration::from_secs(30), || {
            let now = self.spans().len();
            if now == seen {
                still += 1;
            } else {
                (seen, still) = (now, 0);
            }
            // Twenty looks in a row (about 1 s at the poll interval) with nothing new.
            std::future::ready((still >= 20).then_some(()))
        })
        .await;
        self.spans()[from..].to_vec()
    }
}

/// A GET of the test's own polling, in a trace the client does not sample: not exported, so it
/// is not counted among what the call under test caused.
async fn unrecorded_get(g: &common::Gateway, path: &str) -> serde_json::Value {
    let (_, trace_id) = traceparent();
    g.req(reqwest::Method::GET, path)
        .header("traceparent", format!("00-{trace_id}-00f067aa0ba902b7-00"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// The traces the spans `window` started: one per root span (a span with no parent), beside the
/// client's own trace, whose root is the client's and never exported. The spawner's periodic
/// `host.heartbeat` is background liveness, caused by no call.
fn traces_started(window: &[Span], client_trace: &str) -> BTreeSet<String> {
    let mut traces: BTreeSet<String> = window
        .iter()
        .filter(|s| s.parent.is_empty() && s.name != "host.heartbeat")
        .map(|s| s.trace_id.clone())
        .collect();
    traces.insert(client_trace.to_string());
    traces
}

/// The spans of `window` per trace, for a failure message.
fn by_trace(window: &[Span]) -> String {
    let mut traces: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
    for s in window {
        let root = if s.parent.is_empty() { " (root)" } else { "" };
        traces
            .entry(&s.trace_id)
            .or_default()
            .push(format!("{}:{}{root}", s.service, s.name));
    }
    traces
        .iter()
        .map(|(t, spans)| format!("{t}: {}", spans.join(", ")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a call causes after it answered — the harness's events, delivery report and permission
/// request, the runner's `delivery.accepted|delivered` — continues the call's trace: spawning
/// an agent with a task, and approving the command it asked to run, each make exactly one
/// trace (counted by an independent collector over every span the mesh exported meanwhile).
#[tokio::test]
async fn spawning_with_a_task_and_approving_each_make_exactly_one_trace_with_the_harness_and_runner_in_it() {
    let (collector, env) = Collector::start().await;
    let telemetry = pairs(&env);
    let m = mesh_with(&telemetry).await;
    let surfaced = std::env::temp_dir().join(format!("one-trace-{}.log", uuid::Uuid::new_v4().simple()));
    let _spawner = common::spawner_with(&m, &surfaced, &telemetry).await;
    let g = gateway(&m, &telemetry).await;
    let quiet = collector.settled_since(0).await.len();

    let (parent, spawn_trace) = traceparent();
    let created: serde_json::Value = g
        .req(reqwest::Method::POST, "/api/v1/sessions")
        .header("traceparent", &parent)
        .json(&json!({"sessionId": "one-trace", "cli": "claude", "task": "ask-permission Bash rm -rf build"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let agent = created["agentId"].as_str().expect("an agent id").to_string();
    // The task was delivered (the runner settled it) and the agent asked its permission.
    let request_id = relay_testkit::wait_for(|| async {
        let list = unrecorded_get(&g, &format!("/api/v1/agents/{agent}/permissions")).await;
        list["permissions"][0]["requestId"].as_str().map(String::from)
    })
    .await;
    relay_testkit::wait_for(|| async {
        let d = unrecorded_get(&g, "/api/v1/deliveries?sessionId=one-trace").await;
        let all = d["deliveries"].as_array().cloned().unwrap_or_default();
        (!all.is_empty() && all.iter().all(|d| d["status"] == "delivered")).then_some(())
    })
    .await;
    collector
        .services_in(
            &spawn_trace,
            &["agent-harness", "delivery-runner", "permission-manager"],
        )
        .await;
    let window = collector.settled_since(quiet).await;
    let started = traces_started(&window, &spawn_trace);
    assert_eq!(
        started,
        BTreeSet::from([spawn_trace.clone()]),
        "POST /sessions {{cli, task}} made more than one trace:\n{}",
        by_trace(&window)
    );

    let quiet = quiet + window.len();
    let (parent, approve_trace) = traceparent();
    let approved = g
        .req(
            reqwest::Method::POST,
            &format!("/api/v1/agents/{agent}/permissions/{request_id}/approve"),
        )
        .header("traceparent", &parent)
        .send()
        .await
        .unwrap();
    assert_eq!(approved.status(), StatusCode::OK);
    collector
        .services_in(
            &approve_trace,
            &["gateway", "permission-manager", "agent-harness", "event-ingest"],
        )
        .await;
    let window = collector.settled_since(quiet).await;
    let started = traces_started(&window, &approve_trace);
    assert_eq!(
        started,
        BTreeSet::from([approve_trace.clone()]),
        "an approval made more than one trace:\n{}",
        by_trace(&window)
    );
    assert_no_polling_traces(&collector);
}
