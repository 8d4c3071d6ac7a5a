//! The proto twin must not drift from the JSON contracts in `relay-contracts`.
//!
//! Each Rust contract type is paired with the proto message of the same name in `relay.v1`. A
//! sample value of the Rust type, with every `Option` set and every `Vec` non-empty, is
//! serialized with serde and compared with the message's descriptor (decoded from
//! `relay_proto::FILE_DESCRIPTOR_SET`):
//!
//! * keys: the sample's JSON keys must be exactly the proto3 JSON names of the fields;
//! * shapes: each JSON value must fit its field (string, bool, integer, list, nested message,
//!   or any JSON for `google.protobuf.Value`); nested messages are compared the same way;
//! * presence: a key the Rust type can do without (`Option`, `#[serde(default)]`, found by
//!   deleting it from the sample and reading the rest back) must be `optional`, a message or a
//!   list in the proto, and a key it requires must not be `optional`. This is what lets a
//!   gateway emit default values for fields without presence and nothing for unset ones.
//!
//! Every proto message must be paired here, and the service's rpcs must match the subject table
//! below. There are no per-field allowances: the polymorphic JSON fields (`message`,
//! `initialMessage`, `agentIds`, the tri-state fields of `UpdateRequest`) are
//! `google.protobuf.Value` in the proto, which holds any JSON. The one thing the proto cannot
//! carry is the unknown keys `AgentSelection` keeps (`#[serde(flatten)] extra`); its sample leaves
//! `extra` empty, and the proto documents that such keys are dropped.

use prost::Message as _;
use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, FieldDescriptorProto, FileDescriptorSet};
use relay_contracts::capabilities::*;
use relay_contracts::session::*;
use relay_contracts::subjects::session as subject;
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
        }),
        contract(AttachResponse {
            agent_id: "a1".into(),
            adapter_session_id: "as1".into(),
            role: AgentRole::Lead,
            message_id: some("m1"),
            turn_id: some("t1"),
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
        }),
        contract(SendMessageResponse {
            message_id: "m1".into(),
            session_id: "s1".into(),
            turn_id: "t1".into(),
            delivery_ids: Some(vec!["d1".into()]),
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
    ]
}

/// One rpc per registry subject: (subject, request message, response message), as the
/// registry's handlers take and return them (services/session-registry/src/lib.rs). The rpc's
/// name is the subject in PascalCase without `session.`: `session.agent.attach` is AgentAttach.
const RPCS: &[(&str, &str, &str)] = &[
    (subject::CREATE, "CreateRequest", "SessionIdResponse"),
    (subject::GET, "SessionRef", "GetResponse"),
    (subject::LIST, "ListRequest", "ListResponse"),
    (subject::UPDATE, "UpdateRequest", "SuccessResponse"),
    (subject::CLOSE, "CloseRequest", "SuccessResponse"),
    (subject::RESUME, "SessionRef", "SuccessResponse"),
    (subject::ARCHIVE, "SessionRef", "SuccessResponse"),
    (subject::PURGE, "SessionRef", "PurgeResponse"),
    (subject::FORK, "ForkRequest", "SessionIdResponse"),
    (subject::MERGE, "MergeRequest", "MergeResponse"),
    (subject::ABANDON, "AbandonRequest", "SuccessResponse"),
    (subject::GET_CHILDREN, "SessionRef", "GetChildrenResponse"),
    (subject::GET_STATUS_COUNTS, "StatusCountsRequest", "StatusCounts"),
    (
        subject::GET_BY_ADAPTER_SESSION_ID,
        "GetByAdapterSessionIdRequest",
        "GetResponse",
    ),
    (subject::SEARCH, "SearchRequest", "ListResponse"),
    (subject::AGENT_ATTACH, "AttachRequest", "AttachResponse"),
    (subject::AGENT_RELEASE, "ReleaseRequest", "SuccessResponse"),
    (subject::AGENT_CAPABILITIES, "AgentRef", "CapabilitiesResponse"),
    (
        subject::AGENT_DECLARE_CAPABILITIES,
        "DeclareCapabilitiesRequest",
        "CapabilitiesResponse",
    ),
    (subject::SEND_MESSAGE, "SendMessageRequest", "SendMessageResponse"),
    (subject::TURNS, "SessionRef", "TurnsResponse"),
    (subject::MESSAGES, "MessagesRequest", "MessagesResponse"),
];

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

// ---------------------------------------------------------------------------------------------
// The comparison

/// A Rust contract type, seen through a sample value.
struct Contract {
    /// The Rust type's name, which is also its proto message's name.
    name: &'static str,
    sample: Map<String, Value>,
    /// Keys the type reads back fine without: `Option` and `#[serde(default)]` fields.
    optional: BTreeSet<String>,
}

fn contract<T: Serialize + DeserializeOwned>(sample: T) -> Contract {
    let name = std::any::type_name::<T>().rsplit("::").next().unwrap();
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

/// The messages of `relay.v1`, by full name (`.relay.v1.Session`), as field type names use.
fn messages(fds: &FileDescriptorSet) -> BTreeMap<String, &DescriptorProto> {
    fds.file
        .iter()
        .filter(|f| f.package() == PACKAGE)
        .flat_map(|f| &f.message_type)
        .map(|m| (format!(".{PACKAGE}.{}", m.name()), m))
        .collect()
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
    let paired: BTreeSet<&str> = contracts.iter().map(|c| c.name).collect();
    for msg in messages.values() {
        if !paired.contains(msg.name()) {
            problems.insert(format!(
                "{}: proto message with no Rust contract paired in this test",
                msg.name()
            ));
        }
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

/// `session.agent.attach` → `AgentAttach`, `session.getChildren` → `GetChildren`.
fn rpc_name(subject: &str) -> String {
    let key = subject.strip_prefix("session.").expect("a session subject");
    key.split(['.', '_'])
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

fn rpc_drift(fds: &FileDescriptorSet) -> BTreeSet<String> {
    let services: Vec<_> = fds
        .file
        .iter()
        .filter(|f| f.package() == PACKAGE)
        .flat_map(|f| &f.service)
        .collect();
    let [service] = services.as_slice() else {
        return BTreeSet::from([format!(
            "{PACKAGE} should declare exactly one service, not {}",
            services.len()
        )]);
    };
    let proto: BTreeSet<(String, String, String)> = service
        .method
        .iter()
        .map(|m| {
            let short = |t: &str| t.trim_start_matches(&format!(".{PACKAGE}.")).to_string();
            (m.name().to_string(), short(m.input_type()), short(m.output_type()))
        })
        .collect();
    let expected: BTreeSet<(String, String, String)> = RPCS
        .iter()
        .map(|(s, req, resp)| (rpc_name(s), req.to_string(), resp.to_string()))
        .collect();
    let mut problems = BTreeSet::new();
    for (rpc, req, resp) in expected.difference(&proto) {
        problems.insert(format!(
            "rpc {rpc}({req}) returns ({resp}) is missing from {}",
            service.name()
        ));
    }
    for (rpc, req, resp) in proto.difference(&expected) {
        problems.insert(format!(
            "rpc {rpc}({req}) returns ({resp}) in {} matches no registry subject",
            service.name()
        ));
    }
    problems
}

fn report(what: &str, problems: &BTreeSet<String>) {
    assert!(
        problems.is_empty(),
        "{what}: proto/relay/v1/session.proto and services/contracts disagree ({} problems):\n  - {}\n\
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
fn the_service_has_one_rpc_per_registry_subject() {
    report("service", &rpc_drift(&descriptor_set()));
}

fn field_mut<'a>(fds: &'a mut FileDescriptorSet, msg: &str, field: &str) -> &'a mut FieldDescriptorProto {
    let m = fds
        .file
        .iter_mut()
        .flat_map(|f| &mut f.message_type)
        .find(|m| m.name() == msg)
        .unwrap();
    m.field.iter_mut().find(|f| f.name() == field).unwrap()
}

/// The check itself must be able to fail: corrupt a copy of the descriptor set in three ways.
#[test]
fn the_drift_check_reports_renamed_fields_wrong_types_and_lost_presence() {
    let mut fds = descriptor_set();
    let title = field_mut(&mut fds, "Session", "title");
    title.name = Some("headline".into());
    title.json_name = Some("headline".into());
    field_mut(&mut fds, "StatusCounts", "active").r#type = Some(Type::String as i32);
    field_mut(&mut fds, "Turn", "completed_at").proto3_optional = Some(false);

    let problems = drift(&contracts(), &fds);
    let expected = [
        r#"Session: JSON keys of the Rust contract missing from the proto: ["title"]"#,
        r#"Session: proto fields missing from the Rust contract's JSON: ["headline"]"#,
        "StatusCounts.active: the proto's TYPE_STRING cannot hold the Rust JSON value 1",
        "Turn.completedAt: optional in the Rust contract but without presence in the proto",
    ];
    for line in expected {
        assert!(
            problems.iter().any(|p| p.starts_with(line)),
            "no problem starts with {line:?} in {problems:#?}"
        );
    }
}

#[test]
fn rpc_names_follow_the_subjects() {
    assert_eq!(rpc_name(subject::AGENT_ATTACH), "AgentAttach");
    assert_eq!(rpc_name(subject::GET_BY_ADAPTER_SESSION_ID), "GetByAdapterSessionId");
    assert_eq!(rpc_name(subject::USER_MESSAGE_ACKNOWLEDGE), "UserMessageAcknowledge");
}

/// The generated types round-trip through the protobuf encoding and the service name is the
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
    assert_eq!(v1::session_service_server::SERVICE_NAME, "relay.v1.SessionService");
}
