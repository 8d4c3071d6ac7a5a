from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.turn import Turn


T = TypeVar("T", bound="CancelTurnResponse")


@_attrs_define
class CancelTurnResponse:
    """
    Attributes:
        idle (list[str]): Agents of the turn that were not busy (nothing to interrupt).
        interrupted (list[str]): Agents whose CLI was busy and was interrupted.
        turn (Turn):
        unreachable (list[str]): Agents whose harness did not answer (not running, or gone).
    """

    idle: list[str]
    interrupted: list[str]
    turn: Turn
    unreachable: list[str]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        idle = self.idle

        interrupted = self.interrupted

        turn = self.turn.to_dict()

        unreachable = self.unreachable

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "idle": idle,
                "interrupted": interrupted,
                "turn": turn,
                "unreachable": unreachable,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.turn import Turn

        d = dict(src_dict)
        idle = cast(list[str], d.pop("idle"))

        interrupted = cast(list[str], d.pop("interrupted"))

        turn = Turn.from_dict(d.pop("turn"))

        unreachable = cast(list[str], d.pop("unreachable"))

        cancel_turn_response = cls(
            idle=idle,
            interrupted=interrupted,
            turn=turn,
            unreachable=unreachable,
        )

        cancel_turn_response.additional_properties = d
        return cancel_turn_response

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
