//! Every request/reply subject of the mesh, declared once.
//!
//! Each subject is a zero-sized type implementing [`Rpc`]: its subject string, the service that
//! answers it, its request and reply types, who may call it and whether it acts inside one
//! workspace. Everything else is derived from the declarations in [`with_rpcs!`]:
//!
//! - a service serves it with `host.serve::<SessionFork>(state, lifecycle::fork)`; a handler
//!   whose request or reply type is not the contract's does not compile;
//! - `relay-client` has one typed method per subject (`session_fork`), generated;
//! - the gateway's gRPC bridge and the proto drift test read [`ALL`] (`grpc`);
//! - the docs' subject tables and services diagram are generated from [`ALL`] and the request/reply schemas (a test
//!   fails when they drift).
//!
//! To find the handler of a subject, grep its type name (`SessionFork`): the hits are this
//! declaration, the `serve::<SessionFork>` line that names the handler, and the callers.

use serde::{Serialize, de::DeserializeOwned};

pub use crate::context::Role;

/// Reads: anyone who may look.
pub const READ: &[Role] = &[Role::Viewer, Role::Operator, Role::Service];
/// Reads agents may make too: who else is in the workspace.
pub const LOOK: &[Role] = &[Role::Viewer, Role::Operator, Role::Service, Role::Harness];
/// Changes made by people or by services on their behalf.
pub const OPERATE: &[Role] = &[Role::Operator, Role::Service];
/// What a harness reports about its own agent.
pub const HARNESS: &[Role] = &[Role::Harness, Role::Service];
/// Events: harnesses for their agent, services, and operators' integrations (gRPC `Append`).
pub const REPORT: &[Role] = &[Role::Harness, Role::Service, Role::Operator];
/// Administration: admin keys through the gateway, and relayctl.
pub const ADMIN: &[Role] = &[Role::Admin];
/// Administration that services may do too (webhooks, which hold secrets).
pub const ADMIN_OR_SERVICE: &[Role] = &[Role::Admin, Role::Service];
/// Messages and flushes: people, services and agents.
pub const SEND: &[Role] = &[Role::Operator, Role::Service, Role::Harness];
/// Between the mesh's own services only.
pub const SERVICE: &[Role] = &[Role::Service];

/// The micro service names (`nats micro ls`) that own subjects.
pub mod service {
    pub const SESSION_REGISTRY: &str = "session-registry";
    pub const EVENT_INGEST: &str = "event-ingest";
    pub const DELIVERY_RUNNER: &str = "delivery-runner";
    pub const PERMISSION_MANAGER: &str = "permission-manager";
    pub const COST_AGGREGATOR: &str = "cost-aggregator";
    pub const AGENT_SPAWNER: &str = "agent-spawner";
    pub const AUTOMATION: &str = "automation";
    pub const COORDINATION: &str = "coordination";
}

/// One request/reply subject.
pub trait Rpc: 'static {
    const SUBJECT: &'static str;
    /// The micro service that answers it.
    const SERVICE: &'static str;
    const ROLES: &'static [Role];
    /// Acts on things inside the caller's workspace (false: mesh-wide, like the price table).
    const WORKSPACE_SCOPED: bool;
    const DOC: &'static str;
    /// How long a caller should wait at least (0: the caller's default).
    const MIN_TIMEOUT_SECS: u64;
    type Request: Serialize + DeserializeOwned + Send + Sync + 'static;
    type Response: Serialize + DeserializeOwned + Send + 'static;
}

/// A declaration as data, for tables and drift checks.
#[derive(Debug, Clone, Copy)]
pub struct RpcInfo {
    /// The declared type's name (`SessionFork`).
    pub name: &'static str,
    /// The `relay-client` method (`session_fork`).
    pub method: &'static str,
    pub subject: &'static str,
    pub service: &'static str,
    pub roles: &'static [Role],
    pub workspace_scoped: bool,
    pub doc: &'static str,
    /// The gRPC twin as (service, rpc), if the proto has one.
    pub grpc: Option<(&'static str, &'static str)>,
    /// The request type as written in the declaration (`stringify!`, so `session :: ForkRequest`).
    pub request: &'static str,
    pub response: &'static str,
}

/// The one list of subjects. Call it with a macro that takes the declarations; [`rpc`] makes
/// the types with it, `relay-client` its methods.
///
/// Each entry: doc, `Type method = "subject"`, owner, roles, `workspace` or `mesh`, request and
/// reply types, then an optional gRPC twin and minimum timeout.
#[macro_export]
macro_rules! with_rpcs {
    ($then:ident) => {
        $then! {
            // ---- session registry ---------------------------------------------------------
            /// Creates a session (seed 002); a harness may create its own. Events: `session.created`.
            SessionCreate session_create = "session.create", SESSION_REGISTRY, SEND, workspace,
                session::CreateRequest => session::SessionIdResponse, grpc("SessionService", "Create");
            /// A session by id; `session` is null when unknown or purged.
            SessionGet session_get = "session.get", SESSION_REGISTRY, READ, workspace,
                session::SessionRef => session::GetResponse, grpc("SessionService", "Get");
            /// Sessions by status (`active`, `closed`, `archived`, `discovered`, `all`), newest
            /// first; limit ≤ 500, with offset.
            SessionList session_list = "session.list", SESSION_REGISTRY, READ, workspace,
                session::ListRequest => session::ListResponse, grpc("SessionService", "List");
            /// Changes title, summary, execution target or approval policy override (null clears
            /// it). Events: `session.updated`.
            SessionUpdate session_update = "session.update", SESSION_REGISTRY, OPERATE, workspace,
                session::UpdateRequest => session::SuccessResponse, grpc("SessionService", "Update");
            /// Closes a session. Events: `session.closed`.
            SessionClose session_close = "session.close", SESSION_REGISTRY, OPERATE, workspace,
                session::CloseRequest => session::SuccessResponse, grpc("SessionService", "Close");
            /// Re-opens a closed session. Events: `session.resumed`.
            SessionResume session_resume = "session.resume", SESSION_REGISTRY, OPERATE, workspace,
                session::SessionRef => session::SuccessResponse, grpc("SessionService", "Resume");
            /// Archives a closed session. Events: `session.archived`.
            SessionArchive session_archive = "session.archive", SESSION_REGISTRY, OPERATE, workspace,
                session::SessionRef => session::SuccessResponse, grpc("SessionService", "Archive");
            /// Deletes an archived session with no live children, its registry rows and its events
            /// in the event log. Events: `session.purged`.
            SessionPurge session_purge = "session.purge", SESSION_REGISTRY, OPERATE, workspace,
                session::SessionRef => session::PurgeResponse, grpc("SessionService", "Purge");
            /// A child session from a message of its parent. Events: `session.created`,
            /// `session.forked`.
            SessionFork session_fork = "session.fork", SESSION_REGISTRY, OPERATE, workspace,
                session::ForkRequest => session::SessionIdResponse, grpc("SessionService", "Fork");
            /// Closes a child and hands its summary to the parent. Events: `session.closed`
            /// (child), `session.merged`.
            SessionMerge session_merge = "session.merge", SESSION_REGISTRY, OPERATE, workspace,
                session::MergeRequest => session::MergeResponse, grpc("SessionService", "Merge");
            /// Compresses the session's context with each agent's own compaction (`/compact`
            /// for Claude Code and Codex, `/compress` for Gemini CLI). Events:
            /// `session.compressed`, `session.squash`.
            SessionCompress session_compress = "session.compress", SESSION_REGISTRY, OPERATE, workspace,
                session::CompressRequest => session::CompressResponse, grpc("SessionService", "Compress");
            /// Asks for compression (a person, an extension). Events:
            /// `session.compressionRequested`; the cost aggregator emits it by itself when the
            /// context window turns critical.
            SessionRequestCompression session_request_compression = "session.requestCompression", SESSION_REGISTRY, SEND, workspace,
                session::RequestCompressionRequest => session::SuccessResponse, grpc("SessionService", "RequestCompression");
            /// The system prompt of a session's agent: its profile's prompt, then its
            /// persona's (the ids given, else the lead agent's).
            SessionResolveSystemPrompt session_resolve_system_prompt = "session.resolveSystemPrompt", SESSION_REGISTRY, LOOK, workspace,
                prompts::ResolveSystemPromptRequest => prompts::ResolveSystemPromptResponse, grpc("SessionService", "ResolveSystemPrompt");
            /// Records which client and canonical account are behind a session. Events:
            /// `session.clientAccount.changed` when the account differs from the last one.
            SessionObserveClient session_observe_client = "session.observeClient", SESSION_REGISTRY, OPERATE, workspace,
                session::ObserveClientRequest => session::ObserveClientResponse;
            /// Changes an agent's model or working directory. Events:
            /// `session.connectorSwap.editRequested` (a UI may offer to edit the history).
            SessionAgentSwap session_agent_swap = "session.agent.swap", SESSION_REGISTRY, OPERATE, workspace,
                session::SwapAgentRequest => session::SuccessResponse;
            /// Creates or replaces a persona or profile of the workspace.
            PromptPut prompt_put = "prompt.put", SESSION_REGISTRY, OPERATE, workspace,
                prompts::PutPromptRequest => prompts::Prompt;
            /// One persona or profile.
            PromptGet prompt_get = "prompt.get", SESSION_REGISTRY, LOOK, workspace,
                prompts::PromptRef => prompts::Prompt;
            /// The workspace's personas or profiles.
            PromptList prompt_list = "prompt.list", SESSION_REGISTRY, LOOK, workspace,
                prompts::ListPromptsRequest => prompts::PromptList;
            /// Deletes a persona or profile (agents that name it resolve without it).
            PromptDelete prompt_delete = "prompt.delete", SESSION_REGISTRY, OPERATE, workspace,
                prompts::PromptRef => prompts::PromptDeleted;
            /// Closes a child without a hand-off. Events: `session.closed` (child),
            /// `session.abandoned`.
            SessionAbandon session_abandon = "session.abandon", SESSION_REGISTRY, OPERATE, workspace,
                session::AbandonRequest => session::SuccessResponse, grpc("SessionService", "Abandon");
            /// A session's direct children.
            SessionGetChildren session_get_children = "session.getChildren", SESSION_REGISTRY, READ, workspace,
                session::SessionRef => session::GetChildrenResponse, grpc("SessionService", "GetChildren");
            /// How many sessions are in each status.
            SessionGetStatusCounts session_get_status_counts = "session.getStatusCounts", SESSION_REGISTRY, READ, workspace,
                session::StatusCountsRequest => session::StatusCounts, grpc("SessionService", "GetStatusCounts");
            /// The session an agent CLI's own session id belongs to.
            SessionGetByAdapterSessionId session_get_by_adapter_session_id = "session.getByAdapterSessionId", SESSION_REGISTRY, READ, workspace,
                session::GetByAdapterSessionIdRequest => session::GetResponse, grpc("SessionService", "GetByAdapterSessionId");
            /// Full-text search over titles and messages (web-search syntax), with previews; limit
            /// ≤ 500, with offset.
            SessionSearch session_search = "session.search", SESSION_REGISTRY, READ, workspace,
                session::SearchRequest => session::ListResponse, grpc("SessionService", "Search");
            /// Binds an agent (a harness) to a session. Events: `session.agent.added` (and
            /// `session.turn.started`, `session.user_message.sent` with an initial message).
            SessionAgentAttach session_agent_attach = "session.agent.attach", SESSION_REGISTRY, HARNESS, workspace,
                session::AttachRequest => session::AttachResponse, grpc("SessionService", "AgentAttach");
            /// Unbinds an agent from its session (needs `lifecycle.release`). Events:
            /// `session.agent.removed`.
            SessionAgentRelease session_agent_release = "session.agent.release", SESSION_REGISTRY, SEND, workspace,
                session::ReleaseRequest => session::SuccessResponse, grpc("SessionService", "AgentRelease");
            /// What an agent declared it can do.
            SessionAgentCapabilities session_agent_capabilities = "session.agent.capabilities", SESSION_REGISTRY, SEND, workspace,
                session::AgentRef => session::CapabilitiesResponse, grpc("SessionService", "AgentCapabilities");
            /// An agent declares (again) what it can do. Events: `session.updated`.
            SessionAgentDeclareCapabilities session_agent_declare_capabilities = "session.agent.declareCapabilities", SESSION_REGISTRY, HARNESS, workspace,
                session::DeclareCapabilitiesRequest => session::CapabilitiesResponse, grpc("SessionService", "AgentDeclareCapabilities");
            /// The agents of the caller's workspace with status, handle, session and
            /// capabilities (seed 003's "list all agents"); `live` by default.
            AgentList agent_list = "agent.list", SESSION_REGISTRY, LOOK, workspace,
                session::AgentListRequest => session::AgentListResponse;
            /// One agent by id or handle; `not_found` naming it otherwise.
            AgentGet agent_get = "agent.get", SESSION_REGISTRY, LOOK, workspace,
                session::AgentGetRequest => session::Agent;
            /// Lists an agent's exposed actions in its AG-UI `tools.items` (it must be attached
            /// and declare `actions.expose`), for coordination's `action.expose`. Events:
            /// `session.updated`.
            SessionAgentSetTools session_agent_set_tools = "session.agent.setTools", SESSION_REGISTRY, SERVICE, workspace,
                actions::SetToolsRequest => session::Agent;
            // ---- actions (coordination) -----------------------------------------------------
            /// The calling agent's whole set of actions, replacing what it exposed before (needs
            /// `actions.expose`); each input schema is compiled, remote `$ref`s refused. The
            /// agent's AG-UI `tools.items` lists them.
            ActionExpose action_expose = "action.expose", COORDINATION, HARNESS, workspace,
                actions::ExposeRequest => actions::ActionList;
            /// The actions of the workspace's live agents that the caller may invoke
            /// (`availableTo`), by agent and name.
            ActionList action_list = "action.list", COORDINATION, LOOK, workspace,
                actions::ListActionsRequest => actions::ActionList;
            /// Runs an agent's action as the caller (an agent needs `actions.invoke`): the input
            /// is checked against its schema, `availableTo` against the caller, then the
            /// permission manager's policies (tool `action`, command the action's name): denied,
            /// or `pending` until a person decides. The exposing harness answers within
            /// `timeoutMs`; an agent caller also gets the result as an `action-result` message.
            /// The same `invocationId` again answers with where that invocation is. Events:
            /// `action.invoked`, `action.completed` / `action.failed` / `action.denied`.
            ActionInvoke action_invoke = "action.invoke", COORDINATION, SEND, workspace,
                actions::InvokeRequest => actions::Invocation, timeout(40);
            // ---- consensus (coordination) ---------------------------------------------------
            /// Puts a question with options to a channel's members or a list of agents, who are
            /// asked with a relay message and vote with `relay_vote`. Events:
            /// `consensus.proposed`.
            ConsensusPropose consensus_propose = "consensus.propose", COORDINATION, SEND, workspace,
                consensus::ProposeRequest => consensus::Proposal;
            /// The calling agent's vote (once, while open); at the quorum the proposal resolves.
            /// Events: `consensus.voted`, `consensus.resolved`.
            ConsensusVote consensus_vote = "consensus.vote", COORDINATION, HARNESS, workspace,
                consensus::VoteRequest => consensus::Proposal;
            /// Ends an open proposal without an outcome (its proposer, an operator or a
            /// service). Events: `consensus.resolved` (cancelled).
            ConsensusCancel consensus_cancel = "consensus.cancel", COORDINATION, SEND, workspace,
                consensus::CancelRequest => consensus::Proposal;
            /// One proposal with its votes and tally.
            ConsensusGet consensus_get = "consensus.get", COORDINATION, LOOK, workspace,
                consensus::ProposalRef => consensus::Proposal;
            /// The workspace's proposals, newest first.
            ConsensusList consensus_list = "consensus.list", COORDINATION, LOOK, workspace,
                consensus::ListProposalsRequest => consensus::ProposalList;
            // ---- relay messaging (session registry) ----------------------------------------
            /// Sends a message to `@handle` (DM), a list of handles (group DM), `#channel` or a
            /// thread (`threadId`), as the authenticated caller (an agent needs `messaging.send`).
            /// The message and one delivery per recipient are stored before the reply; a channel
            /// member that cannot take it is a `failed` recipient. Events: `message.exchanged`,
            /// `session.message.sent`, `session.message.received`.
            MessageSend message_send = "message.send", SESSION_REGISTRY, SEND, workspace,
                messaging::SendRequest => messaging::SendResponse;
            /// One relay message with its recipients' outcomes (an agent sees channel messages and
            /// its own DMs).
            MessageGet message_get = "message.get", SESSION_REGISTRY, LOOK, workspace,
                messaging::MessageRef => messaging::RelayMessage;
            /// A thread in order: its root and every reply.
            MessageThread message_thread = "message.thread", SESSION_REGISTRY, LOOK, workspace,
                messaging::MessageRef => messaging::ThreadResponse;
            /// Full-text search (Postgres) over the workspace's relay messages, newest first.
            MessageSearch message_search = "message.search", SESSION_REGISTRY, LOOK, workspace,
                messaging::SearchMessagesRequest => messaging::MessagePage;
            /// `message.send` for the agent or person that asked coordination (a proposal's
            /// question, from its proposer), with the same checks as theirs.
            MessageSendFor message_send_for = "message.sendFor", SESSION_REGISTRY, SERVICE, workspace,
                messaging::SendForRequest => messaging::SendResponse;
            /// How an invocation ended, as a DM from the exposing agent to the invoking one
            /// (reason `action-result`), once per idempotency key; nothing when the invoker was
            /// released. Events: `message.exchanged`.
            MessageActionResult message_action_result = "message.actionResult", SESSION_REGISTRY, SERVICE, workspace,
                messaging::ActionResultRequest => messaging::ActionResultPosted;
            /// Creates a channel; an agent that creates one joins it.
            ChannelCreate channel_create = "channel.create", SESSION_REGISTRY, SEND, workspace,
                messaging::CreateChannelRequest => messaging::Channel;
            /// The workspace's channels (`#general` first), with live member counts.
            ChannelList channel_list = "channel.list", SESSION_REGISTRY, LOOK, workspace,
                messaging::ListChannelsRequest => messaging::ChannelList;
            /// Adds an agent to a channel (an agent joins itself; people and services name it).
            ChannelJoin channel_join = "channel.join", SESSION_REGISTRY, SEND, workspace,
                messaging::MembershipRequest => messaging::MemberList;
            /// Removes an agent from a channel.
            ChannelLeave channel_leave = "channel.leave", SESSION_REGISTRY, SEND, workspace,
                messaging::MembershipRequest => messaging::MemberList;
            /// A channel's live members.
            ChannelMembers channel_members = "channel.members", SESSION_REGISTRY, LOOK, workspace,
                messaging::ChannelRef => messaging::MemberList;
            /// A channel's messages in order (thread replies included), after a cursor.
            ChannelHistory channel_history = "channel.history", SESSION_REGISTRY, LOOK, workspace,
                messaging::HistoryRequest => messaging::MessagePage;
            /// The adapter and model an agent selection resolves to.
            SessionResolveAgentConfig session_resolve_agent_config = "session.resolveAgentConfig", SESSION_REGISTRY, SEND, mesh,
                session::ResolveAgentConfigRequest => session::ResolveAgentConfigResponse;
            /// Stores a message and its deliveries (`agentIds`: a list or `"all"`); answers once
            /// both are durable. Events: `session.created`, `session.agent.added`,
            /// `session.turn.started`, `session.user_message.sent`.
            SessionSendMessage session_send_message = "session.sendMessage", SESSION_REGISTRY, SEND, workspace,
                session::SendMessageRequest => session::SendMessageResponse, grpc("SessionService", "SendMessage");
            /// An agent took a message. Events: `session.user_message.acknowledged`.
            SessionUserMessageAcknowledge session_user_message_acknowledge = "session.user_message.acknowledge", SESSION_REGISTRY, HARNESS, workspace,
                session::AcknowledgeRequest => session::SuccessResponse;
            /// An agent finished a message; the turn completes with the last one. Events:
            /// `session.user_message.completed`, `session.turn.completed`.
            SessionUserMessageComplete session_user_message_complete = "session.user_message.complete", SESSION_REGISTRY, HARNESS, workspace,
                session::CompleteRequest => session::CompleteResponse;
            /// Cancels a running turn (default: the session's) and interrupts its agents' CLIs;
            /// held deliveries stay queued. Events: `session.turn.completed` (outcome
            /// `cancelled`).
            SessionTurnCancel session_turn_cancel = "session.turn.cancel", SESSION_REGISTRY, OPERATE, workspace,
                session::CancelTurnRequest => session::CancelTurnResponse;
            /// A session's turns.
            SessionTurns session_turns = "session.turns", SESSION_REGISTRY, READ, workspace,
                session::SessionRef => session::TurnsResponse, grpc("SessionService", "Turns");
            /// A session's messages, oldest first, with its ancestors' by default; limit ≤ 5,000,
            /// with cursor.
            SessionMessages session_messages = "session.messages", SESSION_REGISTRY, READ, workspace,
                session::MessagesRequest => session::MessagesResponse, grpc("SessionService", "Messages");
            /// Usage totals an adapter reports (seed 002's `session.usage`).
            SessionUsage session_usage = "session.usage", SESSION_REGISTRY, HARNESS, workspace,
                session::UsageRequest => session::UsageResponse;
            /// A session (optionally with ancestors, children, events and tool outputs) as one
            /// portable document.
            SessionSnapshotExport session_snapshot_export = "session.snapshot.export", SESSION_REGISTRY, OPERATE, workspace,
                session::ExportRequest => session::ExportResponse;
            /// Imports a snapshot (`onConflict`: `fail`, `skip`, `overwrite`). Events:
            /// `session.created` for each imported session.
            SessionSnapshotImport session_snapshot_import = "session.snapshot.import", SESSION_REGISTRY, OPERATE, workspace,
                session::ImportRequest => session::ImportResponse;
            /// Checks a snapshot without importing it.
            SessionSnapshotValidate session_snapshot_validate = "session.snapshot.validate", SESSION_REGISTRY, OPERATE, workspace,
                session::ValidateRequest => session::ValidateResponse;

            // ---- agent hosts ----------------------------------------------------------------
            /// A spawner's host as it is now (labels, capacity, load, agents); the reply names
            /// agents the mesh ended while the host was cut off, to stop, and agents re-homed
            /// onto another host meanwhile, to abandon.
            HostHeartbeat host_heartbeat = "host.heartbeat", SESSION_REGISTRY, SERVICE, mesh,
                hosts::Heartbeat => hosts::HeartbeatReply;
            /// The least-loaded online host that runs `cli` and fits `placement`; `unavailable`
            /// naming why each host does not fit.
            HostPlace host_place = "host.place", SESSION_REGISTRY, SERVICE, mesh,
                hosts::PlaceRequest => hosts::PlaceResponse;
            /// The agent hosts, with status, labels, capacity and load.
            HostList host_list = "host.list", SESSION_REGISTRY, READ, mesh,
                hosts::HostListRequest => hosts::HostList;

            // ---- workspaces -----------------------------------------------------------------
            /// Creates a workspace (admin keys of `default`, and relayctl); `conflict` if it
            /// exists. Make its first key with `key.create` naming it.
            WorkspaceCreate workspace_create = "workspace.create", SESSION_REGISTRY, ADMIN, mesh,
                workspace::CreateWorkspaceRequest => workspace::Workspace;
            /// A workspace by name (a key sees only its own).
            WorkspaceGet workspace_get = "workspace.get", SESSION_REGISTRY, ADMIN, mesh,
                workspace::WorkspaceRef => workspace::Workspace;
            /// Every workspace (a key of another workspace than `default`: its own).
            WorkspaceList workspace_list = "workspace.list", SESSION_REGISTRY, ADMIN, mesh,
                workspace::ListWorkspacesRequest => workspace::WorkspaceList;
            /// Replaces a workspace's delivery policy (seed 001 step 3): default mode, allowed
            /// modes, most deliveries waiting per agent.
            WorkspaceSetDeliveryPolicy workspace_set_delivery_policy = "workspace.setDeliveryPolicy", SESSION_REGISTRY, ADMIN, mesh,
                workspace::SetDeliveryPolicyRequest => workspace::Workspace;
            /// Deletes a workspace (not `default`; the mesh's administrators only) once it has
            /// no live agent: its keys are revoked at once, it is not found from then on, its
            /// name is not reused; its sessions and events stay until retention purges them.
            /// Events: `key.revoked` (published) per key.
            WorkspaceDelete workspace_delete = "workspace.delete", SESSION_REGISTRY, ADMIN, mesh,
                workspace::WorkspaceRef => workspace::WorkspaceDeleted;

            // ---- API keys (the gateway's callers) -------------------------------------------
            /// Creates a workspace API key with a role; the reply holds its token, shown once.
            KeyCreate key_create = "key.create", SESSION_REGISTRY, ADMIN, workspace,
                keys::CreateKeyRequest => keys::CreatedKey;
            /// The workspace's keys (never their tokens), newest first.
            KeyList key_list = "key.list", SESSION_REGISTRY, ADMIN, workspace,
                keys::ListKeysRequest => keys::KeyList;
            /// Revokes a key; gateways refuse it from then on and end its streams. Events:
            /// `key.revoked` (published).
            KeyRevoke key_revoke = "key.revoke", SESSION_REGISTRY, ADMIN, workspace,
                keys::KeyRef => keys::ApiKey;
            /// The key a bearer token belongs to (the gateway, on each new token);
            /// `unauthorized` when unknown, wrong or revoked.
            KeyVerify key_verify = "key.verify", SESSION_REGISTRY, &[Role::Service], mesh,
                keys::VerifyKeyRequest => keys::ApiKey;
            /// One key by id, revoked or not (a service checking that the key a schedule or a
            /// webhook acts for still stands); `not_found` when unknown.
            KeyGet key_get = "key.get", SESSION_REGISTRY, &[Role::Service], mesh,
                keys::KeyRef => keys::ApiKey;

            // ---- event log ----------------------------------------------------------------
            /// Appends one event or a batch (≤ 10,000, few enough that the reply fits one NATS
            /// message); answers after commit with their seqs.
            EventAppend event_append = "event.append", EVENT_INGEST, REPORT, workspace,
                events::AppendRequest => events::AppendResponse, grpc("EventService", "Append");
            /// Events by type, agent (name or id), session and time (ts ms), paged; limit ≤ 10,000,
            /// with cursor.
            EventQuery event_query = "event.query", EVENT_INGEST, READ, workspace,
                events::QueryRequest => events::QueryResponse, grpc("EventService", "Query");
            /// Events after a seq (0: from the start), in seq order: the resume cursor of every
            /// stream. A harness reads only its own agent's session (a lead following its workers).
            EventSince event_since = "event.since", EVENT_INGEST, LOOK, workspace,
                events::SinceRequest => events::SinceResponse, grpc("EventService", "Since");
            /// The workspace's audit trail (`audit.recorded` events): decisions, keys,
            /// workspaces, agent stops; oldest first, paged by seq.
            AuditList audit_list = "audit.list", EVENT_INGEST, ADMIN, workspace,
                audit::ListAuditRequest => events::QueryResponse;
            /// Deletes a purged session's events.
            EventPurgeSession event_purge_session = "event.purgeSession", EVENT_INGEST, &[Role::Service], workspace,
                events::PurgeSessionRequest => events::PurgeSessionResponse;

            // ---- deliveries and agent control ---------------------------------------------
            /// A delivery by id (`not_found` if unknown).
            DeliveryGet delivery_get = "delivery.get", DELIVERY_RUNNER, READ, workspace,
                delivery::DeliveryRef => delivery::Delivery, grpc("DeliveryService", "Get");
            /// Deliveries by session, agent, message or status; limit ≤ 1,000, with cursor.
            DeliveryList delivery_list = "delivery.list", DELIVERY_RUNNER, READ, workspace,
                delivery::ListDeliveriesRequest => delivery::ListDeliveriesResponse, grpc("DeliveryService", "List");
            /// Cancels a delivery; `conflict` once delivered or failed.
            DeliveryCancel delivery_cancel = "delivery.cancel", DELIVERY_RUNNER, OPERATE, workspace,
                delivery::CancelDeliveryRequest => delivery::Delivery, grpc("DeliveryService", "Cancel");
            /// Makes a failed or deferred delivery due now, with a fresh attempt budget.
            DeliveryRetry delivery_retry = "delivery.retry", DELIVERY_RUNNER, OPERATE, workspace,
                delivery::DeliveryRef => delivery::Delivery, grpc("DeliveryService", "Retry");
            /// Releases an agent's held deliveries and makes its deferred ones due now.
            DeliveryFlush delivery_flush = "delivery.flush", DELIVERY_RUNNER, SEND, workspace,
                delivery::FlushRequest => delivery::FlushResponse, grpc("DeliveryService", "Flush");
            /// A harness's receipt for a delivery it accepted earlier; `unavailable` (retry) while
            /// the runner has not yet recorded the hand-off.
            DeliveryReport delivery_report = "delivery.report", DELIVERY_RUNNER, HARNESS, workspace,
                delivery::Receipt => delivery::Delivery;
            /// The registry hands over stored messages' deliveries and agent changes, in its
            /// commit order; idempotent (the registry re-sends until answered).
            DeliveryHandoff delivery_handoff = "delivery.handoff", DELIVERY_RUNNER, &[Role::Service], mesh,
                delivery::HandoffRequest => delivery::HandoffResponse;
            /// Deletes a purged session's deliveries (the registry's `session.purge`).
            DeliveryPurge delivery_purge = "delivery.purge", DELIVERY_RUNNER, &[Role::Service], workspace,
                delivery::PurgeDeliveriesRequest => delivery::PurgeDeliveriesResponse;
            /// Holds an agent's deliveries until resumed.
            AgentPause agent_pause = "agent.pause", DELIVERY_RUNNER, OPERATE, workspace,
                delivery::AgentRef => delivery::AgentHold, grpc("AgentService", "Pause");
            /// Sends an agent's held deliveries, in order.
            AgentResume agent_resume = "agent.resume", DELIVERY_RUNNER, OPERATE, workspace,
                delivery::AgentRef => delivery::AgentHold, grpc("AgentService", "Resume");
            /// Releases the agent (its harness exits) and cancels what it was not yet sent. A
            /// harness may stop only its own agent and the agents it spawned (`forbidden`).
            AgentStop agent_stop = "agent.stop", DELIVERY_RUNNER, SEND, workspace,
                delivery::StopAgentRequest => delivery::StopAgentResponse, grpc("AgentService", "Stop");
            /// Interrupts what the agent's CLI is doing now (its harness sends the CLI's own
            /// interrupt); `busy` says whether there was anything to interrupt.
            AgentInterrupt agent_interrupt = "agent.interrupt", DELIVERY_RUNNER, OPERATE, workspace,
                delivery::InterruptRequest => delivery::TurnState;
            /// Raw input typed into an agent's terminal.
            AgentInput agent_input = "agent.input", DELIVERY_RUNNER, OPERATE, workspace,
                delivery::InputRequest => delivery::InputResponse, grpc("AgentService", "Input");
            /// Starts an agent CLI (`cli`: an entry of `[spawner.agents]`) under a harness and
            /// answers once it attached; sends `task` as its first message. A harness may spawn
            /// workers into its own session when its agent declares AG-UI
            /// `multiAgent.delegation` (a lead delegating); they are `spawnedBy` it.
            AgentSpawn agent_spawn = "agent.spawn", AGENT_SPAWNER, SEND, workspace,
                hosts::SpawnRequest => hosts::SpawnResponse, timeout(35);
            /// A spawn placed on one host by the spawner that took `agent.spawn`, or a lost
            /// host's agent the registry re-homed (`rehome`): served by that host's spawner at
            /// `agent.spawnOn.<hostId>`.
            AgentSpawnOn agent_spawn_on = "agent.spawnOn", AGENT_SPAWNER, SERVICE, workspace,
                hosts::PlacedSpawn => hosts::SpawnResponse, timeout(35);

            // ---- permissions and questions ------------------------------------------------
            /// A harness asks whether its agent may use a tool; answers the decision (`approved`,
            /// `denied`, or `pending` for a human). The same `requestId` again answers the stored
            /// request.
            PermissionRequest permission_request = "permission.request", PERMISSION_MANAGER, HARNESS, workspace,
                permission::PermissionRequest => permission::PermissionDecision;
            /// A permission request by id.
            PermissionGet permission_get = "permission.get", PERMISSION_MANAGER, READ, workspace,
                permission::GetPermissionRequest => permission::Permission, grpc("PermissionService", "Get");
            /// Permission requests by status (`pending` default, `approved`, `denied`, `all`),
            /// session or agent, oldest first.
            PermissionList permission_list = "permission.list", PERMISSION_MANAGER, READ, workspace,
                permission::ListRequest => permission::PermissionList, grpc("PermissionService", "List");
            /// Approves a pending permission request; `conflict` when already decided (by policy, a
            /// human or expiry).
            PermissionApprove permission_approve = "permission.approve", PERMISSION_MANAGER, &[Role::Operator], workspace,
                permission::DecideRequest => permission::DecideResponse, grpc("PermissionService", "Approve");
            /// Denies a pending permission request; `conflict` when already decided.
            PermissionDeny permission_deny = "permission.deny", PERMISSION_MANAGER, &[Role::Operator], workspace,
                permission::DecideRequest => permission::DecideResponse, grpc("PermissionService", "Deny");
            /// A harness asks its agent's question of a person; `answer` comes now from a policy,
            /// or later on `agent.<agentId>.question`.
            QuestionAsk question_ask = "question.ask", PERMISSION_MANAGER, HARNESS, workspace,
                permission::QuestionRequest => permission::QuestionReply;
            /// A question by id.
            QuestionGet question_get = "question.get", PERMISSION_MANAGER, READ, workspace,
                permission::GetQuestionRequest => permission::Question, grpc("PermissionService", "GetQuestion");
            /// Questions by status (`pending` default, `answered`, `expired`, `all`), session or
            /// agent.
            QuestionList question_list = "question.list", PERMISSION_MANAGER, READ, workspace,
                permission::ListRequest => permission::QuestionList, grpc("PermissionService", "ListQuestions");
            /// Answers a pending question; `conflict` when already answered.
            QuestionAnswer question_answer = "question.answer", PERMISSION_MANAGER, &[Role::Operator], workspace,
                permission::AnswerRequest => permission::AnswerResponse, grpc("PermissionService", "Answer");

            // ---- costs --------------------------------------------------------------------
            /// Spend and tokens by agent, model and session over `since <= ts < until` (Unix ms).
            CostReport cost_report = "cost.report", COST_AGGREGATOR, READ, workspace,
                cost::ReportRequest => cost::Report, grpc("CostService", "Report");
            /// The price table and where it came from.
            CostModels cost_models = "cost.models", COST_AGGREGATOR, READ, mesh,
                cost::ModelsRequest => cost::ModelsResponse, grpc("CostService", "Models");
            /// How full a session's context window is (`state` null when unknown).
            SessionGetContextWindowState session_get_context_window_state = "session.getContextWindowState", COST_AGGREGATOR, READ, workspace,
                cost::ContextWindowRequest => cost::ContextWindowResponse, grpc("CostService", "GetContextWindowState");
            /// The configured budgets and the spend of the caller's sessions or agents under each.
            CostBudgets cost_budgets = "cost.budgets", COST_AGGREGATOR, READ, workspace,
                cost::BudgetsRequest => cost::BudgetsResponse;

            // ---- webhooks and schedules (automation) --------------------------------------
            /// Subscribes a URL to the workspace's events, posted signed the Standard Webhooks
            /// way; the reply alone shows the secret.
            WebhookCreate webhook_create = "webhook.create", AUTOMATION, ADMIN_OR_SERVICE, workspace,
                automation::CreateWebhookRequest => automation::Webhook;
            /// The workspace's webhook subscriptions.
            WebhookList webhook_list = "webhook.list", AUTOMATION, READ, workspace,
                automation::ListWebhooksRequest => automation::WebhookList;
            /// One subscription.
            WebhookGet webhook_get = "webhook.get", AUTOMATION, READ, workspace,
                automation::WebhookRef => automation::Webhook;
            /// Changes a subscription's URL, events, description, or enables or disables it.
            WebhookUpdate webhook_update = "webhook.update", AUTOMATION, ADMIN_OR_SERVICE, workspace,
                automation::UpdateWebhookRequest => automation::Webhook;
            /// Deletes a subscription and its delivery log.
            WebhookDelete webhook_delete = "webhook.delete", AUTOMATION, ADMIN_OR_SERVICE, workspace,
                automation::WebhookRef => automation::Deleted;
            /// A subscription's delivery log, newest first.
            WebhookDeliveries webhook_deliveries = "webhook.deliveries", AUTOMATION, READ, workspace,
                automation::WebhookDeliveriesRequest => automation::WebhookDeliveryList;
            /// Posts one delivery again, now, with a fresh run of attempts.
            WebhookReplay webhook_replay = "webhook.replay", AUTOMATION, ADMIN_OR_SERVICE, workspace,
                automation::ReplayRequest => automation::WebhookDelivery;
            /// Schedules a message, a relay message or a new session at a time (`at`) or on a
            /// cron expression; it runs as the caller. Events: `schedule.fired` each run.
            ScheduleCreate schedule_create = "schedule.create", AUTOMATION, OPERATE, workspace,
                automation::CreateScheduleRequest => automation::Schedule;
            /// The workspace's schedules.
            ScheduleList schedule_list = "schedule.list", AUTOMATION, READ, workspace,
                automation::ListSchedulesRequest => automation::ScheduleList;
            /// One schedule with its last run.
            ScheduleGet schedule_get = "schedule.get", AUTOMATION, READ, workspace,
                automation::ScheduleRef => automation::Schedule;
            /// Stops a schedule from firing until resumed.
            SchedulePause schedule_pause = "schedule.pause", AUTOMATION, OPERATE, workspace,
                automation::ScheduleRef => automation::Schedule;
            /// Resumes a paused schedule from its next time after now (the runs it missed while
            /// paused are not made up).
            ScheduleResume schedule_resume = "schedule.resume", AUTOMATION, OPERATE, workspace,
                automation::ScheduleRef => automation::Schedule;
            /// Deletes a schedule and its runs.
            ScheduleDelete schedule_delete = "schedule.delete", AUTOMATION, OPERATE, workspace,
                automation::ScheduleRef => automation::Deleted;
            /// A schedule's runs, newest first.
            ScheduleRuns schedule_runs = "schedule.runs", AUTOMATION, READ, workspace,
                automation::ScheduleRunsRequest => automation::ScheduleRunList;
        }
    };
}

macro_rules! declare {
    ($(
        $(#[doc = $doc:expr])+
        $name:ident $method:ident = $subject:literal, $service:ident, $roles:expr, $scope:ident,
            $req:ty => $resp:ty $(, grpc($gs:literal, $gm:literal))? $(, timeout($secs:literal))?;
    )*) => {
        $(
            $(#[doc = $doc])+
            #[doc = concat!("\n\nSubject `", $subject, "`, answered by ", stringify!($service), ".")]
            pub struct $name;

            impl Rpc for $name {
                const SUBJECT: &'static str = $subject;
                const SERVICE: &'static str = service::$service;
                const ROLES: &'static [Role] = $roles;
                const WORKSPACE_SCOPED: bool = scope!($scope);
                const DOC: &'static str = concat!($($doc),+);
                const MIN_TIMEOUT_SECS: u64 = 0 $(+ $secs)?;
                type Request = $req;
                type Response = $resp;
            }
        )*

        /// Every declaration, in declaration order.
        pub const ALL: &[RpcInfo] = &[$(
            RpcInfo {
                name: stringify!($name),
                method: stringify!($method),
                subject: $subject,
                service: service::$service,
                roles: $roles,
                workspace_scoped: scope!($scope),
                doc: concat!($($doc),+),
                grpc: opt!($(($gs, $gm))?),
                request: stringify!($req),
                response: stringify!($resp),
            },
        )*];

        /// The request and reply schemas of every declaration, with the schemas they refer to,
        /// for the docs' tables.
        #[cfg(feature = "openapi")]
        pub fn schemas() -> Vec<(RpcInfo, docs::Schemas, docs::Schemas)> {
            let schemas = vec![$((docs::Schemas::of::<$req>(), docs::Schemas::of::<$resp>())),*];
            ALL.iter().zip(schemas).map(|(r, (req, resp))| (*r, req, resp)).collect()
        }
    };
}

macro_rules! opt {
    () => {
        None
    };
    ($x:expr) => {
        Some($x)
    };
}

macro_rules! scope {
    (workspace) => {
        true
    };
    (mesh) => {
        false
    };
}

use crate::{
    actions, audit, automation, consensus, cost, delivery, events, hosts, keys, messaging, permission, prompts,
    session, workspace,
};

with_rpcs!(declare);

#[cfg(feature = "openapi")]
pub mod docs;

/// Subjects served per instance at `<subject>.<instance>` ([`instance_subject`]): a request
/// meant for that one instance (one host's spawner). Every other subject is served at itself.
pub const PER_INSTANCE: &[&str] = &[AgentSpawnOn::SUBJECT];

/// Where a [`PER_INSTANCE`] subject is served for `instance`.
pub fn instance_subject(subject: &str, instance: &str) -> String {
    format!("{subject}.{instance}")
}

/// The declaration of `subject`, if there is one.
pub fn find(subject: &str) -> Option<&'static RpcInfo> {
    ALL.iter().find(|r| r.subject == subject)
}

/// Subjects a harness serves for its one agent, `agent.<agentId>.<verb>`: the only place
/// they are spelled.
pub mod agent {
    /// Deliveries (`DeliverRequest` → `Receipt`), from the delivery runner.
    pub fn deliver(agent_id: &str) -> String {
        subject(agent_id, "deliver")
    }
    /// Raw terminal input (`InputRequest`), from the delivery runner.
    pub fn input(agent_id: &str) -> String {
        subject(agent_id, "input")
    }
    /// Release the session and exit, from the delivery runner or a pattern.
    pub fn release(agent_id: &str) -> String {
        subject(agent_id, "release")
    }
    /// A permission request was decided (`PermissionDecision`), from the permission manager.
    pub fn permission(agent_id: &str) -> String {
        subject(agent_id, "permission")
    }
    /// A question was answered, from the permission manager.
    pub fn question(agent_id: &str) -> String {
        subject(agent_id, "question")
    }
    /// Whether the agent is busy with a turn, and interrupt it (`TurnControl` → `TurnState`),
    /// from the registry and the delivery runner.
    pub fn turn(agent_id: &str) -> String {
        subject(agent_id, "turn")
    }
    /// An action of the agent is invoked (`ActionCall` → `ActionAnswer`), from the registry.
    pub fn invoke(agent_id: &str) -> String {
        subject(agent_id, "invoke")
    }
    /// Drop a delivery the harness holds (`CancelHeld` → `HeldCancelled`), from the delivery
    /// runner's `delivery.cancel`.
    pub fn cancel(agent_id: &str) -> String {
        subject(agent_id, "cancel")
    }

    fn subject(agent_id: &str, verb: &str) -> String {
        format!("agent.{agent_id}.{verb}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_subject_type_and_method_is_declared_once() {
        let mut seen = HashSet::new();
        for r in ALL {
            assert!(seen.insert(r.subject), "{} declared twice", r.subject);
            assert!(seen.insert(r.name), "{} declared twice", r.name);
            assert!(seen.insert(r.method), "{} declared twice", r.method);
        }
    }

    #[test]
    fn the_trait_and_the_table_agree() {
        let fork = find(SessionFork::SUBJECT).unwrap();
        assert_eq!(fork.name, "SessionFork");
        assert_eq!(fork.service, SessionFork::SERVICE);
        assert_eq!(fork.grpc, Some(("SessionService", "Fork")));
        assert_eq!(AgentSpawn::MIN_TIMEOUT_SECS, 35);
        const { assert!(!CostModels::WORKSPACE_SCOPED) };
        assert_eq!(fork.request.replace(' ', ""), "session::ForkRequest");
    }
}
