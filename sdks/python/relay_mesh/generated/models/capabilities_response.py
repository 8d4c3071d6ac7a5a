from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.ag_ui_capabilities import AgUiCapabilities
    from ..models.agent_session_capabilities import AgentSessionCapabilities


T = TypeVar("T", bound="CapabilitiesResponse")


@_attrs_define
class CapabilitiesResponse:
    """
    Attributes:
        agent_id (str):
        capabilities (AgentSessionCapabilities): What one attached agent session can receive, emit, invoke, expose and
            release (seed 000).
        session_id (str):
        agent_capabilities (AgUiCapabilities | None | Unset):
    """

    agent_id: str
    capabilities: AgentSessionCapabilities
    session_id: str
    agent_capabilities: AgUiCapabilities | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.ag_ui_capabilities import AgUiCapabilities

        agent_id = self.agent_id

        capabilities = self.capabilities.to_dict()

        session_id = self.session_id

        agent_capabilities: dict[str, Any] | None | Unset
        if isinstance(self.agent_capabilities, Unset):
            agent_capabilities = UNSET
        elif isinstance(self.agent_capabilities, AgUiCapabilities):
            agent_capabilities = self.agent_capabilities.to_dict()
        else:
            agent_capabilities = self.agent_capabilities

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "agentId": agent_id,
                "capabilities": capabilities,
                "sessionId": session_id,
            }
        )
        if agent_capabilities is not UNSET:
            field_dict["agentCapabilities"] = agent_capabilities

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.ag_ui_capabilities import AgUiCapabilities
        from ..models.agent_session_capabilities import AgentSessionCapabilities

        d = dict(src_dict)
        agent_id = d.pop("agentId")

        capabilities = AgentSessionCapabilities.from_dict(d.pop("capabilities"))

        session_id = d.pop("sessionId")

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

        capabilities_response = cls(
            agent_id=agent_id,
            capabilities=capabilities,
            session_id=session_id,
            agent_capabilities=agent_capabilities,
        )

        capabilities_response.additional_properties = d
        return capabilities_response

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
