from typing import Literal

InvocationStatus = Literal["completed", "denied", "failed", "pending", "running"]

INVOCATION_STATUS_VALUES: set[InvocationStatus] = {
    "completed",
    "denied",
    "failed",
    "pending",
    "running",
}


def check_invocation_status(value: str) -> InvocationStatus:
    if value in INVOCATION_STATUS_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {INVOCATION_STATUS_VALUES!r}"
    )
