from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.schedule_action_type_0 import ScheduleActionType0
    from ..models.schedule_action_type_1 import ScheduleActionType1
    from ..models.schedule_action_type_2 import ScheduleActionType2


T = TypeVar("T", bound="CreateScheduleRequest")


@_attrs_define
class CreateScheduleRequest:
    """`schedule.create`: exactly one of `cron` and `at`.

    Attributes:
        action (ScheduleActionType0 | ScheduleActionType1 | ScheduleActionType2): What a schedule does each time it
            fires, as the person (key) who created it.
        at (int | None | Unset): One run at this Unix time in ms (a delayed message).
        cron (None | str | Unset): A cron expression: 5 fields (minute granularity), 6 (seconds first), or `@hourly`,
            `@daily`, …, in `timeZone`.
        name (None | str | Unset): A label for people: not blank.
        schedule_id (None | str | Unset): Creating again with the same id answers with the stored schedule.
        time_zone (None | str | Unset): An IANA time zone for `cron` (default `UTC`).
    """

    action: ScheduleActionType0 | ScheduleActionType1 | ScheduleActionType2
    at: int | None | Unset = UNSET
    cron: None | str | Unset = UNSET
    name: None | str | Unset = UNSET
    schedule_id: None | str | Unset = UNSET
    time_zone: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.schedule_action_type_0 import ScheduleActionType0
        from ..models.schedule_action_type_1 import ScheduleActionType1

        action: dict[str, Any]
        if isinstance(self.action, ScheduleActionType0) or isinstance(
            self.action, ScheduleActionType1
        ):
            action = self.action.to_dict()
        else:
            action = self.action.to_dict()

        at: int | None | Unset
        if isinstance(self.at, Unset):
            at = UNSET
        else:
            at = self.at

        cron: None | str | Unset
        if isinstance(self.cron, Unset):
            cron = UNSET
        else:
            cron = self.cron

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        schedule_id: None | str | Unset
        if isinstance(self.schedule_id, Unset):
            schedule_id = UNSET
        else:
            schedule_id = self.schedule_id

        time_zone: None | str | Unset
        if isinstance(self.time_zone, Unset):
            time_zone = UNSET
        else:
            time_zone = self.time_zone

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "action": action,
            }
        )
        if at is not UNSET:
            field_dict["at"] = at
        if cron is not UNSET:
            field_dict["cron"] = cron
        if name is not UNSET:
            field_dict["name"] = name
        if schedule_id is not UNSET:
            field_dict["scheduleId"] = schedule_id
        if time_zone is not UNSET:
            field_dict["timeZone"] = time_zone

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.schedule_action_type_0 import ScheduleActionType0
        from ..models.schedule_action_type_1 import ScheduleActionType1
        from ..models.schedule_action_type_2 import ScheduleActionType2

        d = dict(src_dict)

        def _parse_action(
            data: object,
        ) -> ScheduleActionType0 | ScheduleActionType1 | ScheduleActionType2:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_schedule_action_type_0 = (
                    ScheduleActionType0.from_dict(data)
                )

                return componentsschemas_schedule_action_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_schedule_action_type_1 = (
                    ScheduleActionType1.from_dict(data)
                )

                return componentsschemas_schedule_action_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_schedule_action_type_2 = ScheduleActionType2.from_dict(
                data
            )

            return componentsschemas_schedule_action_type_2

        action = _parse_action(d.pop("action"))

        def _parse_at(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        at = _parse_at(d.pop("at", UNSET))

        def _parse_cron(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cron = _parse_cron(d.pop("cron", UNSET))

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        def _parse_schedule_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        schedule_id = _parse_schedule_id(d.pop("scheduleId", UNSET))

        def _parse_time_zone(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        time_zone = _parse_time_zone(d.pop("timeZone", UNSET))

        create_schedule_request = cls(
            action=action,
            at=at,
            cron=cron,
            name=name,
            schedule_id=schedule_id,
            time_zone=time_zone,
        )

        return create_schedule_request
