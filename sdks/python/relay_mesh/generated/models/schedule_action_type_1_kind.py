from typing import Literal

ScheduleActionType1Kind = Literal["message"]

SCHEDULE_ACTION_TYPE_1_KIND_VALUES: set[ScheduleActionType1Kind] = {
    "message",
}


def check_schedule_action_type_1_kind(value: str) -> ScheduleActionType1Kind:
    if value in SCHEDULE_ACTION_TYPE_1_KIND_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SCHEDULE_ACTION_TYPE_1_KIND_VALUES!r}"
    )
