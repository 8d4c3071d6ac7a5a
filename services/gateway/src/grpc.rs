//! gRPC on the gateway's own port (h2c, beside HTTP/1.1 REST), from proto/relay/v1.
//!
//! Every unary rpc is bridged to the NATS subject `relay_proto::unary_rpcs()` names: the protobuf
//! request becomes the contract's JSON and the JSON reply becomes the protobuf response, both
//! through prost-reflect with the mapping rules of session.proto (fields without presence are
//! sent even at their default, 64-bit integers as JSON numbers). The proto files are checked
//! against the JSON contracts by the drift test, so one generic bridge serves all 44 rpcs and
//! cannot disagree with REST. `EventService.Subscribe` is the SSE stream's twin (same replay,
//! same live hub, same cap). The standard health and reflection services make grpcurl work
//! without .proto files.

use crate::sse::{self, Filter, Start};
use crate::{ApiError, AppState};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::Stream;
use prost::Message as _;
use prost_reflect::{DescriptorPool, DeserializeOptions, DynamicMessage, MessageDescriptor, SerializeOptions};
use relay_contracts::{ErrorCode, WireError};
use std::collections::HashMap;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, LazyLock};
use std::time::Duration;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::metadata::MetadataValue;
use tonic::server::NamedService;
use tonic::{Code, Status};
use tower::ServiceExt as _;

static POOL: LazyLock<DescriptorPool> = LazyLock::new(|| {
    DescriptorPool::decode(relay_proto::FILE_DESCRIPTOR_SET).expect("the compiled proto descriptor set decodes")
});

/// The protobuf form of the JSON contracts: what the services expect and what REST sends.
fn json_options() -> SerializeOptions {
    SerializeOptions::new()
        .skip_default_fields(false)
        .stringify_64_bit_integers(false)
}

/// One bridged rpc.
struct Rpc {
    /// The NATS subject; `None` for `EventService.Subscribe`, which streams from the hub.
    subject: Option<&'static str>,
    request: MessageDescriptor,
    response: MessageDescriptor,
}

/// Every rpc by its HTTP/2 path, `/relay.v1.SessionService/Create`.
fn rpcs() -> HashMap<String, Arc<Rpc>> {
    let mut map = HashMap::new();
    for service in POOL.services().filter(|s| s.package_name() == "relay.v1") {
        for method in service.methods() {
            let subject = relay_proto::unary_rpcs()
                .find(|(s, m, _)| *s == service.name() && *m == method.name())
                .map(|(_, _, subject)| subject);
            // The drift test keeps the declarations' grpc complete; only Subscribe has no subject.
            debug_assert!(subject.is_some() || method.is_server_streaming());
            let rpc = Rpc {
                subject,
                request: method.input(),
                response: method.output(),
            };
            map.insert(format!("/{}/{}", service.full_name(), method.name()), Arc::new(rpc));
        }
    }
    map
}

/// The gRPC routes: the relay.v1 services and reflection behind the bearer token (as metadata
/// `authorization: Bearer …`), health open like `/healthz`.
pub fn router(state: AppState) -> axum::Router<AppState> {
    let rpcs = Arc::new(rpcs());
    let mut protected = axum::Router::new();
    for service in POOL.services().filter(|s| s.package_name() == "relay.v1") {
        let bridge = Bridge {
            state: state.clone(),
            rpcs: rpcs.clone(),
        };
        protected = protected.route_service(&format!("/{}/{{method}}", service.full_name()), bridge);
    }
    let reflection_v1 = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(relay_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()
        .expect("the descriptor set is valid for reflection");
    let reflection_v1alpha = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(relay_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1alpha()
        .expect("the descriptor set is valid for reflection");
    protected = named(protected, reflection_v1);
    protected = named(protected, reflection_v1alpha);
    let protected = protected.route_layer(axum::middleware::from_fn_with_state(state.clone(), require_token));

    let (reporter, health) = tonic_health::server::health_reporter();
    tokio::spawn(report_health(reporter, state.nats.clone()));
    named(protected, health)
}

/// Adds a generated tonic service under `/<its name>/…`.
fn named<S>(router: axum::Router<AppState>, svc: S) -> axum::Router<AppState>
where
    S: tower::Service<axum::http::Request<tonic::body::Body>, Error = Infallible>
        + NamedService
        + Clone
        + Send
        + Sync
        + 'static,
    S::Response: IntoResponse,
    S::Future: Send + 'static,
{
    let svc = svc.map_request(|req: Request| req.map(tonic::body::Body::new));
    router.route_service(&format!("/{}/{{*rest}}", S::NAME), svc)
}

/// SERVING while the gateway is connected to NATS, for the whole server ("") and each service.
async fn report_health(reporter: tonic_health::server::HealthReporter, nats: async_nats::Client) {
    use tonic_health::ServingStatus;
    let names: Vec<String> = std::iter::once(String::new())
        .chain(
            POOL.services()
                .filter(|s| s.package_name() == "relay.v1")
                .map(|s| s.full_name().to_string()),
        )
        .collect();
    let mut last = None;
    loop {
        let status = match nats.connection_state() {
            async_nats::connection::State::Connected => ServingStatus::Serving,
            _ => ServingStatus::NotServing,
        };
        if last != Some(status) {
            for name in &names {
                reporter.set_service_status(name, status).await;
            }
            last = Some(status);
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn require_token(State(state): State<AppState>, request: Request, next: Next) -> Response {
    // Every rpc is a POST: the console's cookie without its CSRF token is refused as over REST.
    if let Err(e) = crate::cookies::check_csrf(request.method(), request.headers()) {
        return status_of_api(&e).into_http::<axum::body::Body>();
    }
    let origin = crate::auth::origin(&state, &request);
    match crate::auth::admit(&state, request.headers(), origin).await {
        Ok(p) => {
            let what = request.uri().path().to_string();
            let response = relay_bus::context::act_as(p.ctx.clone(), next.run(request)).await;
            // A refusal for the role answers at once, its status in the headers.
            let denied = (Code::PermissionDenied as i32).to_string();
            if response
                .headers()
                .get("grpc-status")
                .is_some_and(|v| v.as_bytes() == denied.as_bytes())
            {
                crate::auth::audit_refusal(&state, &p.ctx, what);
            }
            response
        }
        Err(e) => status_of_api(&e).into_http::<axum::body::Body>(),
    }
}

/// Serves every relay.v1 rpc: decodes with the rpc's descriptors, then forwards.
#[derive(Clone)]
struct Bridge {
    state: AppState,
    rpcs: Arc<HashMap<String, Arc<Rpc>>>,
}

type ResponseFuture = Pin<Box<dyn Future<Output = Result<axum::http::Response<tonic::body::Body>, Infallible>> + Send>>;
type EventStream = Pin<Box<dyn Stream<Item = Result<DynamicMessage, Status>> + Send>>;

impl tower::Service<Request> for Bridge {
    type Response = axum::http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let state = self.state.clone();
        let rpc = self.rpcs.get(req.uri().path()).cloned();
        Box::pin(async move {
            let Some(rpc) = rpc else {
                return Ok(Status::unimplemented("no such rpc").into_http());
            };
            let mut grpc = tonic::server::Grpc::new(DynamicCodec(rpc.request.clone()));
            let response = match rpc.subject {
                Some(subject) => {
                    let svc = tower::service_fn(move |req: tonic::Request<DynamicMessage>| {
                        unary(state.clone(), subject, rpc.response.clone(), req.into_inner())
                    });
                    grpc.unary(svc, req).await
                }
                None => {
                    let svc = tower::service_fn(move |req: tonic::Request<DynamicMessage>| {
                        let stream = subscribe(&state, &rpc.response, req.into_inner());
                        async move { stream.map(tonic::Response::new) }
                    });
                    grpc.server_streaming(svc, req).await
                }
            };
            Ok(response)
        })
    }
}

/// One bus request: protobuf request → contract JSON → subject → contract JSON → protobuf.
async fn unary(
    state: AppState,
    subject: &'static str,
    response: MessageDescriptor,
    request: DynamicMessage,
) -> Result<tonic::Response<DynamicMessage>, Status> {
    crate::auth::check_role(subject).map_err(|e| status_of_api(&e))?;
    let json = request
        .serialize_with_options(serde_json::value::Serializer, &json_options())
        .map_err(|e| Status::invalid_argument(format!("request cannot be expressed as JSON: {e}")))?;
    let reply: serde_json::Value = relay_bus::client::request(&state.nats, subject, &json, state.timeout())
        .await
        .map_err(status_of)?;
    if let Some(e) = absent(subject, &json, &reply) {
        return Err(status_of(e));
    }
    let message = from_json(&response, reply).map_err(|e| {
        Status::internal(format!(
            "reply from {subject} does not fit {}: {e}",
            response.full_name()
        ))
    })?;
    Ok(tonic::Response::new(message))
}

/// `EventService.Subscribe`: the same stream an SSE client gets, as protobuf `Event`s.
fn subscribe(state: &AppState, event: &MessageDescriptor, request: DynamicMessage) -> Result<EventStream, Status> {
    let int = |name: &str| {
        request
            .get_field_by_name(name)
            .filter(|_| request.has_field_by_name(name))
            .and_then(|v| v.as_i64())
    };
    let string = |name: &str| {
        request
            .has_field_by_name(name)
            .then(|| request.get_field_by_name(name))
            .flatten()
            .and_then(|v| v.as_str().map(String::from))
    };
    let types: Vec<String> = request
        .get_field_by_name("types")
        .and_then(|v| {
            v.as_list()
                .map(|l| l.iter().filter_map(|t| t.as_str().map(String::from)).collect())
        })
        .unwrap_or_default();
    let start = match (int("after_seq"), int("since")) {
        (Some(seq), _) if seq < 0 => return Err(Status::invalid_argument("after_seq must not be negative")),
        (Some(seq), _) => Start::After(seq),
        (None, Some(ts)) => Start::At(ts),
        (None, None) => Start::Live,
    };
    let filter = Filter {
        types: (!types.is_empty()).then_some(types),
        agent: string("agent"),
        session: string("session_id"),
        since_ts: None,
        workspace: relay_bus::context::outgoing().scope().map(String::from),
    };
    let rx = sse::follow(state, start, filter).map_err(|e| status_of_api(&e))?;
    let event = event.clone();
    let stream = futures::stream::unfold(rx, move |mut rx| {
        let event = event.clone();
        async move {
            let live = rx.recv().await?;
            let json = serde_json::to_value(&live.event).unwrap_or_default();
            let item = from_json(&event, json).map_err(|e| Status::internal(format!("event does not fit Event: {e}")));
            Some((item, rx))
        }
    });
    Ok(Box::pin(stream))
}

fn from_json(desc: &MessageDescriptor, json: serde_json::Value) -> Result<DynamicMessage, serde_json::Error> {
    // Lenient: a service may add a key before the proto catches up; the drift test reports it.
    DynamicMessage::deserialize_with_options(
        desc.clone(),
        json,
        &DeserializeOptions::new().deny_unknown_fields(false),
    )
}

/// The gRPC status for a bus error, by the error table; the wire code itself travels as
/// `relay-error-code` metadata.
fn status_of(e: WireError) -> Status {
    status_with(crate::error::row(e.code()).grpc, e)
}

fn status_with(code: Code, e: WireError) -> Status {
    let wire_code = e.code().as_str();
    let details = e.error.details.as_ref().map(std::string::ToString::to_string);
    let mut status = Status::new(code, e.error.message);
    let metadata = status.metadata_mut();
    if let Ok(v) = wire_code.parse() {
        metadata.insert("relay-error-code", v);
    }
    // Which fields or items were wrong, as the JSON `details` of the bus error.
    if let Some(details) = details {
        metadata.insert_bin("relay-error-details-bin", MetadataValue::from_bytes(details.as_bytes()));
    }
    status
}

fn status_of_api(e: &ApiError) -> Status {
    status_with(e.row().grpc, e.wire())
}

/// Replies whose contract answers "none" with an absent field rather than an error (seed 002's
/// `session.get` answers `{session: null}`): over gRPC that is NOT_FOUND, as REST's 404, not
/// an OK empty message.
const ABSENT_IS_NOT_FOUND: &[(&str, &str, &str, &str)] = &[("session.get", "session", "sessionId", "session")];

fn absent(subject: &str, request: &serde_json::Value, reply: &serde_json::Value) -> Option<WireError> {
    let (_, field, id, what) = ABSENT_IS_NOT_FOUND.iter().find(|(s, ..)| *s == subject)?;
    if !reply.get(*field).is_none_or(serde_json::Value::is_null) {
        return None;
    }
    let id = request.get(*id).and_then(serde_json::Value::as_str).unwrap_or_default();
    Some(WireError::new(ErrorCode::NotFound, format!("{what} {id} not found")))
}

/// Encodes and decodes `DynamicMessage`s of the rpc's request type.
struct DynamicCodec(MessageDescriptor);

struct DynamicEncoder;
struct DynamicDecoder(MessageDescriptor);

impl Codec for DynamicCodec {
    type Encode = DynamicMessage;
    type Decode = DynamicMessage;
    type Encoder = DynamicEncoder;
    type Decoder = DynamicDecoder;

    fn encoder(&mut self) -> DynamicEncoder {
        DynamicEncoder
    }

    fn decoder(&mut self) -> DynamicDecoder {
        DynamicDecoder(self.0.clone())
    }
}

impl Encoder for DynamicEncoder {
    type Item = DynamicMessage;
    type Error = Status;

    fn encode(&mut self, item: DynamicMessage, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        item.encode(dst)
            .map_err(|e| Status::internal(format!("cannot encode the response: {e}")))
    }
}

impl Decoder for DynamicDecoder {
    type Item = DynamicMessage;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<DynamicMessage>, Status> {
        DynamicMessage::decode(self.0.clone(), src)
            .map(Some)
            .map_err(|e| Status::invalid_argument(format!("malformed {}: {e}", self.0.full_name())))
    }
}
