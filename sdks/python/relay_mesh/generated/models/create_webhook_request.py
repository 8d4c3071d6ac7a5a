from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.a2a_task_push import A2ATaskPush


T = TypeVar("T", bound="CreateWebhookRequest")


@_attrs_define
class CreateWebhookRequest:
    """`webhook.create`: a subscription of the caller's workspace.

    Attributes:
        url (str): An http(s) URL. Loopback, link-local and private addresses are refused unless the
            automation service allows them (`webhooks.allow_private`), also when a name resolves to
            one at send time; redirects are not followed.
        a_2_a_task (A2ATaskPush | None | Unset):
        description (None | str | Unset):
        events (list[str] | None | Unset): Event types (`session.created`, …), or `*` for all; the attention defaults
            when absent:
            permission.requested, question.requested, budget.exceeded, status.idle (the agent went
            idle), session.turn.completed, delivery.failed.
        secret (None | str | Unset): The signing secret, `whsec_` + base64 of 24 to 64 bytes; one is made when absent.
    """

    url: str
    a_2_a_task: A2ATaskPush | None | Unset = UNSET
    description: None | str | Unset = UNSET
    events: list[str] | None | Unset = UNSET
    secret: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.a2a_task_push import A2ATaskPush

        url = self.url

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

        events: list[str] | None | Unset
        if isinstance(self.events, Unset):
            events = UNSET
        elif isinstance(self.events, list):
            events = self.events

        else:
            events = self.events

        secret: None | str | Unset
        if isinstance(self.secret, Unset):
            secret = UNSET
        else:
            secret = self.secret

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "url": url,
            }
        )
        if a_2_a_task is not UNSET:
            field_dict["a2aTask"] = a_2_a_task
        if description is not UNSET:
            field_dict["description"] = description
        if events is not UNSET:
            field_dict["events"] = events
        if secret is not UNSET:
            field_dict["secret"] = secret

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.a2a_task_push import A2ATaskPush

        d = dict(src_dict)
        url = d.pop("url")

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

        def _parse_events(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                events_type_0 = cast(list[str], data)

                return events_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        events = _parse_events(d.pop("events", UNSET))

        def _parse_secret(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        secret = _parse_secret(d.pop("secret", UNSET))

        create_webhook_request = cls(
            url=url,
            a_2_a_task=a_2_a_task,
            description=description,
            events=events,
            secret=secret,
        )

        return create_webhook_request
