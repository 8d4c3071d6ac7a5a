from typing import Literal

PromptKind = Literal["persona", "profile"]

PROMPT_KIND_VALUES: set[PromptKind] = {
    "persona",
    "profile",
}


def check_prompt_kind(value: str) -> PromptKind:
    if value in PROMPT_KIND_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {PROMPT_KIND_VALUES!r}"
    )
