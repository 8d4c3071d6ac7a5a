from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="Recipient")


@_attrs_define
class Recipient:
    """What became of one recipient.

    Attributes:
        agent_id (str):
        handle (str):
        reason (str): `dm`, `message`, `mention`, `thread-reply` or `notification` (seed 001).
        status (str): `queued` (its delivery is stored; receipts follow on `delivery.*`) or `failed`.
        delivery_id (None | str | Unset):
        error (None | str | Unset): Why it failed (a capability it lacks, a guard).
    """

    agent_id: str
    handle: str
    reason: str
    status: str
    delivery_id: None | str | Unset = UNSET
    error: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        agent_id = self.agent_id

        handle = self.handle

        reason = self.reason

        status = self.status

        delivery_id: None | str | Unset
        if isinstance(self.delivery_id, Unset):
            delivery_id = UNSET
        else:
            delivery_id = self.delivery_id

        error: None | str | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        else:
            error = self.error

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "agentId": agent_id,
                "handle": handle,
                "reason": reason,
                "status": status,
            }
        )
        if delivery_id is not UNSET:
            field_dict["deliveryId"] = delivery_id
        if error is not UNSET:
            field_dict["error"] = error

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        agent_id = d.pop("agentId")

        handle = d.pop("handle")

        reason = d.pop("reason")

        status = d.pop("status")

        def _parse_delivery_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        delivery_id = _parse_delivery_id(d.pop("deliveryId", UNSET))

        def _parse_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error = _parse_error(d.pop("error", UNSET))

        recipient = cls(
            agent_id=agent_id,
            handle=handle,
            reason=reason,
            status=status,
            delivery_id=delivery_id,
            error=error,
        )

        recipient.additional_properties = d
        return recipient

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
