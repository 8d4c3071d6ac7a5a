from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.placement import Placement


T = TypeVar("T", bound="CreateSession")


@_attrs_define
class CreateSession:
    """Seed 003 `POST /api/v1/sessions`; `sessionId`, `title` are relay extensions.

    Attributes:
        agent (None | str | Unset): The spawned agent's handle (`@name` or `name`); a free default from the cli's name
            when
            absent. `409` when a live agent of the workspace has it.
        cli (None | str | Unset): An agent name the spawners are configured with.
        cwd (None | str | Unset):
        placement (None | Placement | Unset):
        session_id (None | str | Unset):
        task (None | str | Unset):
        title (None | str | Unset):
    """

    agent: None | str | Unset = UNSET
    cli: None | str | Unset = UNSET
    cwd: None | str | Unset = UNSET
    placement: None | Placement | Unset = UNSET
    session_id: None | str | Unset = UNSET
    task: None | str | Unset = UNSET
    title: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.placement import Placement

        agent: None | str | Unset
        if isinstance(self.agent, Unset):
            agent = UNSET
        else:
            agent = self.agent

        cli: None | str | Unset
        if isinstance(self.cli, Unset):
            cli = UNSET
        else:
            cli = self.cli

        cwd: None | str | Unset
        if isinstance(self.cwd, Unset):
            cwd = UNSET
        else:
            cwd = self.cwd

        placement: dict[str, Any] | None | Unset
        if isinstance(self.placement, Unset):
            placement = UNSET
        elif isinstance(self.placement, Placement):
            placement = self.placement.to_dict()
        else:
            placement = self.placement

        session_id: None | str | Unset
        if isinstance(self.session_id, Unset):
            session_id = UNSET
        else:
            session_id = self.session_id

        task: None | str | Unset
        if isinstance(self.task, Unset):
            task = UNSET
        else:
            task = self.task

        title: None | str | Unset
        if isinstance(self.title, Unset):
            title = UNSET
        else:
            title = self.title

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if agent is not UNSET:
            field_dict["agent"] = agent
        if cli is not UNSET:
            field_dict["cli"] = cli
        if cwd is not UNSET:
            field_dict["cwd"] = cwd
        if placement is not UNSET:
            field_dict["placement"] = placement
        if session_id is not UNSET:
            field_dict["sessionId"] = session_id
        if task is not UNSET:
            field_dict["task"] = task
        if title is not UNSET:
            field_dict["title"] = title

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.placement import Placement

        d = dict(src_dict)

        def _parse_agent(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        agent = _parse_agent(d.pop("agent", UNSET))

        def _parse_cli(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cli = _parse_cli(d.pop("cli", UNSET))

        def _parse_cwd(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cwd = _parse_cwd(d.pop("cwd", UNSET))

        def _parse_placement(data: object) -> None | Placement | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                placement_type_1 = Placement.from_dict(data)

                return placement_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Placement | Unset, data)

        placement = _parse_placement(d.pop("placement", UNSET))

        def _parse_session_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        session_id = _parse_session_id(d.pop("sessionId", UNSET))

        def _parse_task(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        task = _parse_task(d.pop("task", UNSET))

        def _parse_title(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        title = _parse_title(d.pop("title", UNSET))

        create_session = cls(
            agent=agent,
            cli=cli,
            cwd=cwd,
            placement=placement,
            session_id=session_id,
            task=task,
            title=title,
        )

        return create_session
