from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="Input")


@_attrs_define
class Input:
    """
    Attributes:
        data (str): Raw text written to the agent's terminal (include `\\r` to press Enter).
    """

    data: str

    def to_dict(self) -> dict[str, Any]:
        data = self.data

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "data": data,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        data = d.pop("data")

        input_ = cls(
            data=data,
        )

        return input_
