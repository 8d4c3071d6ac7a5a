from typing import Literal

ContextLevel = Literal["critical", "ok", "warn"]

CONTEXT_LEVEL_VALUES: set[ContextLevel] = {
    "critical",
    "ok",
    "warn",
}


def check_context_level(value: str) -> ContextLevel:
    if value in CONTEXT_LEVEL_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {CONTEXT_LEVEL_VALUES!r}"
    )
