from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="LifecycleCapabilities")


@_attrs_define
class LifecycleCapabilities:
    """
    Attributes:
        release (bool): Required: true only when the session really implements `release()`.
        fork (bool | None | Unset):
        pause (bool | None | Unset):
        resume (bool | None | Unset):
        snapshot (bool | None | Unset):
    """

    release: bool
    fork: bool | None | Unset = UNSET
    pause: bool | None | Unset = UNSET
    resume: bool | None | Unset = UNSET
    snapshot: bool | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        release = self.release

        fork: bool | None | Unset
        if isinstance(self.fork, Unset):
            fork = UNSET
        else:
            fork = self.fork

        pause: bool | None | Unset
        if isinstance(self.pause, Unset):
            pause = UNSET
        else:
            pause = self.pause

        resume: bool | None | Unset
        if isinstance(self.resume, Unset):
            resume = UNSET
        else:
            resume = self.resume

        snapshot: bool | None | Unset
        if isinstance(self.snapshot, Unset):
            snapshot = UNSET
        else:
            snapshot = self.snapshot

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "release": release,
            }
        )
        if fork is not UNSET:
            field_dict["fork"] = fork
        if pause is not UNSET:
            field_dict["pause"] = pause
        if resume is not UNSET:
            field_dict["resume"] = resume
        if snapshot is not UNSET:
            field_dict["snapshot"] = snapshot

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        release = d.pop("release")

        def _parse_fork(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        fork = _parse_fork(d.pop("fork", UNSET))

        def _parse_pause(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        pause = _parse_pause(d.pop("pause", UNSET))

        def _parse_resume(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        resume = _parse_resume(d.pop("resume", UNSET))

        def _parse_snapshot(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        snapshot = _parse_snapshot(d.pop("snapshot", UNSET))

        lifecycle_capabilities = cls(
            release=release,
            fork=fork,
            pause=pause,
            resume=resume,
            snapshot=snapshot,
        )

        lifecycle_capabilities.additional_properties = d
        return lifecycle_capabilities

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
