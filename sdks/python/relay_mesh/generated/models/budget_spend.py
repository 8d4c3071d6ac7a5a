from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="BudgetSpend")


@_attrs_define
class BudgetSpend:
    """
    Attributes:
        fraction (float): `spentUsd / limitUsd` (1 or more: crossed); 1 for a zero limit with any spend.
        key (str): The session or agent id.
        spent_usd (float):
        exceeded_at (int | None | Unset): When the spend crossed the limit (Unix ms); absent while under it.
    """

    fraction: float
    key: str
    spent_usd: float
    exceeded_at: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        fraction = self.fraction

        key = self.key

        spent_usd = self.spent_usd

        exceeded_at: int | None | Unset
        if isinstance(self.exceeded_at, Unset):
            exceeded_at = UNSET
        else:
            exceeded_at = self.exceeded_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "fraction": fraction,
                "key": key,
                "spentUsd": spent_usd,
            }
        )
        if exceeded_at is not UNSET:
            field_dict["exceededAt"] = exceeded_at

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        fraction = d.pop("fraction")

        key = d.pop("key")

        spent_usd = d.pop("spentUsd")

        def _parse_exceeded_at(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        exceeded_at = _parse_exceeded_at(d.pop("exceededAt", UNSET))

        budget_spend = cls(
            fraction=fraction,
            key=key,
            spent_usd=spent_usd,
            exceeded_at=exceeded_at,
        )

        budget_spend.additional_properties = d
        return budget_spend

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
