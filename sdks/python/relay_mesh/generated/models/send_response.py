from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.recipient import Recipient


T = TypeVar("T", bound="SendResponse")


@_attrs_define
class SendResponse:
    """
    Attributes:
        conversation (str):
        duplicate (bool): True when an earlier send with the same idempotency key answered this.
        message_id (str):
        recipients (list[Recipient]): One entry per recipient; a `failed` one says why.
        thread_id (None | str | Unset):
    """

    conversation: str
    duplicate: bool
    message_id: str
    recipients: list[Recipient]
    thread_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        conversation = self.conversation

        duplicate = self.duplicate

        message_id = self.message_id

        recipients = []
        for recipients_item_data in self.recipients:
            recipients_item = recipients_item_data.to_dict()
            recipients.append(recipients_item)

        thread_id: None | str | Unset
        if isinstance(self.thread_id, Unset):
            thread_id = UNSET
        else:
            thread_id = self.thread_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "conversation": conversation,
                "duplicate": duplicate,
                "messageId": message_id,
                "recipients": recipients,
            }
        )
        if thread_id is not UNSET:
            field_dict["threadId"] = thread_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.recipient import Recipient

        d = dict(src_dict)
        conversation = d.pop("conversation")

        duplicate = d.pop("duplicate")

        message_id = d.pop("messageId")

        recipients = []
        _recipients = d.pop("recipients")
        for recipients_item_data in _recipients:
            recipients_item = Recipient.from_dict(recipients_item_data)

            recipients.append(recipients_item)

        def _parse_thread_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        thread_id = _parse_thread_id(d.pop("threadId", UNSET))

        send_response = cls(
            conversation=conversation,
            duplicate=duplicate,
            message_id=message_id,
            recipients=recipients,
            thread_id=thread_id,
        )

        send_response.additional_properties = d
        return send_response

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
