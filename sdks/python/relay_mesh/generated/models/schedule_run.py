from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.schedule_run_result import ScheduleRunResult


T = TypeVar("T", bound="ScheduleRun")


@_attrs_define
class ScheduleRun:
    """What one run did.

    Attributes:
        due_at (int): The time it was due.
        fired_at (int):
        ok (bool):
        result (ScheduleRunResult): The action's reply (the message or session id), or its error.
    """

    due_at: int
    fired_at: int
    ok: bool
    result: ScheduleRunResult
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        due_at = self.due_at

        fired_at = self.fired_at

        ok = self.ok

        result = self.result.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "dueAt": due_at,
                "firedAt": fired_at,
                "ok": ok,
                "result": result,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.schedule_run_result import ScheduleRunResult

        d = dict(src_dict)
        due_at = d.pop("dueAt")

        fired_at = d.pop("firedAt")

        ok = d.pop("ok")

        result = ScheduleRunResult.from_dict(d.pop("result"))

        schedule_run = cls(
            due_at=due_at,
            fired_at=fired_at,
            ok=ok,
            result=result,
        )

        schedule_run.additional_properties = d
        return schedule_run

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
