from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="ResolveSystemPromptResponse")


@_attrs_define
class ResolveSystemPromptResponse:
    """
    Attributes:
        system_prompt (str): The profile's prompt, then the persona's, a blank line apart; empty when neither.
        persona_name (None | str | Unset):
        profile_name (None | str | Unset):
    """

    system_prompt: str
    persona_name: None | str | Unset = UNSET
    profile_name: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        system_prompt = self.system_prompt

        persona_name: None | str | Unset
        if isinstance(self.persona_name, Unset):
            persona_name = UNSET
        else:
            persona_name = self.persona_name

        profile_name: None | str | Unset
        if isinstance(self.profile_name, Unset):
            profile_name = UNSET
        else:
            profile_name = self.profile_name

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "systemPrompt": system_prompt,
            }
        )
        if persona_name is not UNSET:
            field_dict["personaName"] = persona_name
        if profile_name is not UNSET:
            field_dict["profileName"] = profile_name

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        system_prompt = d.pop("systemPrompt")

        def _parse_persona_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        persona_name = _parse_persona_name(d.pop("personaName", UNSET))

        def _parse_profile_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        profile_name = _parse_profile_name(d.pop("profileName", UNSET))

        resolve_system_prompt_response = cls(
            system_prompt=system_prompt,
            persona_name=persona_name,
            profile_name=profile_name,
        )

        resolve_system_prompt_response.additional_properties = d
        return resolve_system_prompt_response

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
