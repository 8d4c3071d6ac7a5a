from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.turn_status import TurnStatus, check_turn_status
from ..types import UNSET, Unset

T = TypeVar("T", bound="Turn")


@_attrs_define
class Turn:
    """
    Attributes:
        session_id (str):
        started_at (int):
        status (TurnStatus):
        turn_id (str):
        turn_number (int):
        completed_at (int | None | Unset):
        error (None | str | Unset):
        usage (Any | Unset):
    """

    session_id: str
    started_at: int
    status: TurnStatus
    turn_id: str
    turn_number: int
    completed_at: int | None | Unset = UNSET
    error: None | str | Unset = UNSET
    usage: Any | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        session_id = self.session_id

        started_at = self.started_at

        status: str = self.status

        turn_id = self.turn_id

        turn_number = self.turn_number

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

        usage = self.usage

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "sessionId": session_id,
                "startedAt": started_at,
                "status": status,
                "turnId": turn_id,
                "turnNumber": turn_number,
            }
        )
        if completed_at is not UNSET:
            field_dict["completedAt"] = completed_at
        if error is not UNSET:
            field_dict["error"] = error
        if usage is not UNSET:
            field_dict["usage"] = usage

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        session_id = d.pop("sessionId")

        started_at = d.pop("startedAt")

        status = check_turn_status(d.pop("status"))

        turn_id = d.pop("turnId")

        turn_number = d.pop("turnNumber")

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

        usage = d.pop("usage", UNSET)

        turn = cls(
            session_id=session_id,
            started_at=started_at,
            status=status,
            turn_id=turn_id,
            turn_number=turn_number,
            completed_at=completed_at,
            error=error,
            usage=usage,
        )

        turn.additional_properties = d
        return turn

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
