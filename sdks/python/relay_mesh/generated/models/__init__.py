"""Contains all the data models used in inputs/outputs"""

from .a2a_task_push import A2ATaskPush
from .action import Action
from .action_capabilities import ActionCapabilities
from .action_input_schema import ActionInputSchema
from .action_list import ActionList
from .action_output_schema import ActionOutputSchema
from .ag_ui_capabilities import AgUiCapabilities
from .ag_ui_capabilities_custom_type_0 import AgUiCapabilitiesCustomType0
from .ag_ui_capabilities_execution_type_0 import AgUiCapabilitiesExecutionType0
from .ag_ui_capabilities_human_in_the_loop_type_0 import (
    AgUiCapabilitiesHumanInTheLoopType0,
)
from .ag_ui_capabilities_identity_type_0 import AgUiCapabilitiesIdentityType0
from .ag_ui_capabilities_multi_agent_type_0 import AgUiCapabilitiesMultiAgentType0
from .ag_ui_capabilities_multimodal_type_0 import AgUiCapabilitiesMultimodalType0
from .ag_ui_capabilities_output_type_0 import AgUiCapabilitiesOutputType0
from .ag_ui_capabilities_reasoning_type_0 import AgUiCapabilitiesReasoningType0
from .ag_ui_capabilities_state_type_0 import AgUiCapabilitiesStateType0
from .ag_ui_capabilities_tools_type_0 import AgUiCapabilitiesToolsType0
from .ag_ui_capabilities_transport_type_0 import AgUiCapabilitiesTransportType0
from .agent import Agent
from .agent_hold import AgentHold
from .agent_list_response import AgentListResponse
from .agent_output import AgentOutput
from .agent_record_status import AgentRecordStatus
from .agent_role import AgentRole
from .agent_session_capabilities import AgentSessionCapabilities
from .agent_session_event_type import AgentSessionEventType
from .agent_status import AgentStatus
from .answer import Answer
from .answer_response import AnswerResponse
from .api_key import ApiKey
from .approval_policy import ApprovalPolicy
from .ask_compression import AskCompression
from .attachment_kind import AttachmentKind
from .branch_kind import BranchKind
from .breakdown import Breakdown
from .budget_spend import BudgetSpend
from .budget_status import BudgetStatus
from .budgets_response import BudgetsResponse
from .cancel_turn_response import CancelTurnResponse
from .capabilities_response import CapabilitiesResponse
from .channel import Channel
from .channel_list import ChannelList
from .client_observation import ClientObservation
from .client_observation_payload_type_0 import ClientObservationPayloadType0
from .compress import Compress
from .compress_response import CompressResponse
from .compress_response_context_json import CompressResponseContextJson
from .context_level import ContextLevel
from .context_window_response import ContextWindowResponse
from .context_window_state import ContextWindowState
from .create_channel_request import CreateChannelRequest
from .create_key_request import CreateKeyRequest
from .create_schedule_request import CreateScheduleRequest
from .create_session import CreateSession
from .create_webhook_request import CreateWebhookRequest
from .create_workspace_request import CreateWorkspaceRequest
from .created import Created
from .created_key import CreatedKey
from .decide_response import DecideResponse
from .decision import Decision
from .deleted import Deleted
from .delivery import Delivery
from .delivery_capabilities import DeliveryCapabilities
from .delivery_mode import DeliveryMode
from .delivery_policy import DeliveryPolicy
from .delivery_status import DeliveryStatus
from .ended import Ended
from .error_body import ErrorBody
from .error_code import ErrorCode
from .event import Event
from .event_capabilities import EventCapabilities
from .flush import Flush
from .flush_response import FlushResponse
from .fork import Fork
from .fork_kind import ForkKind
from .host import Host
from .host_labels import HostLabels
from .host_list import HostList
from .input_ import Input
from .input_response import InputResponse
from .invocation import Invocation
from .invocation_output import InvocationOutput
from .invocation_status import InvocationStatus
from .invoke_request import InvokeRequest
from .invoke_request_input_type_0 import InvokeRequestInputType0
from .key_list import KeyList
from .key_role import KeyRole
from .lifecycle_capabilities import LifecycleCapabilities
from .list_deliveries_response import ListDeliveriesResponse
from .list_response import ListResponse
from .member import Member
from .member_list import MemberList
from .membership import Membership
from .message_page import MessagePage
from .messaging_capabilities import MessagingCapabilities
from .observe_client_response import ObserveClientResponse
from .output_row import OutputRow
from .permission import Permission
from .permission_list import PermissionList
from .pipeline_step import PipelineStep
from .pipeline_step_options_type_0 import PipelineStepOptionsType0
from .placement import Placement
from .placement_labels import PlacementLabels
from .preview import Preview
from .priority import Priority
from .prompt import Prompt
from .prompt_body import PromptBody
from .prompt_deleted import PromptDeleted
from .prompt_kind import PromptKind
from .prompt_list import PromptList
from .proposal import Proposal
from .proposal_list import ProposalList
from .proposal_status import ProposalStatus
from .proposal_tally import ProposalTally
from .propose_request import ProposeRequest
from .purge_response import PurgeResponse
from .query_response import QueryResponse
from .question import Question
from .question_list import QuestionList
from .question_status import QuestionStatus
from .reason import Reason
from .recipient import Recipient
from .relay_message import RelayMessage
from .report import Report
from .report_by_agent import ReportByAgent
from .report_by_model import ReportByModel
from .report_by_session import ReportBySession
from .resolve_system_prompt_response import ResolveSystemPromptResponse
from .risk import Risk
from .schedule import Schedule
from .schedule_action_type_0 import ScheduleActionType0
from .schedule_action_type_0_kind import ScheduleActionType0Kind
from .schedule_action_type_1 import ScheduleActionType1
from .schedule_action_type_1_kind import ScheduleActionType1Kind
from .schedule_action_type_2 import ScheduleActionType2
from .schedule_action_type_2_kind import ScheduleActionType2Kind
from .schedule_list import ScheduleList
from .schedule_run import ScheduleRun
from .schedule_run_list import ScheduleRunList
from .schedule_run_result import ScheduleRunResult
from .schedule_status import ScheduleStatus
from .send_message import SendMessage
from .send_request_type_0 import SendRequestType0
from .send_request_type_1 import SendRequestType1
from .send_response import SendResponse
from .sender import Sender
from .sent import Sent
from .session import Session
from .session_id_response import SessionIdResponse
from .session_patch import SessionPatch
from .session_status import SessionStatus
from .source import Source
from .status_counts import StatusCounts
from .status_filter import StatusFilter
from .stop_agent_response import StopAgentResponse
from .success_response import SuccessResponse
from .summary import Summary
from .swap import Swap
from .task_key import TaskKey
from .thread_response import ThreadResponse
from .turn import Turn
from .turn_state import TurnState
from .turn_status import TurnStatus
from .turns_response import TurnsResponse
from .vote import Vote
from .voter import Voter
from .webhook import Webhook
from .webhook_changes import WebhookChanges
from .webhook_delivery import WebhookDelivery
from .webhook_delivery_list import WebhookDeliveryList
from .webhook_delivery_status import WebhookDeliveryStatus
from .webhook_list import WebhookList
from .wire_error import WireError
from .workspace import Workspace
from .workspace_deleted import WorkspaceDeleted
from .workspace_list import WorkspaceList

__all__ = (
    "A2ATaskPush",
    "Action",
    "ActionCapabilities",
    "ActionInputSchema",
    "ActionList",
    "ActionOutputSchema",
    "AgUiCapabilities",
    "AgUiCapabilitiesCustomType0",
    "AgUiCapabilitiesExecutionType0",
    "AgUiCapabilitiesHumanInTheLoopType0",
    "AgUiCapabilitiesIdentityType0",
    "AgUiCapabilitiesMultiAgentType0",
    "AgUiCapabilitiesMultimodalType0",
    "AgUiCapabilitiesOutputType0",
    "AgUiCapabilitiesReasoningType0",
    "AgUiCapabilitiesStateType0",
    "AgUiCapabilitiesToolsType0",
    "AgUiCapabilitiesTransportType0",
    "Agent",
    "AgentHold",
    "AgentListResponse",
    "AgentOutput",
    "AgentRecordStatus",
    "AgentRole",
    "AgentSessionCapabilities",
    "AgentSessionEventType",
    "AgentStatus",
    "Answer",
    "AnswerResponse",
    "ApiKey",
    "ApprovalPolicy",
    "AskCompression",
    "AttachmentKind",
    "BranchKind",
    "Breakdown",
    "BudgetSpend",
    "BudgetStatus",
    "BudgetsResponse",
    "CancelTurnResponse",
    "CapabilitiesResponse",
    "Channel",
    "ChannelList",
    "ClientObservation",
    "ClientObservationPayloadType0",
    "Compress",
    "CompressResponse",
    "CompressResponseContextJson",
    "ContextLevel",
    "ContextWindowResponse",
    "ContextWindowState",
    "CreateChannelRequest",
    "CreateKeyRequest",
    "CreateScheduleRequest",
    "CreateSession",
    "CreateWebhookRequest",
    "CreateWorkspaceRequest",
    "Created",
    "CreatedKey",
    "DecideResponse",
    "Decision",
    "Deleted",
    "Delivery",
    "DeliveryCapabilities",
    "DeliveryMode",
    "DeliveryPolicy",
    "DeliveryStatus",
    "Ended",
    "ErrorBody",
    "ErrorCode",
    "Event",
    "EventCapabilities",
    "Flush",
    "FlushResponse",
    "Fork",
    "ForkKind",
    "Host",
    "HostLabels",
    "HostList",
    "Input",
    "InputResponse",
    "Invocation",
    "InvocationOutput",
    "InvocationStatus",
    "InvokeRequest",
    "InvokeRequestInputType0",
    "KeyList",
    "KeyRole",
    "LifecycleCapabilities",
    "ListDeliveriesResponse",
    "ListResponse",
    "Member",
    "MemberList",
    "Membership",
    "MessagePage",
    "MessagingCapabilities",
    "ObserveClientResponse",
    "OutputRow",
    "Permission",
    "PermissionList",
    "PipelineStep",
    "PipelineStepOptionsType0",
    "Placement",
    "PlacementLabels",
    "Preview",
    "Priority",
    "Prompt",
    "PromptBody",
    "PromptDeleted",
    "PromptKind",
    "PromptList",
    "Proposal",
    "ProposalList",
    "ProposalStatus",
    "ProposalTally",
    "ProposeRequest",
    "PurgeResponse",
    "QueryResponse",
    "Question",
    "QuestionList",
    "QuestionStatus",
    "Reason",
    "Recipient",
    "RelayMessage",
    "Report",
    "ReportByAgent",
    "ReportByModel",
    "ReportBySession",
    "ResolveSystemPromptResponse",
    "Risk",
    "Schedule",
    "ScheduleActionType0",
    "ScheduleActionType0Kind",
    "ScheduleActionType1",
    "ScheduleActionType1Kind",
    "ScheduleActionType2",
    "ScheduleActionType2Kind",
    "ScheduleList",
    "ScheduleRun",
    "ScheduleRunList",
    "ScheduleRunResult",
    "ScheduleStatus",
    "SendMessage",
    "SendRequestType0",
    "SendRequestType1",
    "SendResponse",
    "Sender",
    "Sent",
    "Session",
    "SessionIdResponse",
    "SessionPatch",
    "SessionStatus",
    "Source",
    "StatusCounts",
    "StatusFilter",
    "StopAgentResponse",
    "SuccessResponse",
    "Summary",
    "Swap",
    "TaskKey",
    "ThreadResponse",
    "Turn",
    "TurnState",
    "TurnStatus",
    "TurnsResponse",
    "Vote",
    "Voter",
    "Webhook",
    "WebhookChanges",
    "WebhookDelivery",
    "WebhookDeliveryList",
    "WebhookDeliveryStatus",
    "WebhookList",
    "WireError",
    "Workspace",
    "WorkspaceDeleted",
    "WorkspaceList",
)
