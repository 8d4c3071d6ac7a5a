from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.agent_session_event_type import (
    AgentSessionEventType,
    check_agent_session_event_type,
)

T = TypeVar("T", bound="EventCapabilities")


@_attrs_define
class EventCapabilities:
    """
    Attributes:
        emits (list[AgentSessionEventType]):
    """

    emits: list[AgentSessionEventType]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        emits = []
        for emits_item_data in self.emits:
            emits_item: str = emits_item_data
            emits.append(emits_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "emits": emits,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        emits = []
        _emits = d.pop("emits")
        for emits_item_data in _emits:
            emits_item = check_agent_session_event_type(emits_item_data)

            emits.append(emits_item)

        event_capabilities = cls(
            emits=emits,
        )

        event_capabilities.additional_properties = d
        return event_capabilities

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
