from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.source import Source, check_source
from ..types import UNSET, Unset

T = TypeVar("T", bound="AskCompression")


@_attrs_define
class AskCompression:
    """`POST /sessions/{id}/request-compression`.

    Attributes:
        reason (str):
        extension_id (None | str | Unset):
        source (None | Source | Unset):
    """

    reason: str
    extension_id: None | str | Unset = UNSET
    source: None | Source | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        reason = self.reason

        extension_id: None | str | Unset
        if isinstance(self.extension_id, Unset):
            extension_id = UNSET
        else:
            extension_id = self.extension_id

        source: None | str | Unset
        if isinstance(self.source, Unset):
            source = UNSET
        elif isinstance(self.source, str):
            source = self.source
        else:
            source = self.source

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "reason": reason,
            }
        )
        if extension_id is not UNSET:
            field_dict["extensionId"] = extension_id
        if source is not UNSET:
            field_dict["source"] = source

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        reason = d.pop("reason")

        def _parse_extension_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        extension_id = _parse_extension_id(d.pop("extensionId", UNSET))

        def _parse_source(data: object) -> None | Source | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                source_type_1 = check_source(data)

                return source_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Source | Unset, data)

        source = _parse_source(d.pop("source", UNSET))

        ask_compression = cls(
            reason=reason,
            extension_id=extension_id,
            source=source,
        )

        return ask_compression
