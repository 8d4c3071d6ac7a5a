from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="StatusCounts")


@_attrs_define
class StatusCounts:
    """
    Attributes:
        active (int):
        all_ (int):
        archived (int):
        closed (int):
        discovered (int):
    """

    active: int
    all_: int
    archived: int
    closed: int
    discovered: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        active = self.active

        all_ = self.all_

        archived = self.archived

        closed = self.closed

        discovered = self.discovered

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "active": active,
                "all": all_,
                "archived": archived,
                "closed": closed,
                "discovered": discovered,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        active = d.pop("active")

        all_ = d.pop("all")

        archived = d.pop("archived")

        closed = d.pop("closed")

        discovered = d.pop("discovered")

        status_counts = cls(
            active=active,
            all_=all_,
            archived=archived,
            closed=closed,
            discovered=discovered,
        )

        status_counts.additional_properties = d
        return status_counts

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
