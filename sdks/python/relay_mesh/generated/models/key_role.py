from typing import Literal

KeyRole = Literal["admin", "operator", "viewer"]

KEY_ROLE_VALUES: set[KeyRole] = {
    "admin",
    "operator",
    "viewer",
}


def check_key_role(value: str) -> KeyRole:
    if value in KEY_ROLE_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {KEY_ROLE_VALUES!r}")
