from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.compress_response_context_json import CompressResponseContextJson


T = TypeVar("T", bound="CompressResponse")


@_attrs_define
class CompressResponse:
    """
    Attributes:
        context_json (CompressResponseContextJson): What was done: the pipeline, each agent asked and the command it was
            given.
        event_id (str): The `session.compressed` event.
        tokens_before (int): The context window's tokens before (the cost aggregator's count; 0 when unknown).
        tokens_after (int | None | Unset): Known once the agents report usage again.
    """

    context_json: CompressResponseContextJson
    event_id: str
    tokens_before: int
    tokens_after: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        context_json = self.context_json.to_dict()

        event_id = self.event_id

        tokens_before = self.tokens_before

        tokens_after: int | None | Unset
        if isinstance(self.tokens_after, Unset):
            tokens_after = UNSET
        else:
            tokens_after = self.tokens_after

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "contextJson": context_json,
                "eventId": event_id,
                "tokensBefore": tokens_before,
            }
        )
        if tokens_after is not UNSET:
            field_dict["tokensAfter"] = tokens_after

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.compress_response_context_json import CompressResponseContextJson

        d = dict(src_dict)
        context_json = CompressResponseContextJson.from_dict(d.pop("contextJson"))

        event_id = d.pop("eventId")

        tokens_before = d.pop("tokensBefore")

        def _parse_tokens_after(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        tokens_after = _parse_tokens_after(d.pop("tokensAfter", UNSET))

        compress_response = cls(
            context_json=context_json,
            event_id=event_id,
            tokens_before=tokens_before,
            tokens_after=tokens_after,
        )

        compress_response.additional_properties = d
        return compress_response

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
