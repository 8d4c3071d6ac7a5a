from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.delivery_mode import DeliveryMode, check_delivery_mode
from ..models.schedule_action_type_1_kind import (
    ScheduleActionType1Kind,
    check_schedule_action_type_1_kind,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="ScheduleActionType1")


@_attrs_define
class ScheduleActionType1:
    """A relay message (`message.send`) to `@handle`, `#channel` or a list of handles.

    Attributes:
        kind (ScheduleActionType1Kind):
        text (str):
        to (list[str] | str): Where a message goes: `"@bob"`, `"#ops"`, or `["@bob", "@carol"]` (a group DM).
        mode (DeliveryMode | None | Unset):
    """

    kind: ScheduleActionType1Kind
    text: str
    to: list[str] | str
    mode: DeliveryMode | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind: str = self.kind

        text = self.text

        to: list[str] | str
        if isinstance(self.to, list):
            to = self.to

        else:
            to = self.to

        mode: None | str | Unset
        if isinstance(self.mode, Unset):
            mode = UNSET
        elif isinstance(self.mode, str):
            mode = self.mode
        else:
            mode = self.mode

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "text": text,
                "to": to,
            }
        )
        if mode is not UNSET:
            field_dict["mode"] = mode

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        kind = check_schedule_action_type_1_kind(d.pop("kind"))

        text = d.pop("text")

        def _parse_to(data: object) -> list[str] | str:
            try:
                if not isinstance(data, list):
                    raise TypeError()
                componentsschemas_to_type_1 = cast(list[str], data)

                return componentsschemas_to_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | str, data)

        to = _parse_to(d.pop("to"))

        def _parse_mode(data: object) -> DeliveryMode | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                mode_type_1 = check_delivery_mode(data)

                return mode_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DeliveryMode | None | Unset, data)

        mode = _parse_mode(d.pop("mode", UNSET))

        schedule_action_type_1 = cls(
            kind=kind,
            text=text,
            to=to,
            mode=mode,
        )

        schedule_action_type_1.additional_properties = d
        return schedule_action_type_1

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
