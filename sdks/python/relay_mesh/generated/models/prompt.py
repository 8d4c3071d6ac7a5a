from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.prompt_kind import PromptKind, check_prompt_kind

T = TypeVar("T", bound="Prompt")


@_attrs_define
class Prompt:
    """
    Attributes:
        created_at (int):
        id (str):
        kind (PromptKind):
        name (str):
        system_prompt (str):
        updated_at (int):
    """

    created_at: int
    id: str
    kind: PromptKind
    name: str
    system_prompt: str
    updated_at: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at

        id = self.id

        kind: str = self.kind

        name = self.name

        system_prompt = self.system_prompt

        updated_at = self.updated_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "createdAt": created_at,
                "id": id,
                "kind": kind,
                "name": name,
                "systemPrompt": system_prompt,
                "updatedAt": updated_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        created_at = d.pop("createdAt")

        id = d.pop("id")

        kind = check_prompt_kind(d.pop("kind"))

        name = d.pop("name")

        system_prompt = d.pop("systemPrompt")

        updated_at = d.pop("updatedAt")

        prompt = cls(
            created_at=created_at,
            id=id,
            kind=kind,
            name=name,
            system_prompt=system_prompt,
            updated_at=updated_at,
        )

        prompt.additional_properties = d
        return prompt

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
