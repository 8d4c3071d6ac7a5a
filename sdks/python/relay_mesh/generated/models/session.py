from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.approval_policy import ApprovalPolicy, check_approval_policy
from ..models.branch_kind import BranchKind, check_branch_kind
from ..models.session_status import SessionStatus, check_session_status
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.agent import Agent
    from ..models.preview import Preview


T = TypeVar("T", bound="Session")


@_attrs_define
class Session:
    """
    Attributes:
        created_at (int):
        last_activity_at (int):
        session_id (str):
        status (SessionStatus):
        adapter_id (None | str | Unset):
        adapter_name (None | str | Unset):
        adapter_session_id (None | str | Unset):
        agents (list[Agent] | Unset):
        approval_policy_override (ApprovalPolicy | None | Unset):
        branch_kind (BranchKind | None | Unset):
        client_account_id (None | str | Unset):
        client_id (None | str | Unset):
        execution_target_id (None | str | Unset):
        fork_point_message_id (None | str | Unset):
        fork_transforms (Any | Unset):
        is_imported (bool | None | Unset):
        is_orchestrated (bool | None | Unset):
        last_client_identity_observation (Any | Unset):
        lead_agent_id (None | str | Unset):
        origin_window_id (None | str | Unset):
        parent_session_id (None | str | Unset):
        preview (None | Preview | Unset):
        root_session_id (None | str | Unset):
        spawning_tool_call_id (None | str | Unset):
        summary (None | str | Unset):
        summary_updated_at (int | None | Unset):
        target_working_directory (None | str | Unset):
        title (None | str | Unset):
    """

    created_at: int
    last_activity_at: int
    session_id: str
    status: SessionStatus
    adapter_id: None | str | Unset = UNSET
    adapter_name: None | str | Unset = UNSET
    adapter_session_id: None | str | Unset = UNSET
    agents: list[Agent] | Unset = UNSET
    approval_policy_override: ApprovalPolicy | None | Unset = UNSET
    branch_kind: BranchKind | None | Unset = UNSET
    client_account_id: None | str | Unset = UNSET
    client_id: None | str | Unset = UNSET
    execution_target_id: None | str | Unset = UNSET
    fork_point_message_id: None | str | Unset = UNSET
    fork_transforms: Any | Unset = UNSET
    is_imported: bool | None | Unset = UNSET
    is_orchestrated: bool | None | Unset = UNSET
    last_client_identity_observation: Any | Unset = UNSET
    lead_agent_id: None | str | Unset = UNSET
    origin_window_id: None | str | Unset = UNSET
    parent_session_id: None | str | Unset = UNSET
    preview: None | Preview | Unset = UNSET
    root_session_id: None | str | Unset = UNSET
    spawning_tool_call_id: None | str | Unset = UNSET
    summary: None | str | Unset = UNSET
    summary_updated_at: int | None | Unset = UNSET
    target_working_directory: None | str | Unset = UNSET
    title: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.preview import Preview

        created_at = self.created_at

        last_activity_at = self.last_activity_at

        session_id = self.session_id

        status: str = self.status

        adapter_id: None | str | Unset
        if isinstance(self.adapter_id, Unset):
            adapter_id = UNSET
        else:
            adapter_id = self.adapter_id

        adapter_name: None | str | Unset
        if isinstance(self.adapter_name, Unset):
            adapter_name = UNSET
        else:
            adapter_name = self.adapter_name

        adapter_session_id: None | str | Unset
        if isinstance(self.adapter_session_id, Unset):
            adapter_session_id = UNSET
        else:
            adapter_session_id = self.adapter_session_id

        agents: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.agents, Unset):
            agents = []
            for agents_item_data in self.agents:
                agents_item = agents_item_data.to_dict()
                agents.append(agents_item)

        approval_policy_override: None | str | Unset
        if isinstance(self.approval_policy_override, Unset):
            approval_policy_override = UNSET
        elif isinstance(self.approval_policy_override, str):
            approval_policy_override = self.approval_policy_override
        else:
            approval_policy_override = self.approval_policy_override

        branch_kind: None | str | Unset
        if isinstance(self.branch_kind, Unset):
            branch_kind = UNSET
        elif isinstance(self.branch_kind, str):
            branch_kind = self.branch_kind
        else:
            branch_kind = self.branch_kind

        client_account_id: None | str | Unset
        if isinstance(self.client_account_id, Unset):
            client_account_id = UNSET
        else:
            client_account_id = self.client_account_id

        client_id: None | str | Unset
        if isinstance(self.client_id, Unset):
            client_id = UNSET
        else:
            client_id = self.client_id

        execution_target_id: None | str | Unset
        if isinstance(self.execution_target_id, Unset):
            execution_target_id = UNSET
        else:
            execution_target_id = self.execution_target_id

        fork_point_message_id: None | str | Unset
        if isinstance(self.fork_point_message_id, Unset):
            fork_point_message_id = UNSET
        else:
            fork_point_message_id = self.fork_point_message_id

        fork_transforms = self.fork_transforms

        is_imported: bool | None | Unset
        if isinstance(self.is_imported, Unset):
            is_imported = UNSET
        else:
            is_imported = self.is_imported

        is_orchestrated: bool | None | Unset
        if isinstance(self.is_orchestrated, Unset):
            is_orchestrated = UNSET
        else:
            is_orchestrated = self.is_orchestrated

        last_client_identity_observation = self.last_client_identity_observation

        lead_agent_id: None | str | Unset
        if isinstance(self.lead_agent_id, Unset):
            lead_agent_id = UNSET
        else:
            lead_agent_id = self.lead_agent_id

        origin_window_id: None | str | Unset
        if isinstance(self.origin_window_id, Unset):
            origin_window_id = UNSET
        else:
            origin_window_id = self.origin_window_id

        parent_session_id: None | str | Unset
        if isinstance(self.parent_session_id, Unset):
            parent_session_id = UNSET
        else:
            parent_session_id = self.parent_session_id

        preview: dict[str, Any] | None | Unset
        if isinstance(self.preview, Unset):
            preview = UNSET
        elif isinstance(self.preview, Preview):
            preview = self.preview.to_dict()
        else:
            preview = self.preview

        root_session_id: None | str | Unset
        if isinstance(self.root_session_id, Unset):
            root_session_id = UNSET
        else:
            root_session_id = self.root_session_id

        spawning_tool_call_id: None | str | Unset
        if isinstance(self.spawning_tool_call_id, Unset):
            spawning_tool_call_id = UNSET
        else:
            spawning_tool_call_id = self.spawning_tool_call_id

        summary: None | str | Unset
        if isinstance(self.summary, Unset):
            summary = UNSET
        else:
            summary = self.summary

        summary_updated_at: int | None | Unset
        if isinstance(self.summary_updated_at, Unset):
            summary_updated_at = UNSET
        else:
            summary_updated_at = self.summary_updated_at

        target_working_directory: None | str | Unset
        if isinstance(self.target_working_directory, Unset):
            target_working_directory = UNSET
        else:
            target_working_directory = self.target_working_directory

        title: None | str | Unset
        if isinstance(self.title, Unset):
            title = UNSET
        else:
            title = self.title

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "createdAt": created_at,
                "lastActivityAt": last_activity_at,
                "sessionId": session_id,
                "status": status,
            }
        )
        if adapter_id is not UNSET:
            field_dict["adapterId"] = adapter_id
        if adapter_name is not UNSET:
            field_dict["adapterName"] = adapter_name
        if adapter_session_id is not UNSET:
            field_dict["adapterSessionId"] = adapter_session_id
        if agents is not UNSET:
            field_dict["agents"] = agents
        if approval_policy_override is not UNSET:
            field_dict["approvalPolicyOverride"] = approval_policy_override
        if branch_kind is not UNSET:
            field_dict["branchKind"] = branch_kind
        if client_account_id is not UNSET:
            field_dict["clientAccountId"] = client_account_id
        if client_id is not UNSET:
            field_dict["clientId"] = client_id
        if execution_target_id is not UNSET:
            field_dict["executionTargetId"] = execution_target_id
        if fork_point_message_id is not UNSET:
            field_dict["forkPointMessageId"] = fork_point_message_id
        if fork_transforms is not UNSET:
            field_dict["forkTransforms"] = fork_transforms
        if is_imported is not UNSET:
            field_dict["isImported"] = is_imported
        if is_orchestrated is not UNSET:
            field_dict["isOrchestrated"] = is_orchestrated
        if last_client_identity_observation is not UNSET:
            field_dict["lastClientIdentityObservation"] = (
                last_client_identity_observation
            )
        if lead_agent_id is not UNSET:
            field_dict["leadAgentId"] = lead_agent_id
        if origin_window_id is not UNSET:
            field_dict["originWindowId"] = origin_window_id
        if parent_session_id is not UNSET:
            field_dict["parentSessionId"] = parent_session_id
        if preview is not UNSET:
            field_dict["preview"] = preview
        if root_session_id is not UNSET:
            field_dict["rootSessionId"] = root_session_id
        if spawning_tool_call_id is not UNSET:
            field_dict["spawningToolCallId"] = spawning_tool_call_id
        if summary is not UNSET:
            field_dict["summary"] = summary
        if summary_updated_at is not UNSET:
            field_dict["summaryUpdatedAt"] = summary_updated_at
        if target_working_directory is not UNSET:
            field_dict["targetWorkingDirectory"] = target_working_directory
        if title is not UNSET:
            field_dict["title"] = title

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.agent import Agent
        from ..models.preview import Preview

        d = dict(src_dict)
        created_at = d.pop("createdAt")

        last_activity_at = d.pop("lastActivityAt")

        session_id = d.pop("sessionId")

        status = check_session_status(d.pop("status"))

        def _parse_adapter_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        adapter_id = _parse_adapter_id(d.pop("adapterId", UNSET))

        def _parse_adapter_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        adapter_name = _parse_adapter_name(d.pop("adapterName", UNSET))

        def _parse_adapter_session_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        adapter_session_id = _parse_adapter_session_id(d.pop("adapterSessionId", UNSET))

        _agents = d.pop("agents", UNSET)
        agents: list[Agent] | Unset = UNSET
        if _agents is not UNSET:
            agents = []
            for agents_item_data in _agents:
                agents_item = Agent.from_dict(agents_item_data)

                agents.append(agents_item)

        def _parse_approval_policy_override(
            data: object,
        ) -> ApprovalPolicy | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                approval_policy_override_type_1 = check_approval_policy(data)

                return approval_policy_override_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ApprovalPolicy | None | Unset, data)

        approval_policy_override = _parse_approval_policy_override(
            d.pop("approvalPolicyOverride", UNSET)
        )

        def _parse_branch_kind(data: object) -> BranchKind | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                branch_kind_type_1 = check_branch_kind(data)

                return branch_kind_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(BranchKind | None | Unset, data)

        branch_kind = _parse_branch_kind(d.pop("branchKind", UNSET))

        def _parse_client_account_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        client_account_id = _parse_client_account_id(d.pop("clientAccountId", UNSET))

        def _parse_client_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        client_id = _parse_client_id(d.pop("clientId", UNSET))

        def _parse_execution_target_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        execution_target_id = _parse_execution_target_id(
            d.pop("executionTargetId", UNSET)
        )

        def _parse_fork_point_message_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        fork_point_message_id = _parse_fork_point_message_id(
            d.pop("forkPointMessageId", UNSET)
        )

        fork_transforms = d.pop("forkTransforms", UNSET)

        def _parse_is_imported(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        is_imported = _parse_is_imported(d.pop("isImported", UNSET))

        def _parse_is_orchestrated(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        is_orchestrated = _parse_is_orchestrated(d.pop("isOrchestrated", UNSET))

        last_client_identity_observation = d.pop("lastClientIdentityObservation", UNSET)

        def _parse_lead_agent_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        lead_agent_id = _parse_lead_agent_id(d.pop("leadAgentId", UNSET))

        def _parse_origin_window_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        origin_window_id = _parse_origin_window_id(d.pop("originWindowId", UNSET))

        def _parse_parent_session_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        parent_session_id = _parse_parent_session_id(d.pop("parentSessionId", UNSET))

        def _parse_preview(data: object) -> None | Preview | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                preview_type_1 = Preview.from_dict(data)

                return preview_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Preview | Unset, data)

        preview = _parse_preview(d.pop("preview", UNSET))

        def _parse_root_session_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        root_session_id = _parse_root_session_id(d.pop("rootSessionId", UNSET))

        def _parse_spawning_tool_call_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        spawning_tool_call_id = _parse_spawning_tool_call_id(
            d.pop("spawningToolCallId", UNSET)
        )

        def _parse_summary(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        summary = _parse_summary(d.pop("summary", UNSET))

        def _parse_summary_updated_at(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        summary_updated_at = _parse_summary_updated_at(d.pop("summaryUpdatedAt", UNSET))

        def _parse_target_working_directory(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        target_working_directory = _parse_target_working_directory(
            d.pop("targetWorkingDirectory", UNSET)
        )

        def _parse_title(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        title = _parse_title(d.pop("title", UNSET))

        session = cls(
            created_at=created_at,
            last_activity_at=last_activity_at,
            session_id=session_id,
            status=status,
            adapter_id=adapter_id,
            adapter_name=adapter_name,
            adapter_session_id=adapter_session_id,
            agents=agents,
            approval_policy_override=approval_policy_override,
            branch_kind=branch_kind,
            client_account_id=client_account_id,
            client_id=client_id,
            execution_target_id=execution_target_id,
            fork_point_message_id=fork_point_message_id,
            fork_transforms=fork_transforms,
            is_imported=is_imported,
            is_orchestrated=is_orchestrated,
            last_client_identity_observation=last_client_identity_observation,
            lead_agent_id=lead_agent_id,
            origin_window_id=origin_window_id,
            parent_session_id=parent_session_id,
            preview=preview,
            root_session_id=root_session_id,
            spawning_tool_call_id=spawning_tool_call_id,
            summary=summary,
            summary_updated_at=summary_updated_at,
            target_working_directory=target_working_directory,
            title=title,
        )

        session.additional_properties = d
        return session

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
