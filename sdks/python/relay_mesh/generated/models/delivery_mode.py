from typing import Literal

DeliveryMode = Literal[
    "immediate", "manual", "next-message", "next-tool-call", "on-idle"
]

DELIVERY_MODE_VALUES: set[DeliveryMode] = {
    "immediate",
    "manual",
    "next-message",
    "next-tool-call",
    "on-idle",
}


def check_delivery_mode(value: str) -> DeliveryMode:
    if value in DELIVERY_MODE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {DELIVERY_MODE_VALUES!r}"
    )
