from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.relay_message import RelayMessage


T = TypeVar("T", bound="ThreadResponse")


@_attrs_define
class ThreadResponse:
    """`message.thread`: the root and its replies, oldest first.

    Attributes:
        replies (list[RelayMessage]):
        root (RelayMessage): A stored relay message.
    """

    replies: list[RelayMessage]
    root: RelayMessage
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        replies = []
        for replies_item_data in self.replies:
            replies_item = replies_item_data.to_dict()
            replies.append(replies_item)

        root = self.root.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "replies": replies,
                "root": root,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.relay_message import RelayMessage

        d = dict(src_dict)
        replies = []
        _replies = d.pop("replies")
        for replies_item_data in _replies:
            replies_item = RelayMessage.from_dict(replies_item_data)

            replies.append(replies_item)

        root = RelayMessage.from_dict(d.pop("root"))

        thread_response = cls(
            replies=replies,
            root=root,
        )

        thread_response.additional_properties = d
        return thread_response

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
