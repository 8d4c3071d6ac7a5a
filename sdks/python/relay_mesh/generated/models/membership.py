from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="Membership")


@_attrs_define
class Membership:
    """Whom a person adds to or removes from a channel.

    Attributes:
        agent (str): The agent: a handle (`@bob`) or an agent id.
    """

    agent: str

    def to_dict(self) -> dict[str, Any]:
        agent = self.agent

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "agent": agent,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        agent = d.pop("agent")

        membership = cls(
            agent=agent,
        )

        return membership
