from typing import Literal

ForkKind = Literal["aside", "branch", "fork"]

FORK_KIND_VALUES: set[ForkKind] = {
    "aside",
    "branch",
    "fork",
}


def check_fork_kind(value: str) -> ForkKind:
    if value in FORK_KIND_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {FORK_KIND_VALUES!r}")
