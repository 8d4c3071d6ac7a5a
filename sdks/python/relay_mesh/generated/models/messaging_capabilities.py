from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.attachment_kind import AttachmentKind, check_attachment_kind
from ..types import UNSET, Unset

T = TypeVar("T", bound="MessagingCapabilities")


@_attrs_define
class MessagingCapabilities:
    """
    Attributes:
        receive (bool):
        attachments (list[AttachmentKind] | None | Unset):
        send (bool | None | Unset):
    """

    receive: bool
    attachments: list[AttachmentKind] | None | Unset = UNSET
    send: bool | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        receive = self.receive

        attachments: list[str] | None | Unset
        if isinstance(self.attachments, Unset):
            attachments = UNSET
        elif isinstance(self.attachments, list):
            attachments = []
            for attachments_type_0_item_data in self.attachments:
                attachments_type_0_item: str = attachments_type_0_item_data
                attachments.append(attachments_type_0_item)

        else:
            attachments = self.attachments

        send: bool | None | Unset
        if isinstance(self.send, Unset):
            send = UNSET
        else:
            send = self.send

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "receive": receive,
            }
        )
        if attachments is not UNSET:
            field_dict["attachments"] = attachments
        if send is not UNSET:
            field_dict["send"] = send

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        receive = d.pop("receive")

        def _parse_attachments(data: object) -> list[AttachmentKind] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                attachments_type_0 = []
                _attachments_type_0 = data
                for attachments_type_0_item_data in _attachments_type_0:
                    attachments_type_0_item = check_attachment_kind(
                        attachments_type_0_item_data
                    )

                    attachments_type_0.append(attachments_type_0_item)

                return attachments_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[AttachmentKind] | None | Unset, data)

        attachments = _parse_attachments(d.pop("attachments", UNSET))

        def _parse_send(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        send = _parse_send(d.pop("send", UNSET))

        messaging_capabilities = cls(
            receive=receive,
            attachments=attachments,
            send=send,
        )

        messaging_capabilities.additional_properties = d
        return messaging_capabilities

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
