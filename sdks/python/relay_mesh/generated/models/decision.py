from typing import Literal

Decision = Literal["approved", "denied", "pending"]

DECISION_VALUES: set[Decision] = {
    "approved",
    "denied",
    "pending",
}


def check_decision(value: str) -> Decision:
    if value in DECISION_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {DECISION_VALUES!r}")
