from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.placement_labels import PlacementLabels


T = TypeVar("T", bound="Placement")


@_attrs_define
class Placement:
    """Where an agent may run (`agent.spawn` `placement`): every label given must be on the host
    with that value, and `host`, when given, names the one host.

        Attributes:
            host (None | str | Unset):
            labels (PlacementLabels | Unset): e.g. {"gpu": "a100"}; `os` and `arch` are set by every host.
    """

    host: None | str | Unset = UNSET
    labels: PlacementLabels | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        host: None | str | Unset
        if isinstance(self.host, Unset):
            host = UNSET
        else:
            host = self.host

        labels: dict[str, Any] | Unset = UNSET
        if not isinstance(self.labels, Unset):
            labels = self.labels.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if host is not UNSET:
            field_dict["host"] = host
        if labels is not UNSET:
            field_dict["labels"] = labels

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.placement_labels import PlacementLabels

        d = dict(src_dict)

        def _parse_host(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        host = _parse_host(d.pop("host", UNSET))

        _labels = d.pop("labels", UNSET)
        labels: PlacementLabels | Unset
        if isinstance(_labels, Unset):
            labels = UNSET
        else:
            labels = PlacementLabels.from_dict(_labels)

        placement = cls(
            host=host,
            labels=labels,
        )

        return placement
