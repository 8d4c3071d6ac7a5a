from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="Sent")


@_attrs_define
class Sent:
    """
    Attributes:
        message_id (str):
        success (bool):
        delivery_ids (list[str] | None | Unset):
        schedule_id (None | str | Unset): With `deliverAt`: the schedule holding it (`GET /schedules/{id}`).
        turn_id (None | str | Unset): Absent while a `deliverAt` message is held.
    """

    message_id: str
    success: bool
    delivery_ids: list[str] | None | Unset = UNSET
    schedule_id: None | str | Unset = UNSET
    turn_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        message_id = self.message_id

        success = self.success

        delivery_ids: list[str] | None | Unset
        if isinstance(self.delivery_ids, Unset):
            delivery_ids = UNSET
        elif isinstance(self.delivery_ids, list):
            delivery_ids = self.delivery_ids

        else:
            delivery_ids = self.delivery_ids

        schedule_id: None | str | Unset
        if isinstance(self.schedule_id, Unset):
            schedule_id = UNSET
        else:
            schedule_id = self.schedule_id

        turn_id: None | str | Unset
        if isinstance(self.turn_id, Unset):
            turn_id = UNSET
        else:
            turn_id = self.turn_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "messageId": message_id,
                "success": success,
            }
        )
        if delivery_ids is not UNSET:
            field_dict["deliveryIds"] = delivery_ids
        if schedule_id is not UNSET:
            field_dict["scheduleId"] = schedule_id
        if turn_id is not UNSET:
            field_dict["turnId"] = turn_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        message_id = d.pop("messageId")

        success = d.pop("success")

        def _parse_delivery_ids(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                delivery_ids_type_0 = cast(list[str], data)

                return delivery_ids_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        delivery_ids = _parse_delivery_ids(d.pop("deliveryIds", UNSET))

        def _parse_schedule_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        schedule_id = _parse_schedule_id(d.pop("scheduleId", UNSET))

        def _parse_turn_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        turn_id = _parse_turn_id(d.pop("turnId", UNSET))

        sent = cls(
            message_id=message_id,
            success=success,
            delivery_ids=delivery_ids,
            schedule_id=schedule_id,
            turn_id=turn_id,
        )

        sent.additional_properties = d
        return sent

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
