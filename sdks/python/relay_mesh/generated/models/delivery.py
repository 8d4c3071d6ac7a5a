from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.delivery_mode import DeliveryMode, check_delivery_mode
from ..models.delivery_status import DeliveryStatus, check_delivery_status
from ..types import UNSET, Unset

T = TypeVar("T", bound="Delivery")


@_attrs_define
class Delivery:
    """
    Attributes:
        agent_id (str):
        attempts (int):
        available_at (int): Not attempted before this time (Unix ms): a deferral's availableAt, a retry's backoff.
        created_at (int):
        delivery_id (str):
        message_id (str):
        mode (DeliveryMode): When a message should be surfaced to the session (seed 001).
        session_id (str):
        status (DeliveryStatus): created → accepted/deferred → delivered | failed; cancelled by request.
        updated_at (int):
        metadata (Any | Unset):
        reason (None | str | Unset): Why it was deferred, failed or cancelled.
        retryable (bool | None | Unset):
    """

    agent_id: str
    attempts: int
    available_at: int
    created_at: int
    delivery_id: str
    message_id: str
    mode: DeliveryMode
    session_id: str
    status: DeliveryStatus
    updated_at: int
    metadata: Any | Unset = UNSET
    reason: None | str | Unset = UNSET
    retryable: bool | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        agent_id = self.agent_id

        attempts = self.attempts

        available_at = self.available_at

        created_at = self.created_at

        delivery_id = self.delivery_id

        message_id = self.message_id

        mode: str = self.mode

        session_id = self.session_id

        status: str = self.status

        updated_at = self.updated_at

        metadata = self.metadata

        reason: None | str | Unset
        if isinstance(self.reason, Unset):
            reason = UNSET
        else:
            reason = self.reason

        retryable: bool | None | Unset
        if isinstance(self.retryable, Unset):
            retryable = UNSET
        else:
            retryable = self.retryable

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "agentId": agent_id,
                "attempts": attempts,
                "availableAt": available_at,
                "createdAt": created_at,
                "deliveryId": delivery_id,
                "messageId": message_id,
                "mode": mode,
                "sessionId": session_id,
                "status": status,
                "updatedAt": updated_at,
            }
        )
        if metadata is not UNSET:
            field_dict["metadata"] = metadata
        if reason is not UNSET:
            field_dict["reason"] = reason
        if retryable is not UNSET:
            field_dict["retryable"] = retryable

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        agent_id = d.pop("agentId")

        attempts = d.pop("attempts")

        available_at = d.pop("availableAt")

        created_at = d.pop("createdAt")

        delivery_id = d.pop("deliveryId")

        message_id = d.pop("messageId")

        mode = check_delivery_mode(d.pop("mode"))

        session_id = d.pop("sessionId")

        status = check_delivery_status(d.pop("status"))

        updated_at = d.pop("updatedAt")

        metadata = d.pop("metadata", UNSET)

        def _parse_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reason = _parse_reason(d.pop("reason", UNSET))

        def _parse_retryable(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        retryable = _parse_retryable(d.pop("retryable", UNSET))

        delivery = cls(
            agent_id=agent_id,
            attempts=attempts,
            available_at=available_at,
            created_at=created_at,
            delivery_id=delivery_id,
            message_id=message_id,
            mode=mode,
            session_id=session_id,
            status=status,
            updated_at=updated_at,
            metadata=metadata,
            reason=reason,
            retryable=retryable,
        )

        delivery.additional_properties = d
        return delivery

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
