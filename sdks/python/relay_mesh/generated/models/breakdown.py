from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="Breakdown")


@_attrs_define
class Breakdown:
    """Seed 003 §6.5 `CostBreakdown`, with the cache tokens beside it. `totalTokens` counts every
    token: input, output, cache read and write, and usage reported without a split.

        Attributes:
            cache_read_tokens (int):
            cache_write_tokens (int):
            estimated_cost_usd (float):
            events (int): Usage events folded in.
            input_tokens (int):
            output_tokens (int):
            total_tokens (int):
    """

    cache_read_tokens: int
    cache_write_tokens: int
    estimated_cost_usd: float
    events: int
    input_tokens: int
    output_tokens: int
    total_tokens: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cache_read_tokens = self.cache_read_tokens

        cache_write_tokens = self.cache_write_tokens

        estimated_cost_usd = self.estimated_cost_usd

        events = self.events

        input_tokens = self.input_tokens

        output_tokens = self.output_tokens

        total_tokens = self.total_tokens

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "cacheReadTokens": cache_read_tokens,
                "cacheWriteTokens": cache_write_tokens,
                "estimatedCostUsd": estimated_cost_usd,
                "events": events,
                "inputTokens": input_tokens,
                "outputTokens": output_tokens,
                "totalTokens": total_tokens,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        cache_read_tokens = d.pop("cacheReadTokens")

        cache_write_tokens = d.pop("cacheWriteTokens")

        estimated_cost_usd = d.pop("estimatedCostUsd")

        events = d.pop("events")

        input_tokens = d.pop("inputTokens")

        output_tokens = d.pop("outputTokens")

        total_tokens = d.pop("totalTokens")

        breakdown = cls(
            cache_read_tokens=cache_read_tokens,
            cache_write_tokens=cache_write_tokens,
            estimated_cost_usd=estimated_cost_usd,
            events=events,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            total_tokens=total_tokens,
        )

        breakdown.additional_properties = d
        return breakdown

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
