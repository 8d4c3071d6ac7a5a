from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.action_input_schema import ActionInputSchema
    from ..models.action_output_schema import ActionOutputSchema


T = TypeVar("T", bound="Action")


@_attrs_define
class Action:
    """An exposed action with the agent that serves it.

    Attributes:
        agent_id (str):
        available_to (list[str]):
        exposed_at (int):
        input_schema (ActionInputSchema):
        name (str):
        session_id (str):
        description (None | str | Unset):
        handle (None | str | Unset):
        output_schema (ActionOutputSchema | Unset):
    """

    agent_id: str
    available_to: list[str]
    exposed_at: int
    input_schema: ActionInputSchema
    name: str
    session_id: str
    description: None | str | Unset = UNSET
    handle: None | str | Unset = UNSET
    output_schema: ActionOutputSchema | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        agent_id = self.agent_id

        available_to = self.available_to

        exposed_at = self.exposed_at

        input_schema = self.input_schema.to_dict()

        name = self.name

        session_id = self.session_id

        description: None | str | Unset
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        handle: None | str | Unset
        if isinstance(self.handle, Unset):
            handle = UNSET
        else:
            handle = self.handle

        output_schema: dict[str, Any] | Unset = UNSET
        if not isinstance(self.output_schema, Unset):
            output_schema = self.output_schema.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "agentId": agent_id,
                "availableTo": available_to,
                "exposedAt": exposed_at,
                "inputSchema": input_schema,
                "name": name,
                "sessionId": session_id,
            }
        )
        if description is not UNSET:
            field_dict["description"] = description
        if handle is not UNSET:
            field_dict["handle"] = handle
        if output_schema is not UNSET:
            field_dict["outputSchema"] = output_schema

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.action_input_schema import ActionInputSchema
        from ..models.action_output_schema import ActionOutputSchema

        d = dict(src_dict)
        agent_id = d.pop("agentId")

        available_to = cast(list[str], d.pop("availableTo"))

        exposed_at = d.pop("exposedAt")

        input_schema = ActionInputSchema.from_dict(d.pop("inputSchema"))

        name = d.pop("name")

        session_id = d.pop("sessionId")

        def _parse_description(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        description = _parse_description(d.pop("description", UNSET))

        def _parse_handle(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        handle = _parse_handle(d.pop("handle", UNSET))

        _output_schema = d.pop("outputSchema", UNSET)
        output_schema: ActionOutputSchema | Unset
        if isinstance(_output_schema, Unset):
            output_schema = UNSET
        else:
            output_schema = ActionOutputSchema.from_dict(_output_schema)

        action = cls(
            agent_id=agent_id,
            available_to=available_to,
            exposed_at=exposed_at,
            input_schema=input_schema,
            name=name,
            session_id=session_id,
            description=description,
            handle=handle,
            output_schema=output_schema,
        )

        action.additional_properties = d
        return action

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
