//! The gRPC twin of the JSON contracts in `relay-contracts`, generated at build time (protox, so
//! no system `protoc`) from every file in `proto/relay/v1/`:
//!
//! | file | services | NATS subjects mirrored |
//! | --- | --- | --- |
//! | `session.proto` | `SessionService` | `session.*` (the session registry) |
//! | `delivery.proto` | `DeliveryService`, `AgentService` | `delivery.*`, `agent.*` (the delivery runner) |
//! | `permission.proto` | `PermissionService` | `permission.*`, `question.*` (the permission manager) |
//! | `cost.proto` | `CostService` | `cost.*`, `session.getContextWindowState` (the cost aggregator) |
//! | `events.proto` | `EventService` | `event.*` (event-ingest), plus the server-streaming `Subscribe` |
//!
//! The JSON contracts are the source of truth. `tests/contract_drift.rs` fails when a proto
//! message and its Rust contract type disagree on keys, JSON types or presence, or when a
//! service's rpcs differ from the subjects they mirror.

/// Package `relay.v1`: the messages, and a `*_client` and `*_server` module per service
/// (`session_service_server`, `event_service_client`, ...).
pub mod v1 {
    tonic::include_proto!("relay.v1");
}

/// The encoded `google.protobuf.FileDescriptorSet` of `proto/` (with its imports and source
/// comments), for gRPC reflection and the drift test.
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/relay_descriptor.bin"));

use relay_contracts::subjects::{agent, delivery, event, session};
use relay_contracts::{cost, permission};

/// The NATS subject behind every unary rpc, as (service, rpc, subject). The gateway's gRPC
/// bridge routes by it; `tests/contract_drift.rs` checks it against the proto files and the
/// handlers' request and response types. `EventService.Subscribe` streams, so it is not here.
pub const UNARY_RPCS: &[(&str, &str, &str)] = &[
    ("SessionService", "Create", session::CREATE),
    ("SessionService", "Get", session::GET),
    ("SessionService", "List", session::LIST),
    ("SessionService", "Update", session::UPDATE),
    ("SessionService", "Close", session::CLOSE),
    ("SessionService", "Resume", session::RESUME),
    ("SessionService", "Archive", session::ARCHIVE),
    ("SessionService", "Purge", session::PURGE),
    ("SessionService", "Fork", session::FORK),
    ("SessionService", "Merge", session::MERGE),
    ("SessionService", "Abandon", session::ABANDON),
    ("SessionService", "GetChildren", session::GET_CHILDREN),
    ("SessionService", "GetStatusCounts", session::GET_STATUS_COUNTS),
    (
        "SessionService",
        "GetByAdapterSessionId",
        session::GET_BY_ADAPTER_SESSION_ID,
    ),
    ("SessionService", "Search", session::SEARCH),
    ("SessionService", "AgentAttach", session::AGENT_ATTACH),
    ("SessionService", "AgentRelease", session::AGENT_RELEASE),
    ("SessionService", "AgentCapabilities", session::AGENT_CAPABILITIES),
    (
        "SessionService",
        "AgentDeclareCapabilities",
        session::AGENT_DECLARE_CAPABILITIES,
    ),
    ("SessionService", "SendMessage", session::SEND_MESSAGE),
    ("SessionService", "Turns", session::TURNS),
    ("SessionService", "Messages", session::MESSAGES),
    ("DeliveryService", "Get", delivery::GET),
    ("DeliveryService", "List", delivery::LIST),
    ("DeliveryService", "Retry", delivery::RETRY),
    ("DeliveryService", "Flush", delivery::FLUSH),
    ("DeliveryService", "Cancel", delivery::CANCEL),
    ("AgentService", "Pause", agent::PAUSE),
    ("AgentService", "Resume", agent::RESUME),
    ("AgentService", "Stop", agent::STOP),
    ("AgentService", "Input", agent::INPUT),
    ("PermissionService", "List", permission::LIST),
    ("PermissionService", "Get", permission::GET),
    ("PermissionService", "Approve", permission::APPROVE),
    ("PermissionService", "Deny", permission::DENY),
    ("PermissionService", "ListQuestions", permission::QUESTION_LIST),
    ("PermissionService", "GetQuestion", permission::QUESTION_GET),
    ("PermissionService", "Answer", permission::ANSWER),
    ("CostService", "Report", cost::REPORT),
    ("CostService", "Models", cost::MODELS),
    ("CostService", "GetContextWindowState", cost::CONTEXT_WINDOW),
    ("EventService", "Query", event::QUERY),
    ("EventService", "Since", event::SINCE),
    ("EventService", "Append", event::APPEND),
];
