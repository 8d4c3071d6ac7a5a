from typing import Literal

ErrorCode = Literal[
    "capability_unsupported",
    "conflict",
    "forbidden",
    "internal",
    "invalid_request",
    "not_found",
    "rate_limited",
    "timeout",
    "unauthorized",
    "unavailable",
]

ERROR_CODE_VALUES: set[ErrorCode] = {
    "capability_unsupported",
    "conflict",
    "forbidden",
    "internal",
    "invalid_request",
    "not_found",
    "rate_limited",
    "timeout",
    "unauthorized",
    "unavailable",
}


def check_error_code(value: str) -> ErrorCode:
    if value in ERROR_CODE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {ERROR_CODE_VALUES!r}"
    )
