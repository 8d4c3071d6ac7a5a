from typing import Literal

TurnStatus = Literal["active", "cancelled", "completed", "error"]

TURN_STATUS_VALUES: set[TurnStatus] = {
    "active",
    "cancelled",
    "completed",
    "error",
}


def check_turn_status(value: str) -> TurnStatus:
    if value in TURN_STATUS_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {TURN_STATUS_VALUES!r}"
    )
