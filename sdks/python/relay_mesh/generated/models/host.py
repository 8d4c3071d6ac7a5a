from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.host_labels import HostLabels


T = TypeVar("T", bound="Host")


@_attrs_define
class Host:
    """A host as the registry knows it.

    Attributes:
        agents (list[str]): Its live agents, as last reported.
        capacity (int):
        clis (list[str]):
        first_seen_at (int):
        host_id (str):
        labels (HostLabels):
        last_seen_at (int):
        load (int):
        status (str): `online`, `offline` (no heartbeat for `hosts.offline_after_ms`: its agents' deliveries
            are held) or `lost` (offline for `hosts.lost_after_ms`: `hosts.on_lost` applied).
        version (str):
        offline_since (int | None | Unset):
    """

    agents: list[str]
    capacity: int
    clis: list[str]
    first_seen_at: int
    host_id: str
    labels: HostLabels
    last_seen_at: int
    load: int
    status: str
    version: str
    offline_since: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        agents = self.agents

        capacity = self.capacity

        clis = self.clis

        first_seen_at = self.first_seen_at

        host_id = self.host_id

        labels = self.labels.to_dict()

        last_seen_at = self.last_seen_at

        load = self.load

        status = self.status

        version = self.version

        offline_since: int | None | Unset
        if isinstance(self.offline_since, Unset):
            offline_since = UNSET
        else:
            offline_since = self.offline_since

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "agents": agents,
                "capacity": capacity,
                "clis": clis,
                "firstSeenAt": first_seen_at,
                "hostId": host_id,
                "labels": labels,
                "lastSeenAt": last_seen_at,
                "load": load,
                "status": status,
                "version": version,
            }
        )
        if offline_since is not UNSET:
            field_dict["offlineSince"] = offline_since

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.host_labels import HostLabels

        d = dict(src_dict)
        agents = cast(list[str], d.pop("agents"))

        capacity = d.pop("capacity")

        clis = cast(list[str], d.pop("clis"))

        first_seen_at = d.pop("firstSeenAt")

        host_id = d.pop("hostId")

        labels = HostLabels.from_dict(d.pop("labels"))

        last_seen_at = d.pop("lastSeenAt")

        load = d.pop("load")

        status = d.pop("status")

        version = d.pop("version")

        def _parse_offline_since(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        offline_since = _parse_offline_since(d.pop("offlineSince", UNSET))

        host = cls(
            agents=agents,
            capacity=capacity,
            clis=clis,
            first_seen_at=first_seen_at,
            host_id=host_id,
            labels=labels,
            last_seen_at=last_seen_at,
            load=load,
            status=status,
            version=version,
            offline_since=offline_since,
        )

        host.additional_properties = d
        return host

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
