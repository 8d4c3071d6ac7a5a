from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.agent_record_status import AgentRecordStatus, check_agent_record_status
from ..models.agent_role import AgentRole, check_agent_role
from ..models.agent_status import AgentStatus, check_agent_status
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.ag_ui_capabilities import AgUiCapabilities
    from ..models.agent_session_capabilities import AgentSessionCapabilities
    from ..models.placement import Placement


T = TypeVar("T", bound="Agent")


@_attrs_define
class Agent:
    """
    Attributes:
        adapter_id (str):
        adapter_name (str):
        agent_id (str):
        created_at (int):
        last_activity_at (int):
        role (AgentRole):
        session_id (str):
        status (AgentRecordStatus): The registry's view of an attached agent (not the live status, which arrives as
            events).
        adapter_session_id (None | str | Unset):
        agent_capabilities (AgUiCapabilities | None | Unset):
        capabilities (AgentSessionCapabilities | None | Unset):
        client_id (None | str | Unset):
        compression_mode (None | str | Unset):
        cwd (None | str | Unset):
        handle (None | str | Unset): Relay extension: the name other agents and people address it by (`@handle`), unique
            among the live agents of its workspace; free again once it is disposed.
        harness_id (None | str | Unset):
        host_id (None | str | Unset): Relay extension: the host its harness runs on (spawned agents; from the host's
            heartbeats).
        model (None | str | Unset):
        offline_since (int | None | Unset): Relay extension: since when its host has not heartbeated; its deliveries are
            held
            until the host is back or the registry's `hosts.on_lost` ends or re-homes it.
        persona_id (None | str | Unset):
        placement (None | Placement | Unset):
        profile_id (None | str | Unset):
        provider_config_id (None | str | Unset):
        reported_status (AgentStatus | None | Unset):
        reported_status_at (int | None | Unset): Relay extension: when it reported `reportedStatus` (Unix ms, the
            event's `ts`).
        spawned_by (None | str | Unset): Relay extension: the lead agent that spawned it (a delegated worker); that
            agent may
            stop it.
    """

    adapter_id: str
    adapter_name: str
    agent_id: str
    created_at: int
    last_activity_at: int
    role: AgentRole
    session_id: str
    status: AgentRecordStatus
    adapter_session_id: None | str | Unset = UNSET
    agent_capabilities: AgUiCapabilities | None | Unset = UNSET
    capabilities: AgentSessionCapabilities | None | Unset = UNSET
    client_id: None | str | Unset = UNSET
    compression_mode: None | str | Unset = UNSET
    cwd: None | str | Unset = UNSET
    handle: None | str | Unset = UNSET
    harness_id: None | str | Unset = UNSET
    host_id: None | str | Unset = UNSET
    model: None | str | Unset = UNSET
    offline_since: int | None | Unset = UNSET
    persona_id: None | str | Unset = UNSET
    placement: None | Placement | Unset = UNSET
    profile_id: None | str | Unset = UNSET
    provider_config_id: None | str | Unset = UNSET
    reported_status: AgentStatus | None | Unset = UNSET
    reported_status_at: int | None | Unset = UNSET
    spawned_by: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.ag_ui_capabilities import AgUiCapabilities
        from ..models.agent_session_capabilities import AgentSessionCapabilities
        from ..models.placement import Placement

        adapter_id = self.adapter_id

        adapter_name = self.adapter_name

        agent_id = self.agent_id

        created_at = self.created_at

        last_activity_at = self.last_activity_at

        role: str = self.role

        session_id = self.session_id

        status: str = self.status

        adapter_session_id: None | str | Unset
        if isinstance(self.adapter_session_id, Unset):
            adapter_session_id = UNSET
        else:
            adapter_session_id = self.adapter_session_id

        agent_capabilities: dict[str, Any] | None | Unset
        if isinstance(self.agent_capabilities, Unset):
            agent_capabilities = UNSET
        elif isinstance(self.agent_capabilities, AgUiCapabilities):
            agent_capabilities = self.agent_capabilities.to_dict()
        else:
            agent_capabilities = self.agent_capabilities

        capabilities: dict[str, Any] | None | Unset
        if isinstance(self.capabilities, Unset):
            capabilities = UNSET
        elif isinstance(self.capabilities, AgentSessionCapabilities):
            capabilities = self.capabilities.to_dict()
        else:
            capabilities = self.capabilities

        client_id: None | str | Unset
        if isinstance(self.client_id, Unset):
            client_id = UNSET
        else:
            client_id = self.client_id

        compression_mode: None | str | Unset
        if isinstance(self.compression_mode, Unset):
            compression_mode = UNSET
        else:
            compression_mode = self.compression_mode

        cwd: None | str | Unset
        if isinstance(self.cwd, Unset):
            cwd = UNSET
        else:
            cwd = self.cwd

        handle: None | str | Unset
        if isinstance(self.handle, Unset):
            handle = UNSET
        else:
            handle = self.handle

        harness_id: None | str | Unset
        if isinstance(self.harness_id, Unset):
            harness_id = UNSET
        else:
            harness_id = self.harness_id

        host_id: None | str | Unset
        if isinstance(self.host_id, Unset):
            host_id = UNSET
        else:
            host_id = self.host_id

        model: None | str | Unset
        if isinstance(self.model, Unset):
            model = UNSET
        else:
            model = self.model

        offline_since: int | None | Unset
        if isinstance(self.offline_since, Unset):
            offline_since = UNSET
        else:
            offline_since = self.offline_since

        persona_id: None | str | Unset
        if isinstance(self.persona_id, Unset):
            persona_id = UNSET
        else:
            persona_id = self.persona_id

        placement: dict[str, Any] | None | Unset
        if isinstance(self.placement, Unset):
            placement = UNSET
        elif isinstance(self.placement, Placement):
            placement = self.placement.to_dict()
        else:
            placement = self.placement

        profile_id: None | str | Unset
        if isinstance(self.profile_id, Unset):
            profile_id = UNSET
        else:
            profile_id = self.profile_id

        provider_config_id: None | str | Unset
        if isinstance(self.provider_config_id, Unset):
            provider_config_id = UNSET
        else:
            provider_config_id = self.provider_config_id

        reported_status: None | str | Unset
        if isinstance(self.reported_status, Unset):
            reported_status = UNSET
        elif isinstance(self.reported_status, str):
            reported_status = self.reported_status
        else:
            reported_status = self.reported_status

        reported_status_at: int | None | Unset
        if isinstance(self.reported_status_at, Unset):
            reported_status_at = UNSET
        else:
            reported_status_at = self.reported_status_at

        spawned_by: None | str | Unset
        if isinstance(self.spawned_by, Unset):
            spawned_by = UNSET
        else:
            spawned_by = self.spawned_by

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "adapterId": adapter_id,
                "adapterName": adapter_name,
                "agentId": agent_id,
                "createdAt": created_at,
                "lastActivityAt": last_activity_at,
                "role": role,
                "sessionId": session_id,
                "status": status,
            }
        )
        if adapter_session_id is not UNSET:
            field_dict["adapterSessionId"] = adapter_session_id
        if agent_capabilities is not UNSET:
            field_dict["agentCapabilities"] = agent_capabilities
        if capabilities is not UNSET:
            field_dict["capabilities"] = capabilities
        if client_id is not UNSET:
            field_dict["clientId"] = client_id
        if compression_mode is not UNSET:
            field_dict["compressionMode"] = compression_mode
        if cwd is not UNSET:
            field_dict["cwd"] = cwd
        if handle is not UNSET:
            field_dict["handle"] = handle
        if harness_id is not UNSET:
            field_dict["harnessId"] = harness_id
        if host_id is not UNSET:
            field_dict["hostId"] = host_id
        if model is not UNSET:
            field_dict["model"] = model
        if offline_since is not UNSET:
            field_dict["offlineSince"] = offline_since
        if persona_id is not UNSET:
            field_dict["personaId"] = persona_id
        if placement is not UNSET:
            field_dict["placement"] = placement
        if profile_id is not UNSET:
            field_dict["profileId"] = profile_id
        if provider_config_id is not UNSET:
            field_dict["providerConfigId"] = provider_config_id
        if reported_status is not UNSET:
            field_dict["reportedStatus"] = reported_status
        if reported_status_at is not UNSET:
            field_dict["reportedStatusAt"] = reported_status_at
        if spawned_by is not UNSET:
            field_dict["spawnedBy"] = spawned_by

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.ag_ui_capabilities import AgUiCapabilities
        from ..models.agent_session_capabilities import AgentSessionCapabilities
        from ..models.placement import Placement

        d = dict(src_dict)
        adapter_id = d.pop("adapterId")

        adapter_name = d.pop("adapterName")

        agent_id = d.pop("agentId")

        created_at = d.pop("createdAt")

        last_activity_at = d.pop("lastActivityAt")

        role = check_agent_role(d.pop("role"))

        session_id = d.pop("sessionId")

        status = check_agent_record_status(d.pop("status"))

        def _parse_adapter_session_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        adapter_session_id = _parse_adapter_session_id(d.pop("adapterSessionId", UNSET))

        def _parse_agent_capabilities(data: object) -> AgUiCapabilities | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                agent_capabilities_type_1 = AgUiCapabilities.from_dict(data)

                return agent_capabilities_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AgUiCapabilities | None | Unset, data)

        agent_capabilities = _parse_agent_capabilities(
            d.pop("agentCapabilities", UNSET)
        )

        def _parse_capabilities(
            data: object,
        ) -> AgentSessionCapabilities | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                capabilities_type_1 = AgentSessionCapabilities.from_dict(data)

                return capabilities_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AgentSessionCapabilities | None | Unset, data)

        capabilities = _parse_capabilities(d.pop("capabilities", UNSET))

        def _parse_client_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        client_id = _parse_client_id(d.pop("clientId", UNSET))

        def _parse_compression_mode(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        compression_mode = _parse_compression_mode(d.pop("compressionMode", UNSET))

        def _parse_cwd(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cwd = _parse_cwd(d.pop("cwd", UNSET))

        def _parse_handle(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        handle = _parse_handle(d.pop("handle", UNSET))

        def _parse_harness_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        harness_id = _parse_harness_id(d.pop("harnessId", UNSET))

        def _parse_host_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        host_id = _parse_host_id(d.pop("hostId", UNSET))

        def _parse_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model = _parse_model(d.pop("model", UNSET))

        def _parse_offline_since(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        offline_since = _parse_offline_since(d.pop("offlineSince", UNSET))

        def _parse_persona_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        persona_id = _parse_persona_id(d.pop("personaId", UNSET))

        def _parse_placement(data: object) -> None | Placement | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                placement_type_1 = Placement.from_dict(data)

                return placement_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Placement | Unset, data)

        placement = _parse_placement(d.pop("placement", UNSET))

        def _parse_profile_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        profile_id = _parse_profile_id(d.pop("profileId", UNSET))

        def _parse_provider_config_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        provider_config_id = _parse_provider_config_id(d.pop("providerConfigId", UNSET))

        def _parse_reported_status(data: object) -> AgentStatus | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                reported_status_type_1 = check_agent_status(data)

                return reported_status_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AgentStatus | None | Unset, data)

        reported_status = _parse_reported_status(d.pop("reportedStatus", UNSET))

        def _parse_reported_status_at(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        reported_status_at = _parse_reported_status_at(d.pop("reportedStatusAt", UNSET))

        def _parse_spawned_by(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        spawned_by = _parse_spawned_by(d.pop("spawnedBy", UNSET))

        agent = cls(
            adapter_id=adapter_id,
            adapter_name=adapter_name,
            agent_id=agent_id,
            created_at=created_at,
            last_activity_at=last_activity_at,
            role=role,
            session_id=session_id,
            status=status,
            adapter_session_id=adapter_session_id,
            agent_capabilities=agent_capabilities,
            capabilities=capabilities,
            client_id=client_id,
            compression_mode=compression_mode,
            cwd=cwd,
            handle=handle,
            harness_id=harness_id,
            host_id=host_id,
            model=model,
            offline_since=offline_since,
            persona_id=persona_id,
            placement=placement,
            profile_id=profile_id,
            provider_config_id=provider_config_id,
            reported_status=reported_status,
            reported_status_at=reported_status_at,
            spawned_by=spawned_by,
        )

        agent.additional_properties = d
        return agent

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
