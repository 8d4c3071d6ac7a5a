from typing import Literal

Priority = Literal["high", "low", "normal", "urgent"]

PRIORITY_VALUES: set[Priority] = {
    "high",
    "low",
    "normal",
    "urgent",
}


def check_priority(value: str) -> Priority:
    if value in PRIORITY_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {PRIORITY_VALUES!r}")
