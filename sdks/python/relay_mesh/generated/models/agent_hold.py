from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="AgentHold")


@_attrs_define
class AgentHold:
    """The agent's delivery hold after `agent.pause` / `agent.resume`.

    Attributes:
        agent_id (str):
        paused (bool):
        waiting (int): Deliveries waiting for the agent (pending or deferred).
    """

    agent_id: str
    paused: bool
    waiting: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        agent_id = self.agent_id

        paused = self.paused

        waiting = self.waiting

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "agentId": agent_id,
                "paused": paused,
                "waiting": waiting,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        agent_id = d.pop("agentId")

        paused = d.pop("paused")

        waiting = d.pop("waiting")

        agent_hold = cls(
            agent_id=agent_id,
            paused=paused,
            waiting=waiting,
        )

        agent_hold.additional_properties = d
        return agent_hold

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
