from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.invocation_status import InvocationStatus, check_invocation_status
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.invocation_output import InvocationOutput


T = TypeVar("T", bound="Invocation")


@_attrs_define
class Invocation:
    """One invocation and, once it ended, its outcome.

    Attributes:
        action (str):
        agent_id (str):
        invocation_id (str):
        started_at (int):
        status (InvocationStatus):
        completed_at (int | None | Unset):
        error (None | str | Unset):
        output (InvocationOutput | Unset):
        permission_request_id (None | str | Unset): The permission request a person decides, while `pending` (and
            after).
    """

    action: str
    agent_id: str
    invocation_id: str
    started_at: int
    status: InvocationStatus
    completed_at: int | None | Unset = UNSET
    error: None | str | Unset = UNSET
    output: InvocationOutput | Unset = UNSET
    permission_request_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        action = self.action

        agent_id = self.agent_id

        invocation_id = self.invocation_id

        started_at = self.started_at

        status: str = self.status

        completed_at: int | None | Unset
        if isinstance(self.completed_at, Unset):
            completed_at = UNSET
        else:
            completed_at = self.completed_at

        error: None | str | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        else:
            error = self.error

        output: dict[str, Any] | Unset = UNSET
        if not isinstance(self.output, Unset):
            output = self.output.to_dict()

        permission_request_id: None | str | Unset
        if isinstance(self.permission_request_id, Unset):
            permission_request_id = UNSET
        else:
            permission_request_id = self.permission_request_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "action": action,
                "agentId": agent_id,
                "invocationId": invocation_id,
                "startedAt": started_at,
                "status": status,
            }
        )
        if completed_at is not UNSET:
            field_dict["completedAt"] = completed_at
        if error is not UNSET:
            field_dict["error"] = error
        if output is not UNSET:
            field_dict["output"] = output
        if permission_request_id is not UNSET:
            field_dict["permissionRequestId"] = permission_request_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.invocation_output import InvocationOutput

        d = dict(src_dict)
        action = d.pop("action")

        agent_id = d.pop("agentId")

        invocation_id = d.pop("invocationId")

        started_at = d.pop("startedAt")

        status = check_invocation_status(d.pop("status"))

        def _parse_completed_at(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        completed_at = _parse_completed_at(d.pop("completedAt", UNSET))

        def _parse_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error = _parse_error(d.pop("error", UNSET))

        _output = d.pop("output", UNSET)
        output: InvocationOutput | Unset
        if isinstance(_output, Unset):
            output = UNSET
        else:
            output = InvocationOutput.from_dict(_output)

        def _parse_permission_request_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        permission_request_id = _parse_permission_request_id(
            d.pop("permissionRequestId", UNSET)
        )

        invocation = cls(
            action=action,
            agent_id=agent_id,
            invocation_id=invocation_id,
            started_at=started_at,
            status=status,
            completed_at=completed_at,
            error=error,
            output=output,
            permission_request_id=permission_request_id,
        )

        invocation.additional_properties = d
        return invocation

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
