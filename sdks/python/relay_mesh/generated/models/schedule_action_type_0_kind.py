from typing import Literal

ScheduleActionType0Kind = Literal["sendMessage"]

SCHEDULE_ACTION_TYPE_0_KIND_VALUES: set[ScheduleActionType0Kind] = {
    "sendMessage",
}


def check_schedule_action_type_0_kind(value: str) -> ScheduleActionType0Kind:
    if value in SCHEDULE_ACTION_TYPE_0_KIND_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SCHEDULE_ACTION_TYPE_0_KIND_VALUES!r}"
    )
