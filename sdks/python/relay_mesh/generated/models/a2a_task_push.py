from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.task_key import TaskKey


T = TypeVar("T", bound="A2ATaskPush")


@_attrs_define
class A2ATaskPush:
    """A webhook that follows one A2A task (made by the A2A push-notification calls): its updates
    are posted as A2A `StreamResponse`s with the client's token in
    [`NOTIFICATION_TOKEN_HEADER`], instead of the workspace's events.

        Attributes:
            task (TaskKey): A task's address: id `<agentId>:<messageId>`, context the agent's session.
            token (None | str | Unset): Printable ASCII (it goes back in an HTTP header).
    """

    task: TaskKey
    token: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        task = self.task.to_dict()

        token: None | str | Unset
        if isinstance(self.token, Unset):
            token = UNSET
        else:
            token = self.token

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "task": task,
            }
        )
        if token is not UNSET:
            field_dict["token"] = token

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.task_key import TaskKey

        d = dict(src_dict)
        task = TaskKey.from_dict(d.pop("task"))

        def _parse_token(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        token = _parse_token(d.pop("token", UNSET))

        a2a_task_push = cls(
            task=task,
            token=token,
        )

        return a2a_task_push
