from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.delivery_mode import DeliveryMode, check_delivery_mode
from ..models.priority import Priority, check_priority
from ..types import UNSET, Unset

T = TypeVar("T", bound="SendMessage")


@_attrs_define
class SendMessage:
    """Seed 003 `POST /api/v1/sessions/:id/messages`; `mode`, `agentIds` and `messageId` are relay
    extensions (the delivery mode, the target agents, an idempotency key).

        Attributes:
            message (str):
            agent_ids (list[str] | None | Unset):
            deadline (None | str | Unset): Seed 001 (RFC 3339): a delivery still waiting then fails with reason `deadline`.
            deliver_at (int | None | Unset): Hold the message until this Unix time in ms, then send it (a one-time
                schedule).
            message_id (None | str | Unset):
            mode (DeliveryMode | None | Unset):
            on_busy (None | str | Unset): When a target agent is busy with a running turn: `enqueue` (default), `reject`
                (409
                naming the turn), `interrupt` (cancel the turn, then deliver) or `rollback` (as
                interrupt, and the turn's messages are marked superseded).
            priority (None | Priority | Unset):
    """

    message: str
    agent_ids: list[str] | None | Unset = UNSET
    deadline: None | str | Unset = UNSET
    deliver_at: int | None | Unset = UNSET
    message_id: None | str | Unset = UNSET
    mode: DeliveryMode | None | Unset = UNSET
    on_busy: None | str | Unset = UNSET
    priority: None | Priority | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        message = self.message

        agent_ids: list[str] | None | Unset
        if isinstance(self.agent_ids, Unset):
            agent_ids = UNSET
        elif isinstance(self.agent_ids, list):
            agent_ids = self.agent_ids

        else:
            agent_ids = self.agent_ids

        deadline: None | str | Unset
        if isinstance(self.deadline, Unset):
            deadline = UNSET
        else:
            deadline = self.deadline

        deliver_at: int | None | Unset
        if isinstance(self.deliver_at, Unset):
            deliver_at = UNSET
        else:
            deliver_at = self.deliver_at

        message_id: None | str | Unset
        if isinstance(self.message_id, Unset):
            message_id = UNSET
        else:
            message_id = self.message_id

        mode: None | str | Unset
        if isinstance(self.mode, Unset):
            mode = UNSET
        elif isinstance(self.mode, str):
            mode = self.mode
        else:
            mode = self.mode

        on_busy: None | str | Unset
        if isinstance(self.on_busy, Unset):
            on_busy = UNSET
        else:
            on_busy = self.on_busy

        priority: None | str | Unset
        if isinstance(self.priority, Unset):
            priority = UNSET
        elif isinstance(self.priority, str):
            priority = self.priority
        else:
            priority = self.priority

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "message": message,
            }
        )
        if agent_ids is not UNSET:
            field_dict["agentIds"] = agent_ids
        if deadline is not UNSET:
            field_dict["deadline"] = deadline
        if deliver_at is not UNSET:
            field_dict["deliverAt"] = deliver_at
        if message_id is not UNSET:
            field_dict["messageId"] = message_id
        if mode is not UNSET:
            field_dict["mode"] = mode
        if on_busy is not UNSET:
            field_dict["onBusy"] = on_busy
        if priority is not UNSET:
            field_dict["priority"] = priority

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        message = d.pop("message")

        def _parse_agent_ids(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                agent_ids_type_0 = cast(list[str], data)

                return agent_ids_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        agent_ids = _parse_agent_ids(d.pop("agentIds", UNSET))

        def _parse_deadline(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        deadline = _parse_deadline(d.pop("deadline", UNSET))

        def _parse_deliver_at(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        deliver_at = _parse_deliver_at(d.pop("deliverAt", UNSET))

        def _parse_message_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        message_id = _parse_message_id(d.pop("messageId", UNSET))

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

        def _parse_on_busy(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        on_busy = _parse_on_busy(d.pop("onBusy", UNSET))

        def _parse_priority(data: object) -> None | Priority | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                priority_type_1 = check_priority(data)

                return priority_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Priority | Unset, data)

        priority = _parse_priority(d.pop("priority", UNSET))

        send_message = cls(
            message=message,
            agent_ids=agent_ids,
            deadline=deadline,
            deliver_at=deliver_at,
            message_id=message_id,
            mode=mode,
            on_busy=on_busy,
            priority=priority,
        )

        return send_message
