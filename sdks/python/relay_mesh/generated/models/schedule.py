from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.schedule_status import ScheduleStatus, check_schedule_status
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.schedule_action_type_0 import ScheduleActionType0
    from ..models.schedule_action_type_1 import ScheduleActionType1
    from ..models.schedule_action_type_2 import ScheduleActionType2
    from ..models.schedule_run import ScheduleRun


T = TypeVar("T", bound="Schedule")


@_attrs_define
class Schedule:
    """
    Attributes:
        action (ScheduleActionType0 | ScheduleActionType1 | ScheduleActionType2): What a schedule does each time it
            fires, as the person (key) who created it.
        created_at (int):
        created_by (str):
        runs (int):
        schedule_id (str):
        status (ScheduleStatus):
        time_zone (str):
        updated_at (int):
        at (int | None | Unset):
        cron (None | str | Unset):
        last_run (None | ScheduleRun | Unset):
        name (None | str | Unset):
        next_run_at (int | None | Unset): When it fires next (active only).
    """

    action: ScheduleActionType0 | ScheduleActionType1 | ScheduleActionType2
    created_at: int
    created_by: str
    runs: int
    schedule_id: str
    status: ScheduleStatus
    time_zone: str
    updated_at: int
    at: int | None | Unset = UNSET
    cron: None | str | Unset = UNSET
    last_run: None | ScheduleRun | Unset = UNSET
    name: None | str | Unset = UNSET
    next_run_at: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.schedule_action_type_0 import ScheduleActionType0
        from ..models.schedule_action_type_1 import ScheduleActionType1
        from ..models.schedule_run import ScheduleRun

        action: dict[str, Any]
        if isinstance(self.action, ScheduleActionType0) or isinstance(
            self.action, ScheduleActionType1
        ):
            action = self.action.to_dict()
        else:
            action = self.action.to_dict()

        created_at = self.created_at

        created_by = self.created_by

        runs = self.runs

        schedule_id = self.schedule_id

        status: str = self.status

        time_zone = self.time_zone

        updated_at = self.updated_at

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

        last_run: dict[str, Any] | None | Unset
        if isinstance(self.last_run, Unset):
            last_run = UNSET
        elif isinstance(self.last_run, ScheduleRun):
            last_run = self.last_run.to_dict()
        else:
            last_run = self.last_run

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        next_run_at: int | None | Unset
        if isinstance(self.next_run_at, Unset):
            next_run_at = UNSET
        else:
            next_run_at = self.next_run_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "action": action,
                "createdAt": created_at,
                "createdBy": created_by,
                "runs": runs,
                "scheduleId": schedule_id,
                "status": status,
                "timeZone": time_zone,
                "updatedAt": updated_at,
            }
        )
        if at is not UNSET:
            field_dict["at"] = at
        if cron is not UNSET:
            field_dict["cron"] = cron
        if last_run is not UNSET:
            field_dict["lastRun"] = last_run
        if name is not UNSET:
            field_dict["name"] = name
        if next_run_at is not UNSET:
            field_dict["nextRunAt"] = next_run_at

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.schedule_action_type_0 import ScheduleActionType0
        from ..models.schedule_action_type_1 import ScheduleActionType1
        from ..models.schedule_action_type_2 import ScheduleActionType2
        from ..models.schedule_run import ScheduleRun

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

        created_at = d.pop("createdAt")

        created_by = d.pop("createdBy")

        runs = d.pop("runs")

        schedule_id = d.pop("scheduleId")

        status = check_schedule_status(d.pop("status"))

        time_zone = d.pop("timeZone")

        updated_at = d.pop("updatedAt")

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

        def _parse_last_run(data: object) -> None | ScheduleRun | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                last_run_type_1 = ScheduleRun.from_dict(data)

                return last_run_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ScheduleRun | Unset, data)

        last_run = _parse_last_run(d.pop("lastRun", UNSET))

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        def _parse_next_run_at(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        next_run_at = _parse_next_run_at(d.pop("nextRunAt", UNSET))

        schedule = cls(
            action=action,
            created_at=created_at,
            created_by=created_by,
            runs=runs,
            schedule_id=schedule_id,
            status=status,
            time_zone=time_zone,
            updated_at=updated_at,
            at=at,
            cron=cron,
            last_run=last_run,
            name=name,
            next_run_at=next_run_at,
        )

        schedule.additional_properties = d
        return schedule

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
