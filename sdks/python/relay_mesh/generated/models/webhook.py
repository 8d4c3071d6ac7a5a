from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.a2a_task_push import A2ATaskPush


T = TypeVar("T", bound="Webhook")


@_attrs_define
class Webhook:
    """A subscription. Its `secret` is shown only in the reply to `webhook.create`.

    Attributes:
        consecutive_failures (int): Failed attempts since the last success.
        created_at (int):
        created_by (str):
        enabled (bool):
        events (list[str]):
        updated_at (int):
        url (str):
        webhook_id (str):
        a_2_a_task (A2ATaskPush | None | Unset):
        description (None | str | Unset):
        disabled_reason (None | str | Unset): Why it was disabled (by a person, or after too many failed attempts in a
            row).
        secret (None | str | Unset):
    """

    consecutive_failures: int
    created_at: int
    created_by: str
    enabled: bool
    events: list[str]
    updated_at: int
    url: str
    webhook_id: str
    a_2_a_task: A2ATaskPush | None | Unset = UNSET
    description: None | str | Unset = UNSET
    disabled_reason: None | str | Unset = UNSET
    secret: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.a2a_task_push import A2ATaskPush

        consecutive_failures = self.consecutive_failures

        created_at = self.created_at

        created_by = self.created_by

        enabled = self.enabled

        events = self.events

        updated_at = self.updated_at

        url = self.url

        webhook_id = self.webhook_id

        a_2_a_task: dict[str, Any] | None | Unset
        if isinstance(self.a_2_a_task, Unset):
            a_2_a_task = UNSET
        elif isinstance(self.a_2_a_task, A2ATaskPush):
            a_2_a_task = self.a_2_a_task.to_dict()
        else:
            a_2_a_task = self.a_2_a_task

        description: None | str | Unset
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        disabled_reason: None | str | Unset
        if isinstance(self.disabled_reason, Unset):
            disabled_reason = UNSET
        else:
            disabled_reason = self.disabled_reason

        secret: None | str | Unset
        if isinstance(self.secret, Unset):
            secret = UNSET
        else:
            secret = self.secret

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "consecutiveFailures": consecutive_failures,
                "createdAt": created_at,
                "createdBy": created_by,
                "enabled": enabled,
                "events": events,
                "updatedAt": updated_at,
                "url": url,
                "webhookId": webhook_id,
            }
        )
        if a_2_a_task is not UNSET:
            field_dict["a2aTask"] = a_2_a_task
        if description is not UNSET:
            field_dict["description"] = description
        if disabled_reason is not UNSET:
            field_dict["disabledReason"] = disabled_reason
        if secret is not UNSET:
            field_dict["secret"] = secret

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.a2a_task_push import A2ATaskPush

        d = dict(src_dict)
        consecutive_failures = d.pop("consecutiveFailures")

        created_at = d.pop("createdAt")

        created_by = d.pop("createdBy")

        enabled = d.pop("enabled")

        events = cast(list[str], d.pop("events"))

        updated_at = d.pop("updatedAt")

        url = d.pop("url")

        webhook_id = d.pop("webhookId")

        def _parse_a_2_a_task(data: object) -> A2ATaskPush | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                a_2_a_task_type_1 = A2ATaskPush.from_dict(data)

                return a_2_a_task_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(A2ATaskPush | None | Unset, data)

        a_2_a_task = _parse_a_2_a_task(d.pop("a2aTask", UNSET))

        def _parse_description(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        description = _parse_description(d.pop("description", UNSET))

        def _parse_disabled_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        disabled_reason = _parse_disabled_reason(d.pop("disabledReason", UNSET))

        def _parse_secret(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        secret = _parse_secret(d.pop("secret", UNSET))

        webhook = cls(
            consecutive_failures=consecutive_failures,
            created_at=created_at,
            created_by=created_by,
            enabled=enabled,
            events=events,
            updated_at=updated_at,
            url=url,
            webhook_id=webhook_id,
            a_2_a_task=a_2_a_task,
            description=description,
            disabled_reason=disabled_reason,
            secret=secret,
        )

        webhook.additional_properties = d
        return webhook

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
