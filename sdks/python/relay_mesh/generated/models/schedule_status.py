from typing import Literal

ScheduleStatus = Literal["active", "done", "paused"]

SCHEDULE_STATUS_VALUES: set[ScheduleStatus] = {
    "active",
    "done",
    "paused",
}


def check_schedule_status(value: str) -> ScheduleStatus:
    if value in SCHEDULE_STATUS_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SCHEDULE_STATUS_VALUES!r}"
    )
