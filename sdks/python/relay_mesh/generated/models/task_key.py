from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="TaskKey")


@_attrs_define
class TaskKey:
    """A task's address: id `<agentId>:<messageId>`, context the agent's session.

    Attributes:
        agent_id (str):
        message_id (str):
        session_id (str):
    """

    agent_id: str
    message_id: str
    session_id: str

    def to_dict(self) -> dict[str, Any]:
        agent_id = self.agent_id

        message_id = self.message_id

        session_id = self.session_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "agentId": agent_id,
                "messageId": message_id,
                "sessionId": session_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        agent_id = d.pop("agentId")

        message_id = d.pop("messageId")

        session_id = d.pop("sessionId")

        task_key = cls(
            agent_id=agent_id,
            message_id=message_id,
            session_id=session_id,
        )

        return task_key
