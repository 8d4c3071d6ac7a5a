from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.schedule_action_type_2_kind import (
    ScheduleActionType2Kind,
    check_schedule_action_type_2_kind,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="ScheduleActionType2")


@_attrs_define
class ScheduleActionType2:
    """A new session with an agent (`cli`) given `task`.

    Attributes:
        cli (str): An agent name the spawners know.
        kind (ScheduleActionType2Kind):
        task (str):
        agent (None | str | Unset): The agent's handle.
        cwd (None | str | Unset):
        title (None | str | Unset):
    """

    cli: str
    kind: ScheduleActionType2Kind
    task: str
    agent: None | str | Unset = UNSET
    cwd: None | str | Unset = UNSET
    title: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cli = self.cli

        kind: str = self.kind

        task = self.task

        agent: None | str | Unset
        if isinstance(self.agent, Unset):
            agent = UNSET
        else:
            agent = self.agent

        cwd: None | str | Unset
        if isinstance(self.cwd, Unset):
            cwd = UNSET
        else:
            cwd = self.cwd

        title: None | str | Unset
        if isinstance(self.title, Unset):
            title = UNSET
        else:
            title = self.title

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "cli": cli,
                "kind": kind,
                "task": task,
            }
        )
        if agent is not UNSET:
            field_dict["agent"] = agent
        if cwd is not UNSET:
            field_dict["cwd"] = cwd
        if title is not UNSET:
            field_dict["title"] = title

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        cli = d.pop("cli")

        kind = check_schedule_action_type_2_kind(d.pop("kind"))

        task = d.pop("task")

        def _parse_agent(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        agent = _parse_agent(d.pop("agent", UNSET))

        def _parse_cwd(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cwd = _parse_cwd(d.pop("cwd", UNSET))

        def _parse_title(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        title = _parse_title(d.pop("title", UNSET))

        schedule_action_type_2 = cls(
            cli=cli,
            kind=kind,
            task=task,
            agent=agent,
            cwd=cwd,
            title=title,
        )

        schedule_action_type_2.additional_properties = d
        return schedule_action_type_2

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
