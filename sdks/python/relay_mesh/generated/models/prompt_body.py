from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="PromptBody")


@_attrs_define
class PromptBody:
    """`PUT /personas/{id}`, `PUT /profiles/{id}`.

    Attributes:
        name (str):
        system_prompt (str):
    """

    name: str
    system_prompt: str

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        system_prompt = self.system_prompt

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "systemPrompt": system_prompt,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        system_prompt = d.pop("systemPrompt")

        prompt_body = cls(
            name=name,
            system_prompt=system_prompt,
        )

        return prompt_body
