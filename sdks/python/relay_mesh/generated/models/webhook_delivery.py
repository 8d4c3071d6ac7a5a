from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.webhook_delivery_status import (
    WebhookDeliveryStatus,
    check_webhook_delivery_status,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="WebhookDelivery")


@_attrs_define
class WebhookDelivery:
    """One event posted to one subscription: its `webhook-id` header is `deliveryId`, the same on
    every attempt, so a receiver can drop repeats.

        Attributes:
            attempts (int):
            created_at (int):
            delivery_id (str):
            event_seq (int): The event's seq in the log.
            event_type (str):
            status (WebhookDeliveryStatus):
            webhook_id (str):
            delivered_at (int | None | Unset):
            last_error (None | str | Unset): Why the last attempt failed (no answer, refused address, …).
            last_status (int | None | Unset): The receiver's last HTTP status.
            next_attempt_at (int | None | Unset): When the next attempt goes (pending only).
    """

    attempts: int
    created_at: int
    delivery_id: str
    event_seq: int
    event_type: str
    status: WebhookDeliveryStatus
    webhook_id: str
    delivered_at: int | None | Unset = UNSET
    last_error: None | str | Unset = UNSET
    last_status: int | None | Unset = UNSET
    next_attempt_at: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attempts = self.attempts

        created_at = self.created_at

        delivery_id = self.delivery_id

        event_seq = self.event_seq

        event_type = self.event_type

        status: str = self.status

        webhook_id = self.webhook_id

        delivered_at: int | None | Unset
        if isinstance(self.delivered_at, Unset):
            delivered_at = UNSET
        else:
            delivered_at = self.delivered_at

        last_error: None | str | Unset
        if isinstance(self.last_error, Unset):
            last_error = UNSET
        else:
            last_error = self.last_error

        last_status: int | None | Unset
        if isinstance(self.last_status, Unset):
            last_status = UNSET
        else:
            last_status = self.last_status

        next_attempt_at: int | None | Unset
        if isinstance(self.next_attempt_at, Unset):
            next_attempt_at = UNSET
        else:
            next_attempt_at = self.next_attempt_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempts": attempts,
                "createdAt": created_at,
                "deliveryId": delivery_id,
                "eventSeq": event_seq,
                "eventType": event_type,
                "status": status,
                "webhookId": webhook_id,
            }
        )
        if delivered_at is not UNSET:
            field_dict["deliveredAt"] = delivered_at
        if last_error is not UNSET:
            field_dict["lastError"] = last_error
        if last_status is not UNSET:
            field_dict["lastStatus"] = last_status
        if next_attempt_at is not UNSET:
            field_dict["nextAttemptAt"] = next_attempt_at

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        attempts = d.pop("attempts")

        created_at = d.pop("createdAt")

        delivery_id = d.pop("deliveryId")

        event_seq = d.pop("eventSeq")

        event_type = d.pop("eventType")

        status = check_webhook_delivery_status(d.pop("status"))

        webhook_id = d.pop("webhookId")

        def _parse_delivered_at(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        delivered_at = _parse_delivered_at(d.pop("deliveredAt", UNSET))

        def _parse_last_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        last_error = _parse_last_error(d.pop("lastError", UNSET))

        def _parse_last_status(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        last_status = _parse_last_status(d.pop("lastStatus", UNSET))

        def _parse_next_attempt_at(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        next_attempt_at = _parse_next_attempt_at(d.pop("nextAttemptAt", UNSET))

        webhook_delivery = cls(
            attempts=attempts,
            created_at=created_at,
            delivery_id=delivery_id,
            event_seq=event_seq,
            event_type=event_type,
            status=status,
            webhook_id=webhook_id,
            delivered_at=delivered_at,
            last_error=last_error,
            last_status=last_status,
            next_attempt_at=next_attempt_at,
        )

        webhook_delivery.additional_properties = d
        return webhook_delivery

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
