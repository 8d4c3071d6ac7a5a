from typing import Literal

ScheduleActionType2Kind = Literal["spawn"]

SCHEDULE_ACTION_TYPE_2_KIND_VALUES: set[ScheduleActionType2Kind] = {
    "spawn",
}


def check_schedule_action_type_2_kind(value: str) -> ScheduleActionType2Kind:
    if value in SCHEDULE_ACTION_TYPE_2_KIND_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SCHEDULE_ACTION_TYPE_2_KIND_VALUES!r}"
    )
