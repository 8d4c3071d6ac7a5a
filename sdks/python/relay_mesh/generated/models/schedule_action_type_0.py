from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.delivery_mode import DeliveryMode, check_delivery_mode
from ..models.priority import Priority, check_priority
from ..models.schedule_action_type_0_kind import (
    ScheduleActionType0Kind,
    check_schedule_action_type_0_kind,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="ScheduleActionType0")


@_attrs_define
class ScheduleActionType0:
    """`session.sendMessage` to a session (each run a message id of its own, so a run retried
    after a crash is sent once).

        Attributes:
            kind (ScheduleActionType0Kind):
            session_id (str):
            text (str):
            agent_ids (list[str] | None | Unset): Only these of the session's agents (all by default).
            deadline (None | str | Unset): RFC 3339: a delivery still waiting then fails with reason `deadline`.
            mode (DeliveryMode | None | Unset):
            on_busy (None | str | Unset): When a target agent is busy: `enqueue`, `reject`, `interrupt` or `rollback`.
            priority (None | Priority | Unset):
    """

    kind: ScheduleActionType0Kind
    session_id: str
    text: str
    agent_ids: list[str] | None | Unset = UNSET
    deadline: None | str | Unset = UNSET
    mode: DeliveryMode | None | Unset = UNSET
    on_busy: None | str | Unset = UNSET
    priority: None | Priority | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind: str = self.kind

        session_id = self.session_id

        text = self.text

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
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "sessionId": session_id,
                "text": text,
            }
        )
        if agent_ids is not UNSET:
            field_dict["agentIds"] = agent_ids
        if deadline is not UNSET:
            field_dict["deadline"] = deadline
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
        kind = check_schedule_action_type_0_kind(d.pop("kind"))

        session_id = d.pop("sessionId")

        text = d.pop("text")

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

        schedule_action_type_0 = cls(
            kind=kind,
            session_id=session_id,
            text=text,
            agent_ids=agent_ids,
            deadline=deadline,
            mode=mode,
            on_busy=on_busy,
            priority=priority,
        )

        schedule_action_type_0.additional_properties = d
        return schedule_action_type_0

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
