from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="Answer")


@_attrs_define
class Answer:
    """
    Attributes:
        answer (str):
    """

    answer: str

    def to_dict(self) -> dict[str, Any]:
        answer = self.answer

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "answer": answer,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        answer = d.pop("answer")

        answer = cls(
            answer=answer,
        )

        return answer
