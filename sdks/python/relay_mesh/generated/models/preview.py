from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="Preview")


@_attrs_define
class Preview:
    """
    Attributes:
        message_count (int):
        first_user_message (None | str | Unset):
    """

    message_count: int
    first_user_message: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        message_count = self.message_count

        first_user_message: None | str | Unset
        if isinstance(self.first_user_message, Unset):
            first_user_message = UNSET
        else:
            first_user_message = self.first_user_message

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "messageCount": message_count,
            }
        )
        if first_user_message is not UNSET:
            field_dict["firstUserMessage"] = first_user_message

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        message_count = d.pop("messageCount")

        def _parse_first_user_message(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        first_user_message = _parse_first_user_message(d.pop("firstUserMessage", UNSET))

        preview = cls(
            message_count=message_count,
            first_user_message=first_user_message,
        )

        preview.additional_properties = d
        return preview

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
