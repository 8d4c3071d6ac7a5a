from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.priority import Priority, check_priority
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.recipient import Recipient
    from ..models.sender import Sender


T = TypeVar("T", bound="RelayMessage")


@_attrs_define
class RelayMessage:
    """A stored relay message.

    Attributes:
        conversation (str): `#channel` or the participants of a DM (`@alice,@bob`).
        created_at (int):
        from_ (Sender): Who sent a message, as the mesh authenticated it.
        hop (int): Replies between agents since a person last spoke in the thread (the loop guard's count).
        kind (str): `dm`, `group` or `channel`.
        message_id (str):
        recipients (list[Recipient]):
        seq (int): The log-wide order of messages: pages of history and search go by it.
        text (str):
        attachments (list[Any] | None | Unset):
        channel (None | str | Unset):
        deadline (None | str | Unset):
        priority (None | Priority | Unset):
        thread_id (None | str | Unset): The root of the thread this message replies in.
    """

    conversation: str
    created_at: int
    from_: Sender
    hop: int
    kind: str
    message_id: str
    recipients: list[Recipient]
    seq: int
    text: str
    attachments: list[Any] | None | Unset = UNSET
    channel: None | str | Unset = UNSET
    deadline: None | str | Unset = UNSET
    priority: None | Priority | Unset = UNSET
    thread_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        conversation = self.conversation

        created_at = self.created_at

        from_ = self.from_.to_dict()

        hop = self.hop

        kind = self.kind

        message_id = self.message_id

        recipients = []
        for recipients_item_data in self.recipients:
            recipients_item = recipients_item_data.to_dict()
            recipients.append(recipients_item)

        seq = self.seq

        text = self.text

        attachments: list[Any] | None | Unset
        if isinstance(self.attachments, Unset):
            attachments = UNSET
        elif isinstance(self.attachments, list):
            attachments = self.attachments

        else:
            attachments = self.attachments

        channel: None | str | Unset
        if isinstance(self.channel, Unset):
            channel = UNSET
        else:
            channel = self.channel

        deadline: None | str | Unset
        if isinstance(self.deadline, Unset):
            deadline = UNSET
        else:
            deadline = self.deadline

        priority: None | str | Unset
        if isinstance(self.priority, Unset):
            priority = UNSET
        elif isinstance(self.priority, str):
            priority = self.priority
        else:
            priority = self.priority

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
                "createdAt": created_at,
                "from": from_,
                "hop": hop,
                "kind": kind,
                "messageId": message_id,
                "recipients": recipients,
                "seq": seq,
                "text": text,
            }
        )
        if attachments is not UNSET:
            field_dict["attachments"] = attachments
        if channel is not UNSET:
            field_dict["channel"] = channel
        if deadline is not UNSET:
            field_dict["deadline"] = deadline
        if priority is not UNSET:
            field_dict["priority"] = priority
        if thread_id is not UNSET:
            field_dict["threadId"] = thread_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.recipient import Recipient
        from ..models.sender import Sender

        d = dict(src_dict)
        conversation = d.pop("conversation")

        created_at = d.pop("createdAt")

        from_ = Sender.from_dict(d.pop("from"))

        hop = d.pop("hop")

        kind = d.pop("kind")

        message_id = d.pop("messageId")

        recipients = []
        _recipients = d.pop("recipients")
        for recipients_item_data in _recipients:
            recipients_item = Recipient.from_dict(recipients_item_data)

            recipients.append(recipients_item)

        seq = d.pop("seq")

        text = d.pop("text")

        def _parse_attachments(data: object) -> list[Any] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                attachments_type_0 = cast(list[Any], data)

                return attachments_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[Any] | None | Unset, data)

        attachments = _parse_attachments(d.pop("attachments", UNSET))

        def _parse_channel(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        channel = _parse_channel(d.pop("channel", UNSET))

        def _parse_deadline(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        deadline = _parse_deadline(d.pop("deadline", UNSET))

        def _parse_priority(data: object) -> None | Priority | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                priority_type_1 = check_priority(data)

                return priority_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Priority | Unset, data)

        priority = _parse_priority(d.pop("priority", UNSET))

        def _parse_thread_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        thread_id = _parse_thread_id(d.pop("threadId", UNSET))

        relay_message = cls(
            conversation=conversation,
            created_at=created_at,
            from_=from_,
            hop=hop,
            kind=kind,
            message_id=message_id,
            recipients=recipients,
            seq=seq,
            text=text,
            attachments=attachments,
            channel=channel,
            deadline=deadline,
            priority=priority,
            thread_id=thread_id,
        )

        relay_message.additional_properties = d
        return relay_message

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
