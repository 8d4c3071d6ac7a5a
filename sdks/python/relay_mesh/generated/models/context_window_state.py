from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.context_level import ContextLevel, check_context_level

T = TypeVar("T", bound="ContextWindowState")


@_attrs_define
class ContextWindowState:
    """Seed 002 `getContextWindowState.response.state`: the fullest agent of the session.

    Attributes:
        current_tokens (int):
        last_updated_at (int):
        level (ContextLevel):
        max_tokens (int):
        percentage (float):
    """

    current_tokens: int
    last_updated_at: int
    level: ContextLevel
    max_tokens: int
    percentage: float
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        current_tokens = self.current_tokens

        last_updated_at = self.last_updated_at

        level: str = self.level

        max_tokens = self.max_tokens

        percentage = self.percentage

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "currentTokens": current_tokens,
                "lastUpdatedAt": last_updated_at,
                "level": level,
                "maxTokens": max_tokens,
                "percentage": percentage,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        current_tokens = d.pop("currentTokens")

        last_updated_at = d.pop("lastUpdatedAt")

        level = check_context_level(d.pop("level"))

        max_tokens = d.pop("maxTokens")

        percentage = d.pop("percentage")

        context_window_state = cls(
            current_tokens=current_tokens,
            last_updated_at=last_updated_at,
            level=level,
            max_tokens=max_tokens,
            percentage=percentage,
        )

        context_window_state.additional_properties = d
        return context_window_state

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
