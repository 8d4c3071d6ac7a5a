from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="Event")


@_attrs_define
class Event:
    """An event in the log: the envelope (seed 003's `_seq/_ts/_sessionId/_agentName`) and payload.

    Attributes:
        event_id (str):
        payload (Any):
        seq (int): Global, dense, monotonic; commit order equals seq order.
        ts (int):
        type_ (str):
        agent_id (None | str | Unset):
        agent_name (None | str | Unset):
        session_id (None | str | Unset):
        session_seq (int | None | Unset): 1, 2, 3, … within the session.
        workspace (None | str | Unset): Relay extension: the workspace it belongs to.
    """

    event_id: str
    payload: Any
    seq: int
    ts: int
    type_: str
    agent_id: None | str | Unset = UNSET
    agent_name: None | str | Unset = UNSET
    session_id: None | str | Unset = UNSET
    session_seq: int | None | Unset = UNSET
    workspace: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        event_id = self.event_id

        payload = self.payload

        seq = self.seq

        ts = self.ts

        type_ = self.type_

        agent_id: None | str | Unset
        if isinstance(self.agent_id, Unset):
            agent_id = UNSET
        else:
            agent_id = self.agent_id

        agent_name: None | str | Unset
        if isinstance(self.agent_name, Unset):
            agent_name = UNSET
        else:
            agent_name = self.agent_name

        session_id: None | str | Unset
        if isinstance(self.session_id, Unset):
            session_id = UNSET
        else:
            session_id = self.session_id

        session_seq: int | None | Unset
        if isinstance(self.session_seq, Unset):
            session_seq = UNSET
        else:
            session_seq = self.session_seq

        workspace: None | str | Unset
        if isinstance(self.workspace, Unset):
            workspace = UNSET
        else:
            workspace = self.workspace

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "eventId": event_id,
                "payload": payload,
                "seq": seq,
                "ts": ts,
                "type": type_,
            }
        )
        if agent_id is not UNSET:
            field_dict["agentId"] = agent_id
        if agent_name is not UNSET:
            field_dict["agentName"] = agent_name
        if session_id is not UNSET:
            field_dict["sessionId"] = session_id
        if session_seq is not UNSET:
            field_dict["sessionSeq"] = session_seq
        if workspace is not UNSET:
            field_dict["workspace"] = workspace

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        event_id = d.pop("eventId")

        payload = d.pop("payload")

        seq = d.pop("seq")

        ts = d.pop("ts")

        type_ = d.pop("type")

        def _parse_agent_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        agent_id = _parse_agent_id(d.pop("agentId", UNSET))

        def _parse_agent_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        agent_name = _parse_agent_name(d.pop("agentName", UNSET))

        def _parse_session_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        session_id = _parse_session_id(d.pop("sessionId", UNSET))

        def _parse_session_seq(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        session_seq = _parse_session_seq(d.pop("sessionSeq", UNSET))

        def _parse_workspace(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        workspace = _parse_workspace(d.pop("workspace", UNSET))

        event = cls(
            event_id=event_id,
            payload=payload,
            seq=seq,
            ts=ts,
            type_=type_,
            agent_id=agent_id,
            agent_name=agent_name,
            session_id=session_id,
            session_seq=session_seq,
            workspace=workspace,
        )

        event.additional_properties = d
        return event

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
