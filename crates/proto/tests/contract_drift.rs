//! The proto twin must not drift from the JSON contracts in `relay-contracts`.
//!
//! Each Rust contract type is paired with the proto message of the same name in `relay.v1`
//! (every file in proto/relay/v1), or with the name given to `contract_named` where two contract
//! modules use one name (`permission::ListRequest` is `PermissionListRequest`). A sample value
//! of the Rust type, with every `Option` set and every `Vec` and map non-empty, is serialized
//! with serde and compared with the message's descriptor (decoded from
//! `relay_proto::FILE_DESCRIPTOR_SET`):
//!
//! * keys: the sample's JSON keys must be exactly the proto3 JSON names of the fields;
//! * shapes: each JSON value must fit its field (string, bool, integer, number, list, map,
//!   nested message, or any JSON for `google.protobuf.Value`); nested messages and map values
//!   are compared the same way;
//! * presence: a key the Rust type can do without (`Option`, `#[serde(default)]`, found by
//!   deleting it from the sample and reading the rest back) must be `optional`, a message or a
//!   list in the proto, and a key it requires must not be `optional`. This is what lets a
//!   gateway emit default values for fields without presence and nothing for unset ones.
//!
//! Every proto message must be paired here, except the few in `NO_JSON_TWIN` that have no Rust
//! type to pair with. Every service's rpcs must match the subject tables below (name, request,
//! response, streaming), and each rpc's comment must name the subjects it mirrors. There are no
//! per-field allowances: the polymorphic JSON fields (`message`, `initialMessage`, `agentIds`,
//! the tri-state fields of `UpdateRequest`) are `google.protobuf.Value` in the proto, which
//! holds any JSON. What the proto cannot carry is documented in the .proto files, not allowed
//! here: the unknown keys `AgentSelection` keeps (`#[serde(flatten)] extra`; its sample leaves
//! `extra` empty), the one-bare-event form of `event.append` (the sample is the batch form), and
//! the difference between an absent and an empty list.

use prost::Message as _;
use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, FieldDescriptorProto, FileDescriptorSet, MethodDescriptorProto};
use relay_contracts::capabilities::*;
use relay_contracts::session::*;
use relay_contracts::{Rpc, cost, delivery, events, permission, rpc};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};

const PACKAGE: &str = "relay.v1";

// ---------------------------------------------------------------------------------------------
// The pairs

fn contracts() -> Vec<Contract> {
    vec![
        // Records
        contract(session()),
        contract(agent()),
        contract(preview()),
        contract(message()),
        contract(turn()),
        contract(selection()),
        // Capabilities
        contract(capabilities()),
        contract(capabilities().messaging),
        contract(capabilities().delivery),
        contract(capabilities().events),
        contract(capabilities().actions.unwrap()),
        contract(capabilities().lifecycle),
        contract(ag_ui()),
        // Requests and replies
        contract(CreateRequest {
            session_id: some("s1"),
            title: some("title"),
            parent_session_id: some("s0"),
            branch_kind: Some(BranchKind::Subagent),
            execution_target_id: some("local"),
            fork_point_message_id: some("m0"),
            fork_transforms: Some(json!({"drop": ["m1"]})),
            origin_window_id: some("w1"),
            spawning_tool_call_id: some("call-1"),
            target_working_directory: some("/work"),
        }),
        contract(SessionIdResponse {
            session_id: "s1".into(),
        }),
        contract(SessionRef {
            session_id: "s1".into(),
        }),
        contract(CloseRequest {
            session_id: "s1".into(),
            reason: some("done"),
        }),
        contract(GetResponse {
            session: Some(session()),
        }),
        contract(SuccessResponse { success: true }),
        contract(ListRequest {
            status: Some(StatusFilter::Active),
            execution_target_id: some("local"),
            include_preview: Some(true),
            limit: Some(10),
            offset: Some(20),
        }),
        contract(ListResponse {
            sessions: vec![session()],
            total: 1,
        }),
        contract(UpdateRequest {
            session_id: "s1".into(),
            approval_policy_override: Some(Some(ApprovalPolicy::FullAccess)),
            execution_target_id: Some(Some("remote".into())),
            title: some("title"),
            summary: some("summary"),
        }),
        contract(PurgeResponse {
            success: true,
            events_deleted: Some(3),
            error: some("partial"),
        }),
        contract(ForkRequest {
            source_session_id: "s1".into(),
            from_message_id: some("m1"),
            name: some("fork"),
            branch_kind: Some(ForkKind::Aside),
            existing_session_id: some("s2"),
            target_working_directory: some("/work"),
            transforms: Some(json!({"drop": ["m1"]})),
        }),
        contract(MergeRequest {
            child_session_id: "s2".into(),
            parent_session_id: "s1".into(),
            summary: some("summary"),
            source: Some(Source::Extension),
            extension_id: some("ext"),
        }),
        contract(MergeResponse {
            success: true,
            handoff: some("handoff"),
        }),
        contract(PipelineStep {
            action_id: "summarize".into(),
            options: Some(json!({"keep": 2}).as_object().unwrap().clone()),
        }),
        contract(CompressRequest {
            session_id: "s1".into(),
            pipeline: vec![PipelineStep {
                action_id: "summarize".into(),
                options: Some(json!({"keep": 2}).as_object().unwrap().clone()),
            }],
        }),
        contract(CompressResponse {
            context_json: json!({"agents": []}).as_object().unwrap().clone(),
            event_id: "e1".into(),
            tokens_before: 190_000,
            tokens_after: Some(20_000),
        }),
        contract(RequestCompressionRequest {
            session_id: "s1".into(),
            reason: "critical".into(),
            source: Some(Source::System),
            extension_id: some("ext"),
        }),
        contract(relay_contracts::prompts::ResolveSystemPromptRequest {
            session_id: "s1".into(),
            persona_id: some("reviewer"),
            profile_id: some("house"),
        }),
        contract(relay_contracts::prompts::ResolveSystemPromptResponse {
            system_prompt: "Be brief.".into(),
            persona_name: some("Reviewer"),
            profile_name: some("House rules"),
        }),
        contract(AbandonRequest {
            child_session_id: "s2".into(),
            parent_session_id: "s1".into(),
            source: Some(Source::User),
            extension_id: some("ext"),
        }),
        contract(child()),
        contract(GetChildrenResponse {
            children: vec![child()],
        }),
        contract(StatusCountsRequest {}),
        contract(StatusCounts {
            all: 4,
            active: 1,
            closed: 1,
            archived: 1,
            discovered: 1,
        }),
        contract(GetByAdapterSessionIdRequest {
            adapter_session_id: "as1".into(),
        }),
        contract(SearchRequest {
            query: "fix".into(),
            status: Some(StatusFilter::All),
            is_imported: Some(false),
            limit: Some(5),
            offset: Some(10),
        }),
        contract(AttachRequest {
            session_id: "s1".into(),
            agent: selection(),
            role: Some(AgentRole::Member),
            initial_message: Some(MessageContent::Text("hello".into())),
            capabilities: Some(capabilities()),
            agent_capabilities: Some(ag_ui()),
            adapter_session_id: some("as1"),
            harness_id: some("h1"),
            handle: some("bob"),
            spawned_by: some("lead1"),
            placement: Some(placement()),
        }),
        contract(placement()),
        contract(AttachResponse {
            agent_id: "a1".into(),
            adapter_session_id: "as1".into(),
            role: AgentRole::Lead,
            message_id: some("m1"),
            turn_id: some("t1"),
            handle: some("bob"),
        }),
        contract(ReleaseRequest {
            session_id: "s1".into(),
            agent_id: "a1".into(),
            reason: some("done"),
        }),
        contract(AgentRef { agent_id: "a1".into() }),
        contract(CapabilitiesResponse {
            agent_id: "a1".into(),
            session_id: "s1".into(),
            capabilities: capabilities(),
            agent_capabilities: Some(ag_ui()),
        }),
        contract(DeclareCapabilitiesRequest {
            agent_id: "a1".into(),
            capabilities: Some(capabilities()),
            agent_capabilities: Some(ag_ui()),
        }),
        contract(DeliveryRequest {
            mode: DeliveryMode::OnIdle,
        }),
        contract(SendMessageRequest {
            session_id: "s1".into(),
            message: MessageContent::Structured(StructuredContent {
                blocks: Blocks::Many(vec![json!({"type": "text", "text": "hi"})]),
                role: Some(MessageRole::User),
            }),
            agent: Some(selection()),
            agent_ids: Some(AgentTargets::All(AllLiteral::All)),
            delivery_mode: some("enqueue"),
            delivery: Some(DeliveryRequest {
                mode: DeliveryMode::NextToolCall,
            }),
            origin: Some(Origin::Voice),
            source: Some(Source::User),
            extension_id: some("ext"),
            origin_window_id: some("w1"),
            turn_id: some("t1"),
            message_id: some("m1"),
            session_context: Some(json!({"cwd": "/work"})),
            skip_connector_swap_warning: Some(true),
            deliver_at: Some(1_795_000_000_000),
            priority: Some(relay_contracts::messaging::Priority::Urgent),
            deadline: some("2026-11-25T18:00:00Z"),
        }),
        contract(SendMessageResponse {
            message_id: "m1".into(),
            session_id: "s1".into(),
            turn_id: "t1".into(),
            delivery_ids: Some(vec!["d1".into()]),
            schedule_id: some("sch_1"),
        }),
        contract(TurnsResponse { turns: vec![turn()] }),
        contract(MessagesRequest {
            session_id: "s1".into(),
            include_ancestors: Some(false),
            limit: Some(100),
            cursor: Some(200),
        }),
        contract(MessagesResponse {
            messages: vec![message()],
            next_cursor: Some(300),
        }),
        // Deliveries and agent control (delivery.proto)
        contract(delivery_record()),
        contract(delivery::DeliveryRef {
            delivery_id: "d1".into(),
        }),
        contract(delivery::ListDeliveriesRequest {
            session_id: some("s1"),
            agent_id: some("a1"),
            message_id: some("m1"),
            status: Some(delivery::DeliveryStatus::Failed),
            limit: Some(10),
            cursor: Some(20),
        }),
        contract(delivery::ListDeliveriesResponse {
            deliveries: vec![delivery_record()],
            next_cursor: Some(30),
        }),
        contract(delivery::CancelDeliveryRequest {
            delivery_id: "d1".into(),
            reason: some("obsolete"),
        }),
        contract(delivery::FlushRequest {
            agent_id: "a1".into(),
            mode: Some(DeliveryMode::Manual),
        }),
        contract(delivery::FlushResponse { flushed: 2 }),
        // The same shape as session::AgentRef, hence the same message.
        contract(delivery::AgentRef { agent_id: "a1".into() }),
        contract(delivery::AgentHold {
            agent_id: "a1".into(),
            paused: true,
            waiting: 3,
        }),
        contract(delivery::StopAgentRequest {
            agent_id: "a1".into(),
            reason: some("done"),
        }),
        contract(delivery::StopAgentResponse {
            released: true,
            cancelled: 1,
        }),
        contract(delivery::InputRequest {
            agent_id: "a1".into(),
            data: "y\n".into(),
        }),
        contract(delivery::InputResponse { accepted: true }),
        // Permissions and questions (permission.proto)
        contract(permission_record()),
        contract(question()),
        contract_named(
            "PermissionListRequest",
            permission::ListRequest {
                agent_id: some("a1"),
                session_id: some("s1"),
                status: some("all"),
                limit: Some(10),
            },
        ),
        contract(permission::PermissionList {
            permissions: vec![permission_record()],
        }),
        contract(permission::GetPermissionRequest {
            request_id: "r1".into(),
        }),
        contract(permission::DecideRequest {
            request_id: "r1".into(),
            reason: some("looks safe"),
        }),
        contract(permission::DecideResponse {
            success: true,
            permission: permission_record(),
            harness_notified: true,
        }),
        contract(permission::QuestionList {
            questions: vec![question()],
        }),
        contract(permission::GetQuestionRequest {
            question_id: "q1".into(),
        }),
        contract(permission::AnswerRequest {
            question_id: "q1".into(),
            answer: "yes".into(),
        }),
        contract(permission::AnswerResponse {
            success: true,
            question: question(),
            harness_notified: false,
        }),
        // Cost and context window (cost.proto)
        contract(cost_model()),
        contract(breakdown()),
        contract(context_state()),
        contract(cost::ReportRequest {
            since: Some(1_700_000_000_000),
            until: Some(1_700_000_100_000),
            agent: some("a1"),
            session: some("s1"),
            model: some("opus"),
        }),
        contract_named(
            "CostReport",
            cost::Report {
                total: breakdown(),
                by_agent: BTreeMap::from([("a1".to_string(), breakdown())]),
                by_model: BTreeMap::from([("opus".to_string(), breakdown())]),
                by_session: BTreeMap::from([("s1".to_string(), breakdown())]),
                unpriced_models: vec!["local-llm".into()],
            },
        ),
        contract(cost::ModelsRequest {}),
        contract(cost::ModelsResponse {
            models: vec![cost_model()],
            source: "built-in".into(),
        }),
        contract(cost::ContextWindowRequest {
            session_id: "s1".into(),
        }),
        contract(cost::ContextWindowResponse {
            state: Some(context_state()),
        }),
        // The event log (events.proto)
        contract(new_event()),
        contract(event()),
        // The batch form; the proto has no twin of the one-bare-event form.
        contract(events::AppendRequest::Batch {
            events: vec![new_event()],
        }),
        contract(appended()),
        contract(events::AppendResponse {
            appended: vec![appended()],
        }),
        contract(events::QueryRequest {
            types: Some(vec!["tool.called".into()]),
            agents: Some(vec!["a1".into()]),
            session_ids: Some(vec!["s1".into()]),
            since: Some(1_700_000_000_000),
            until: Some(1_700_000_100_000),
            limit: Some(100),
            cursor: Some(41),
            newest_first: Some(true),
        }),
        contract(events::QueryResponse {
            events: vec![event()],
            next_cursor: Some(42),
        }),
        contract(events::SinceRequest {
            seq: 41,
            types: Some(vec!["tool.called".into()]),
            agents: Some(vec!["a1".into()]),
            session_ids: Some(vec!["s1".into()]),
            limit: Some(100),
        }),
        contract(events::SinceResponse {
            events: vec![event()],
            next_seq: 42,
            head_seq: 50,
        }),
    ]
}

/// Proto messages with no Rust contract type to pair with, and why.
const NO_JSON_TWIN: &[(&str, &str)] = &[(
    "SubscribeRequest",
    "EventService.Subscribe is the gateway's stream, with no NATS request behind it",
)];

/// Rust contract types paired with a proto message of another name (see `contract_named`).
const RENAMED: &[(&str, &str)] = &[
    ("permission::ListRequest", "PermissionListRequest"),
    ("cost::Report", "CostReport"),
];

/// The proto message of a declared request or reply type (`session :: ForkRequest`).
fn proto_message(rust_type: &str) -> String {
    let rust_type = rust_type.replace(' ', "");
    RENAMED.iter().find(|(rust, _)| *rust == rust_type).map_or_else(
        || rust_type.rsplit("::").next().unwrap().to_string(),
        |(_, proto)| proto.to_string(),
    )
}

/// The live subject of every committed event, which `EventService.Subscribe` follows.
const LIVE_EVENTS: &str = "event.committed.>";

// ---------------------------------------------------------------------------------------------
// Samples: every Option is Some, every Vec is non-empty.

fn some(s: &str) -> Option<String> {
    Some(s.into())
}

fn object() -> Option<Map<String, Value>> {
    Some(Map::from_iter([("name".to_string(), json!("x"))]))
}

fn capabilities() -> AgentSessionCapabilities {
    AgentSessionCapabilities {
        messaging: MessagingCapabilities {
            receive: true,
            send: Some(true),
            attachments: Some(vec![AttachmentKind::Image]),
        },
        delivery: DeliveryCapabilities {
            modes: vec![DeliveryMode::Immediate, DeliveryMode::Manual],
            queue: Some(true),
        },
        events: EventCapabilities {
            emits: vec![AgentSessionEventType::StatusChanged],
        },
        actions: Some(ActionCapabilities {
            invoke: Some(true),
            expose: Some(false),
        }),
        lifecycle: LifecycleCapabilities {
            release: true,
            pause: Some(false),
            resume: Some(true),
            fork: Some(true),
            snapshot: Some(false),
        },
    }
}

fn ag_ui() -> AgUiCapabilities {
    AgUiCapabilities {
        identity: object(),
        transport: object(),
        tools: object(),
        output: object(),
        state: object(),
        multi_agent: object(),
        reasoning: object(),
        multimodal: object(),
        execution: object(),
        human_in_the_loop: object(),
        custom: object(),
    }
}

fn placement() -> relay_contracts::hosts::Placement {
    relay_contracts::hosts::Placement {
        host: some("host-1"),
        labels: [("gpu".to_string(), "a100".to_string())].into(),
    }
}

fn agent() -> Agent {
    Agent {
        agent_id: "a1".into(),
        session_id: "s1".into(),
        adapter_id: "claude".into(),
        adapter_name: "Claude".into(),
        adapter_session_id: some("as1"),
        client_id: some("c1"),
        compression_mode: some("auto"),
        created_at: 1_700_000_000_000,
        cwd: some("/work"),
        harness_id: some("h1"),
        last_activity_at: 1_700_000_000_001,
        model: some("opus"),
        persona_id: some("p1"),
        profile_id: some("pr1"),
        provider_config_id: some("pc1"),
        role: AgentRole::Lead,
        status: AgentRecordStatus::Idle,
        capabilities: Some(capabilities()),
        agent_capabilities: Some(ag_ui()),
        handle: some("bob"),
        spawned_by: some("lead1"),
        host_id: some("host-1"),
        offline_since: Some(1_700_000_000_002),
        placement: Some(placement()),
        reported_status: Some(relay_contracts::session::AgentStatus::Waiting),
        reported_status_at: Some(1_700_000_000_003),
    }
}

fn preview() -> Preview {
    Preview {
        message_count: 2,
        first_user_message: some("hello"),
    }
}

fn session() -> Session {
    Session {
        session_id: "s1".into(),
        status: SessionStatus::Active,
        title: some("title"),
        adapter_id: some("claude"),
        adapter_name: some("Claude"),
        adapter_session_id: some("as1"),
        agents: vec![agent()],
        approval_policy_override: Some(ApprovalPolicy::AlwaysAsk),
        branch_kind: Some(BranchKind::Fork),
        client_account_id: some("acct"),
        client_id: some("c1"),
        created_at: 1_700_000_000_000,
        execution_target_id: some("local"),
        fork_point_message_id: some("m0"),
        fork_transforms: Some(json!([{"kind": "drop"}])),
        is_imported: Some(false),
        is_orchestrated: Some(true),
        last_activity_at: 1_700_000_000_001,
        last_client_identity_observation: Some(json!({"client": "cli"})),
        lead_agent_id: some("a1"),
        parent_session_id: some("s0"),
        root_session_id: some("s0"),
        spawning_tool_call_id: some("call-1"),
        summary: some("summary"),
        summary_updated_at: Some(1_700_000_000_002),
        target_working_directory: some("/work"),
        origin_window_id: some("w1"),
        preview: Some(preview()),
    }
}

fn message() -> Message {
    Message {
        message_id: "m1".into(),
        session_id: "s1".into(),
        turn_id: some("t1"),
        role: MessageRole::Assistant,
        blocks: vec![json!({"type": "text", "text": "hi"})],
        content_text: "hi".into(),
        agent_id: some("a1"),
        adapter_message_id: some("am1"),
        adapter_session_id: some("as1"),
        edit_of: some("m0"),
        origin: Some(Origin::Text),
        timestamp: 1_700_000_000_000,
        target_agent_ids: Some(vec!["a1".into()]),
        delivery_mode: Some(DeliveryMode::NextMessage),
        relay: Some(relay_contracts::messaging::RelayContext {
            message_id: "rm1".into(),
            reason: "dm".into(),
            from: relay_contracts::messaging::Sender {
                kind: "agent".into(),
                id: "a2".into(),
                handle: some("bob"),
            },
            conversation: "dm:@a1,@bob".into(),
            channel: None,
            thread_id: None,
            hop: 0,
            priority: None,
            deadline: None,
        }),
        priority: Some(relay_contracts::messaging::Priority::High),
        deadline: some("2026-11-25T18:00:00Z"),
    }
}

fn turn() -> Turn {
    Turn {
        turn_id: "t1".into(),
        session_id: "s1".into(),
        turn_number: 1,
        status: TurnStatus::Completed,
        started_at: 1_700_000_000_000,
        completed_at: Some(1_700_000_000_500),
        error: some("boom"),
        usage: Some(json!({"inputTokens": 10})),
    }
}

/// `extra` stays empty: unknown keys are the one part of the contract the proto cannot hold.
fn selection() -> AgentSelection {
    AgentSelection {
        kind: "adapter".into(),
        adapter_id: some("claude"),
        adapter_name: some("Claude"),
        model: some("opus"),
        provider_config_id: some("pc1"),
        persona_id: some("p1"),
        cwd: some("/work"),
        allowed_tools: Some(vec!["Read".into()]),
        disallowed_tools: Some(vec!["Bash".into()]),
        allowed_directories: Some(vec!["/work".into()]),
        reasoning_effort: Some(ReasoningEffort::ExtraHigh),
        system_prompt: Some(json!("be brief")),
        extra: Map::new(),
    }
}

fn child() -> ChildSession {
    ChildSession {
        session_id: "s2".into(),
        branch_kind: Some(BranchKind::Branch),
        fork_point_message_id: some("m1"),
        has_children: false,
        message_count: 0,
        title: some("child"),
        spawning_tool_call_id: some("call-1"),
    }
}

fn delivery_record() -> delivery::Delivery {
    delivery::Delivery {
        delivery_id: "d1".into(),
        message_id: "m1".into(),
        session_id: "s1".into(),
        agent_id: "a1".into(),
        mode: DeliveryMode::OnIdle,
        status: delivery::DeliveryStatus::Deferred,
        attempts: 2,
        available_at: 1_700_000_000_100,
        reason: some("busy"),
        retryable: Some(true),
        metadata: Some(json!({"trace": "t1"})),
        created_at: 1_700_000_000_000,
        updated_at: 1_700_000_000_050,
    }
}

fn permission_record() -> permission::Permission {
    permission::Permission {
        request_id: "r1".into(),
        agent_id: "a1".into(),
        session_id: "s1".into(),
        tool: "Bash".into(),
        command: some("rm -rf build"),
        file_path: some("/work/build"),
        description: "remove the build dir".into(),
        risk_level: permission::Risk::High,
        status: permission::Decision::Approved,
        decided_by: some("human"),
        reason: some("fine"),
        requested_at: 1_700_000_000_000,
        decided_at: Some(1_700_000_000_500),
        expires_at: Some(1_700_000_300_000),
    }
}

fn question() -> permission::Question {
    permission::Question {
        question_id: "q1".into(),
        agent_id: "a1".into(),
        session_id: "s1".into(),
        question: "Proceed?".into(),
        options: vec!["yes".into(), "no".into()],
        status: permission::QuestionStatus::Answered,
        answer: some("yes"),
        asked_at: 1_700_000_000_000,
        answered_at: Some(1_700_000_000_500),
        expires_at: Some(1_700_000_300_000),
    }
}

fn cost_model() -> cost::CostModel {
    cost::CostModel {
        model: "claude-sonnet-4-5".into(),
        input_per1_m: 3.0,
        output_per1_m: 15.0,
        cache_read_per1_m: Some(0.3),
        cache_write_per1_m: Some(3.75),
        context_window: Some(200_000),
    }
}

fn breakdown() -> cost::Breakdown {
    cost::Breakdown {
        input_tokens: 100,
        output_tokens: 50,
        cache_read_tokens: 10,
        cache_write_tokens: 5,
        total_tokens: 165,
        estimated_cost_usd: 0.0012,
        events: 2,
    }
}

fn context_state() -> cost::ContextWindowState {
    cost::ContextWindowState {
        current_tokens: 150_000,
        last_updated_at: 1_700_000_000_000,
        level: cost::ContextLevel::Warn,
        max_tokens: 200_000,
        percentage: 75.0,
    }
}

fn new_event() -> events::NewEvent {
    events::NewEvent {
        event_id: some("e1"),
        event_type: "tool.called".into(),
        ts: Some(1_700_000_000_000),
        session_id: some("s1"),
        agent_name: some("coder"),
        agent_id: some("a1"),
        workspace: some("default"),
        payload: json!({"tool": "Bash"}),
    }
}

fn event() -> events::Event {
    events::Event {
        seq: 42,
        event_id: "e1".into(),
        event_type: "tool.called".into(),
        ts: 1_700_000_000_000,
        session_id: some("s1"),
        session_seq: Some(7),
        agent_name: some("coder"),
        agent_id: some("a1"),
        workspace: some("default"),
        payload: json!({"tool": "Bash"}),
    }
}

fn appended() -> events::Appended {
    events::Appended {
        event_id: "e1".into(),
        seq: 42,
        duplicate: false,
    }
}

// ---------------------------------------------------------------------------------------------
// The comparison

/// A Rust contract type, seen through a sample value.
struct Contract {
    /// The proto message's name: the Rust type's, unless given to `contract_named`.
    name: &'static str,
    sample: Map<String, Value>,
    /// Keys the type reads back fine without: `Option` and `#[serde(default)]` fields.
    optional: BTreeSet<String>,
}

/// Pairs `T` with the proto message of the same name.
fn contract<T: Serialize + DeserializeOwned>(sample: T) -> Contract {
    contract_named(std::any::type_name::<T>().rsplit("::").next().unwrap(), sample)
}

/// Pairs `T` with the proto message `name`, for a Rust name another contract module already
/// gives a different shape in `relay.v1`.
fn contract_named<T: Serialize + DeserializeOwned>(name: &'static str, sample: T) -> Contract {
    let Value::Object(sample) = serde_json::to_value(&sample).unwrap() else {
        panic!("{name}: the sample does not serialize to a JSON object");
    };
    let read_back = |obj: Map<String, Value>| serde_json::from_value::<T>(Value::Object(obj));
    if let Err(e) = read_back(sample.clone()) {
        panic!("{name}: the sample does not read back: {e}");
    }
    let optional = sample
        .keys()
        .filter(|key| {
            let mut without = sample.clone();
            without.remove(*key);
            read_back(without).is_ok()
        })
        .cloned()
        .collect();
    Contract { name, sample, optional }
}

fn descriptor_set() -> FileDescriptorSet {
    FileDescriptorSet::decode(relay_proto::FILE_DESCRIPTOR_SET).expect("FILE_DESCRIPTOR_SET decodes")
}

/// The messages of `relay.v1` in every file, nested ones (map entries) included, by full name
/// (`.relay.v1.Session`, `.relay.v1.CostReport.ByAgentEntry`), as field type names use.
fn messages(fds: &FileDescriptorSet) -> BTreeMap<String, &DescriptorProto> {
    fn add<'a>(scope: &str, found: &'a [DescriptorProto], into: &mut BTreeMap<String, &'a DescriptorProto>) {
        for m in found {
            let name = format!("{scope}.{}", m.name());
            add(&name, &m.nested_type, into);
            into.insert(name, m);
        }
    }
    let mut all = BTreeMap::new();
    for file in fds.file.iter().filter(|f| f.package() == PACKAGE) {
        add(&format!(".{PACKAGE}"), &file.message_type, &mut all);
    }
    all
}

/// The synthetic entry message of a `map<K, V>` field, which proto3 JSON writes as an object.
fn map_entry<'a>(
    field: &FieldDescriptorProto,
    messages: &BTreeMap<String, &'a DescriptorProto>,
) -> Option<&'a DescriptorProto> {
    if field.label() != Label::Repeated || field.r#type() != Type::Message {
        return None;
    }
    let entry = messages.get(field.type_name())?;
    entry
        .options
        .as_ref()
        .is_some_and(prost_types::MessageOptions::map_entry)
        .then_some(*entry)
}

/// Every disagreement between the contracts and the descriptor set, one line each.
fn drift(contracts: &[Contract], fds: &FileDescriptorSet) -> BTreeSet<String> {
    let messages = messages(fds);
    let mut problems = BTreeSet::new();
    for c in contracts {
        let Some(msg) = messages.get(&format!(".{PACKAGE}.{}", c.name)) else {
            problems.insert(format!("{}: no proto message of that name in {PACKAGE}", c.name));
            continue;
        };
        compare_object(&c.sample, msg, &messages, &mut problems);
        compare_presence(c, msg, &mut problems);
    }
    let paired: BTreeSet<String> = contracts.iter().map(|c| format!(".{PACKAGE}.{}", c.name)).collect();
    let unpaired: BTreeSet<String> = NO_JSON_TWIN
        .iter()
        .map(|(name, _)| format!(".{PACKAGE}.{name}"))
        .collect();
    for (full_name, msg) in &messages {
        let is_map_entry = msg.options.as_ref().is_some_and(prost_types::MessageOptions::map_entry);
        if !is_map_entry && !paired.contains(full_name) && !unpaired.contains(full_name) {
            problems.insert(format!(
                "{}: proto message with no Rust contract paired in this test",
                msg.name()
            ));
        }
    }
    for full_name in unpaired.intersection(&paired) {
        problems.insert(format!(
            "{full_name}: paired in this test, so drop it from NO_JSON_TWIN"
        ));
    }
    for full_name in unpaired.iter().filter(|n| !messages.contains_key(*n)) {
        problems.insert(format!("{full_name}: in NO_JSON_TWIN but not in the proto"));
    }
    problems
}

fn compare_object(
    obj: &Map<String, Value>,
    msg: &DescriptorProto,
    messages: &BTreeMap<String, &DescriptorProto>,
    problems: &mut BTreeSet<String>,
) {
    let name = msg.name();
    let fields: BTreeMap<&str, &FieldDescriptorProto> = msg.field.iter().map(|f| (f.json_name(), f)).collect();
    let rust_only: Vec<&str> = obj
        .keys()
        .map(String::as_str)
        .filter(|k| !fields.contains_key(k))
        .collect();
    let proto_only: Vec<&str> = fields.keys().copied().filter(|k| !obj.contains_key(*k)).collect();
    if !rust_only.is_empty() {
        problems.insert(format!(
            "{name}: JSON keys of the Rust contract missing from the proto: {rust_only:?}"
        ));
    }
    if !proto_only.is_empty() {
        problems.insert(format!(
            "{name}: proto fields missing from the Rust contract's JSON: {proto_only:?} \
             (or this test's sample leaves them None)"
        ));
    }
    for (key, value) in obj {
        let Some(field) = fields.get(key.as_str()) else {
            continue;
        };
        let at = format!("{name}.{key}");
        if value.is_null() {
            problems.insert(format!(
                "{at}: this test's sample leaves it null; set every Option to Some"
            ));
        } else if let Some(entry) = map_entry(field, messages) {
            compare_map(&at, value, entry, messages, problems);
        } else if field.label() == Label::Repeated {
            match value {
                Value::Array(items) if items.is_empty() => {
                    problems.insert(format!("{at}: this test's sample has an empty list; fill every Vec"));
                }
                Value::Array(items) => {
                    for item in items {
                        compare_value(&at, item, field, messages, problems);
                    }
                }
                _ => {
                    problems.insert(format!("{at}: repeated in the proto, but the Rust JSON is {value}"));
                }
            }
        } else {
            compare_value(&at, value, field, messages, problems);
        }
    }
}

/// A `map<string, V>` field: the Rust JSON must be an object whose values each fit V.
fn compare_map(
    at: &str,
    value: &Value,
    entry: &DescriptorProto,
    messages: &BTreeMap<String, &DescriptorProto>,
    problems: &mut BTreeSet<String>,
) {
    let (Some(key_field), Some(value_field)) = (
        entry.field.iter().find(|f| f.number() == 1),
        entry.field.iter().find(|f| f.number() == 2),
    ) else {
        problems.insert(format!("{at}: map entry {} lacks its key or value field", entry.name()));
        return;
    };
    if key_field.r#type() != Type::String {
        problems.insert(format!(
            "{at}: map key is {}, but the Rust JSON's keys are strings",
            key_field.r#type().as_str_name()
        ));
    }
    match value {
        Value::Object(map) if map.is_empty() => {
            problems.insert(format!("{at}: this test's sample has an empty map; fill every map"));
        }
        Value::Object(map) => {
            for (key, item) in map {
                compare_value(&format!("{at}.{key}"), item, value_field, messages, problems);
            }
        }
        _ => {
            problems.insert(format!("{at}: a map in the proto, but the Rust JSON is {value}"));
        }
    }
}
/// Whether one JSON value (a list item for repeated fields) fits the field's proto3 JSON form.
fn compare_value(
    at: &str,
    value: &Value,
    field: &FieldDescriptorProto,
    messages: &BTreeMap<String, &DescriptorProto>,
    problems: &mut BTreeSet<String>,
) {
    let fits = match field.r#type() {
        Type::String | Type::Bytes | Type::Enum => value.is_string(),
        Type::Bool => value.is_boolean(),
        Type::Int32 | Type::Int64 | Type::Sint32 | Type::Sint64 | Type::Sfixed32 | Type::Sfixed64 => value.is_i64(),
        Type::Uint32 | Type::Uint64 | Type::Fixed32 | Type::Fixed64 => value.is_u64(),
        Type::Double | Type::Float => value.is_number(),
        Type::Message | Type::Group => match field.type_name() {
            ".google.protobuf.Value" => true,
            ".google.protobuf.Struct" => value.is_object(),
            ".google.protobuf.ListValue" => value.is_array(),
            type_name => match (value, messages.get(type_name)) {
                (Value::Object(obj), Some(nested)) => {
                    compare_object(obj, nested, messages, problems);
                    true
                }
                (_, None) => {
                    problems.insert(format!(
                        "{at}: {type_name} is outside {PACKAGE}; teach this test its JSON form"
                    ));
                    true
                }
                _ => false,
            },
        },
    };
    if !fits {
        let proto_type = match field.r#type() {
            Type::Message | Type::Enum => field.type_name().to_string(),
            t => t.as_str_name().to_string(),
        };
        problems.insert(format!(
            "{at}: the proto's {proto_type} cannot hold the Rust JSON value {value}"
        ));
    }
}

fn compare_presence(c: &Contract, msg: &DescriptorProto, problems: &mut BTreeSet<String>) {
    for field in &msg.field {
        let key = field.json_name();
        if !c.sample.contains_key(key) {
            continue; // already reported as a missing key
        }
        let repeated = field.label() == Label::Repeated;
        let message = field.r#type() == Type::Message && !repeated;
        let optional = field.proto3_optional();
        if c.optional.contains(key) && !(optional || message || repeated) {
            problems.insert(format!(
                "{}.{key}: optional in the Rust contract but without presence in the proto: declare it \
                 `optional`, or a gateway that emits default values sends a zero for an absent value",
                c.name
            ));
        }
        if !c.optional.contains(key) && optional {
            problems.insert(format!(
                "{}.{key}: required in the Rust contract but `optional` in the proto: drop `optional`",
                c.name
            ));
        }
    }
}

/// One rpc as the drift check sees it: (service, rpc, request, response), where a streamed side
/// is written `stream X`.
type RpcSig = (String, String, String, String);

/// Every rpc the proto should have, with the subjects its comment should name: one per
/// declaration in `relay_contracts::rpc` that names a gRPC twin, plus the streaming
/// `EventService.Subscribe`, which has no NATS request behind it.
fn expected_rpcs() -> BTreeMap<RpcSig, Vec<&'static str>> {
    let declared = rpc::ALL.iter().filter_map(|r| {
        let (service, method) = r.grpc?;
        let sig = (
            service.to_string(),
            method.to_string(),
            proto_message(r.request),
            proto_message(r.response),
        );
        Some((sig, vec![r.subject]))
    });
    let subscribe = (
        (
            "EventService".to_string(),
            "Subscribe".to_string(),
            "SubscribeRequest".to_string(),
            "stream Event".to_string(),
        ),
        vec![rpc::EventSince::SUBJECT, LIVE_EVENTS],
    );
    declared.chain([subscribe]).collect()
}

/// The words of a comment's first line, without the punctuation around them.
fn first_line_words(comment: &str) -> BTreeSet<&str> {
    comment
        .trim_start()
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .map(|w| w.trim_matches(|c| matches!(c, ',' | ':' | ';' | '.' | '(' | ')' | '`')))
        .collect()
}

/// The rpcs of every `relay.v1` service, each with its leading comment.
fn proto_rpcs(fds: &FileDescriptorSet) -> BTreeMap<RpcSig, String> {
    let mut rpcs = BTreeMap::new();
    for file in fds.file.iter().filter(|f| f.package() == PACKAGE) {
        // Source locations are paths of field numbers: 6 is FileDescriptorProto.service,
        // 2 is ServiceDescriptorProto.method.
        let comment = |path: &[i32]| {
            file.source_code_info
                .iter()
                .flat_map(|info| &info.location)
                .find(|l| l.path == path)
                .map(|l| l.leading_comments().to_string())
                .unwrap_or_default()
        };
        for (si, service) in file.service.iter().enumerate() {
            for (mi, m) in service.method.iter().enumerate() {
                let side = |t: &str, streaming: bool| {
                    let short = t.trim_start_matches(&format!(".{PACKAGE}.")).to_string();
                    if streaming { format!("stream {short}") } else { short }
                };
                let sig = (
                    service.name().to_string(),
                    m.name().to_string(),
                    side(m.input_type(), m.client_streaming()),
                    side(m.output_type(), m.server_streaming()),
                );
                rpcs.insert(sig, comment(&[6, si as i32, 2, mi as i32]));
            }
        }
    }
    rpcs
}

fn rpc_drift(fds: &FileDescriptorSet) -> BTreeSet<String> {
    let proto = proto_rpcs(fds);
    let expected = expected_rpcs();
    let mut problems = BTreeSet::new();
    for ((service, rpc, req, resp), subjects) in &expected {
        let sig = (service.clone(), rpc.clone(), req.clone(), resp.clone());
        let Some(comment) = proto.get(&sig) else {
            problems.insert(format!("rpc {service}.{rpc}({req}) returns ({resp}) is missing"));
            continue;
        };
        let words = first_line_words(comment);
        for subject in subjects {
            if !words.contains(subject) {
                problems.insert(format!(
                    "rpc {service}.{rpc}: the first line of its comment does not name {subject}: {comment:?}"
                ));
            }
        }
    }
    for (service, rpc, req, resp) in proto.keys().filter(|sig| !expected.contains_key(*sig)) {
        problems.insert(format!(
            "rpc {service}.{rpc}({req}) returns ({resp}) matches no subject in this test's tables"
        ));
    }
    problems
}

fn report(what: &str, problems: &BTreeSet<String>) {
    assert!(
        problems.is_empty(),
        "{what}: proto/relay/v1 and crates/contracts disagree ({} problems):\n  - {}\n\
         The JSON contracts are the source of truth: update the proto (or this test's samples).",
        problems.len(),
        problems.iter().cloned().collect::<Vec<_>>().join("\n  - ")
    );
}

// ---------------------------------------------------------------------------------------------
// Tests

#[test]
fn every_proto_message_matches_its_json_contract() {
    report("messages", &drift(&contracts(), &descriptor_set()));
}

#[test]
fn every_service_has_one_rpc_per_subject() {
    report("services", &rpc_drift(&descriptor_set()));
}

/// `msg` is a message's path below the package: `Session`, or `CostReport.ByAgentEntry`.
fn field_mut<'a>(fds: &'a mut FileDescriptorSet, msg: &str, field: &str) -> &'a mut FieldDescriptorProto {
    let mut path = msg.split('.');
    let outer = path.next().unwrap();
    let mut m = fds
        .file
        .iter_mut()
        .flat_map(|f| &mut f.message_type)
        .find(|m| m.name() == outer)
        .unwrap();
    for inner in path {
        m = m.nested_type.iter_mut().find(|n| n.name() == inner).unwrap();
    }
    m.field.iter_mut().find(|f| f.name() == field).unwrap()
}

/// The check itself must be able to fail: corrupt a copy of the descriptor set in four ways.
/// The gateway routes each unary rpc to the subject `relay_proto::unary_rpcs()` names: that
/// table must hold exactly the unary rpcs of the proto, each with the one subject its comment
/// names.
#[test]
fn the_gateway_rpc_table_routes_every_unary_rpc_to_its_subject() {
    let expected: BTreeSet<(String, String, String)> = expected_rpcs()
        .into_iter()
        .filter(|((_, _, _, resp), _)| !resp.starts_with("stream "))
        .map(|((service, rpc, _, _), subjects)| {
            assert_eq!(subjects.len(), 1, "{service}.{rpc} is unary but names {subjects:?}");
            (service, rpc, subjects[0].to_string())
        })
        .collect();
    let table: BTreeSet<(String, String, String)> = relay_proto::unary_rpcs()
        .map(|(s, r, subj)| (s.to_string(), r.to_string(), subj.to_string()))
        .collect();
    assert_eq!(
        table.len(),
        relay_proto::unary_rpcs().count(),
        "the declarations name an rpc twice"
    );
    let missing: Vec<_> = expected.difference(&table).collect();
    let extra: Vec<_> = table.difference(&expected).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "the declared gRPC twins differ from the proto services: missing {missing:?}, extra {extra:?}"
    );
}

#[test]
fn the_drift_check_reports_renamed_fields_wrong_types_and_lost_presence() {
    let mut fds = descriptor_set();
    let title = field_mut(&mut fds, "Session", "title");
    title.name = Some("headline".into());
    title.json_name = Some("headline".into());
    field_mut(&mut fds, "StatusCounts", "active").r#type = Some(Type::String as i32);
    field_mut(&mut fds, "Turn", "completed_at").proto3_optional = Some(false);
    // A map's values are checked too.
    let value = field_mut(&mut fds, "CostReport.ByAgentEntry", "value");
    value.r#type = Some(Type::String as i32);
    value.type_name = None;

    let problems = drift(&contracts(), &fds);
    let expected = [
        r#"Session: JSON keys of the Rust contract missing from the proto: ["title"]"#,
        r#"Session: proto fields missing from the Rust contract's JSON: ["headline"]"#,
        "StatusCounts.active: the proto's TYPE_STRING cannot hold the Rust JSON value 1",
        "Turn.completedAt: optional in the Rust contract but without presence in the proto",
        "CostReport.byAgent.a1: the proto's TYPE_STRING cannot hold the Rust JSON value {",
    ];
    for line in expected {
        assert!(
            problems.iter().any(|p| p.starts_with(line)),
            "no problem starts with {line:?} in {problems:#?}"
        );
    }
}

fn method_mut<'a>(fds: &'a mut FileDescriptorSet, service: &str, rpc: &str) -> &'a mut MethodDescriptorProto {
    fds.file
        .iter_mut()
        .flat_map(|f| &mut f.service)
        .filter(|s| s.name() == service)
        .flat_map(|s| &mut s.method)
        .find(|m| m.name() == rpc)
        .unwrap()
}

/// The rpc check must be able to fail too: a unary Subscribe, a renamed rpc, a comment that
/// names another subject.
#[test]
fn the_rpc_check_reports_streaming_names_and_subjects() {
    let mut fds = descriptor_set();
    method_mut(&mut fds, "EventService", "Subscribe").server_streaming = Some(false);
    method_mut(&mut fds, "PermissionService", "ListQuestions").name = Some("QuestionList".into());
    for file in &mut fds.file {
        for loc in file.source_code_info.iter_mut().flat_map(|i| &mut i.location) {
            if loc.leading_comments() == " delivery.get\n" {
                loc.leading_comments = Some(" delivery.list\n".into());
            }
        }
    }

    let problems = rpc_drift(&fds);
    let expected = [
        "rpc EventService.Subscribe(SubscribeRequest) returns (stream Event) is missing",
        "rpc EventService.Subscribe(SubscribeRequest) returns (Event) matches no subject",
        "rpc PermissionService.ListQuestions(PermissionListRequest) returns (QuestionList) is missing",
        "rpc PermissionService.QuestionList(PermissionListRequest) returns (QuestionList) matches no subject",
        "rpc DeliveryService.Get: the first line of its comment does not name delivery.get",
    ];
    for line in expected {
        assert!(
            problems.iter().any(|p| p.starts_with(line)),
            "no problem starts with {line:?} in {problems:#?}"
        );
    }
}

#[test]
fn declared_types_name_their_proto_messages() {
    assert_eq!(
        proto_message(rpc::find("permission.list").unwrap().request),
        "PermissionListRequest"
    );
    assert_eq!(LIVE_EVENTS, relay_contracts::subjects::event::committed_subject(">"));
}

/// The generated types round-trip through the protobuf encoding and the service names are the
/// proto's (what gRPC reflection and routing see).
#[test]
fn generated_code_is_usable() {
    use relay_proto::v1;
    let session = v1::Session {
        session_id: "s1".into(),
        status: "active".into(),
        title: Some("t".into()),
        agents: vec![v1::Agent {
            agent_id: "a1".into(),
            ..Default::default()
        }],
        ..Default::default()
    };
    assert_eq!(
        v1::Session::decode(session.encode_to_vec().as_slice()).unwrap(),
        session
    );
    let event = v1::Event {
        seq: 42,
        r#type: "tool.called".into(),
        payload: Some(prost_types::Struct {
            fields: [(
                "tool".to_string(),
                prost_types::Value {
                    kind: Some(prost_types::value::Kind::StringValue("Bash".into())),
                },
            )]
            .into(),
        }),
        ..Default::default()
    };
    assert_eq!(v1::Event::decode(event.encode_to_vec().as_slice()).unwrap(), event);
    let report = v1::CostReport {
        by_agent: [("a1".to_string(), v1::Breakdown::default())].into(),
        ..Default::default()
    };
    assert_eq!(
        v1::CostReport::decode(report.encode_to_vec().as_slice()).unwrap(),
        report
    );
    assert_eq!(v1::session_service_server::SERVICE_NAME, "relay.v1.SessionService");
    assert_eq!(v1::delivery_service_server::SERVICE_NAME, "relay.v1.DeliveryService");
    assert_eq!(v1::agent_service_server::SERVICE_NAME, "relay.v1.AgentService");
    assert_eq!(
        v1::permission_service_server::SERVICE_NAME,
        "relay.v1.PermissionService"
    );
    assert_eq!(v1::cost_service_server::SERVICE_NAME, "relay.v1.CostService");
    assert_eq!(v1::event_service_server::SERVICE_NAME, "relay.v1.EventService");
}
