from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.budget_spend import BudgetSpend


T = TypeVar("T", bound="BudgetStatus")


@_attrs_define
class BudgetStatus:
    """One `[[costs.budgets]]` entry with the spend it watches.

    Attributes:
        limit_usd (float):
        name (str):
        pause (bool): Whether crossing it pauses the agents' deliveries.
        scope (str): `session` or `agent`.
        spending (list[BudgetSpend]): The sessions or agents with spend under it, the largest first (at most 20).
        id (None | str | Unset): The one session or agent it limits; absent when it limits each of them.
    """

    limit_usd: float
    name: str
    pause: bool
    scope: str
    spending: list[BudgetSpend]
    id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        limit_usd = self.limit_usd

        name = self.name

        pause = self.pause

        scope = self.scope

        spending = []
        for spending_item_data in self.spending:
            spending_item = spending_item_data.to_dict()
            spending.append(spending_item)

        id: None | str | Unset
        if isinstance(self.id, Unset):
            id = UNSET
        else:
            id = self.id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "limitUsd": limit_usd,
                "name": name,
                "pause": pause,
                "scope": scope,
                "spending": spending,
            }
        )
        if id is not UNSET:
            field_dict["id"] = id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.budget_spend import BudgetSpend

        d = dict(src_dict)
        limit_usd = d.pop("limitUsd")

        name = d.pop("name")

        pause = d.pop("pause")

        scope = d.pop("scope")

        spending = []
        _spending = d.pop("spending")
        for spending_item_data in _spending:
            spending_item = BudgetSpend.from_dict(spending_item_data)

            spending.append(spending_item)

        def _parse_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        id = _parse_id(d.pop("id", UNSET))

        budget_status = cls(
            limit_usd=limit_usd,
            name=name,
            pause=pause,
            scope=scope,
            spending=spending,
            id=id,
        )

        budget_status.additional_properties = d
        return budget_status

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
