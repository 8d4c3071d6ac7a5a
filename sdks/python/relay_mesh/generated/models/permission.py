from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.decision import Decision, check_decision
from ..models.risk import Risk, check_risk
from ..types import UNSET, Unset

T = TypeVar("T", bound="Permission")


@_attrs_define
class Permission:
    """A stored permission request, as `permission.get` and `permission.list` return it.

    Attributes:
        agent_id (str):
        description (str):
        request_id (str):
        requested_at (int):
        risk_level (Risk): Seed 003 §2.3 risk levels, lowest first.
        session_id (str):
        status (Decision):
        tool (str):
        command (None | str | Unset):
        decided_at (int | None | Unset):
        decided_by (None | str | Unset):
        expires_at (int | None | Unset): When a pending request is decided by the expiry action.
        file_path (None | str | Unset):
        reason (None | str | Unset):
    """

    agent_id: str
    description: str
    request_id: str
    requested_at: int
    risk_level: Risk
    session_id: str
    status: Decision
    tool: str
    command: None | str | Unset = UNSET
    decided_at: int | None | Unset = UNSET
    decided_by: None | str | Unset = UNSET
    expires_at: int | None | Unset = UNSET
    file_path: None | str | Unset = UNSET
    reason: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        agent_id = self.agent_id

        description = self.description

        request_id = self.request_id

        requested_at = self.requested_at

        risk_level: str = self.risk_level

        session_id = self.session_id

        status: str = self.status

        tool = self.tool

        command: None | str | Unset
        if isinstance(self.command, Unset):
            command = UNSET
        else:
            command = self.command

        decided_at: int | None | Unset
        if isinstance(self.decided_at, Unset):
            decided_at = UNSET
        else:
            decided_at = self.decided_at

        decided_by: None | str | Unset
        if isinstance(self.decided_by, Unset):
            decided_by = UNSET
        else:
            decided_by = self.decided_by

        expires_at: int | None | Unset
        if isinstance(self.expires_at, Unset):
            expires_at = UNSET
        else:
            expires_at = self.expires_at

        file_path: None | str | Unset
        if isinstance(self.file_path, Unset):
            file_path = UNSET
        else:
            file_path = self.file_path

        reason: None | str | Unset
        if isinstance(self.reason, Unset):
            reason = UNSET
        else:
            reason = self.reason

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "agentId": agent_id,
                "description": description,
                "requestId": request_id,
                "requestedAt": requested_at,
                "riskLevel": risk_level,
                "sessionId": session_id,
                "status": status,
                "tool": tool,
            }
        )
        if command is not UNSET:
            field_dict["command"] = command
        if decided_at is not UNSET:
            field_dict["decidedAt"] = decided_at
        if decided_by is not UNSET:
            field_dict["decidedBy"] = decided_by
        if expires_at is not UNSET:
            field_dict["expiresAt"] = expires_at
        if file_path is not UNSET:
            field_dict["filePath"] = file_path
        if reason is not UNSET:
            field_dict["reason"] = reason

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        agent_id = d.pop("agentId")

        description = d.pop("description")

        request_id = d.pop("requestId")

        requested_at = d.pop("requestedAt")

        risk_level = check_risk(d.pop("riskLevel"))

        session_id = d.pop("sessionId")

        status = check_decision(d.pop("status"))

        tool = d.pop("tool")

        def _parse_command(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        command = _parse_command(d.pop("command", UNSET))

        def _parse_decided_at(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        decided_at = _parse_decided_at(d.pop("decidedAt", UNSET))

        def _parse_decided_by(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        decided_by = _parse_decided_by(d.pop("decidedBy", UNSET))

        def _parse_expires_at(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        expires_at = _parse_expires_at(d.pop("expiresAt", UNSET))

        def _parse_file_path(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        file_path = _parse_file_path(d.pop("filePath", UNSET))

        def _parse_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reason = _parse_reason(d.pop("reason", UNSET))

        permission = cls(
            agent_id=agent_id,
            description=description,
            request_id=request_id,
            requested_at=requested_at,
            risk_level=risk_level,
            session_id=session_id,
            status=status,
            tool=tool,
            command=command,
            decided_at=decided_at,
            decided_by=decided_by,
            expires_at=expires_at,
            file_path=file_path,
            reason=reason,
        )

        permission.additional_properties = d
        return permission

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
