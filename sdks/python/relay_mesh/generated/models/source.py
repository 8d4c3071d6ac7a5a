from typing import Literal

Source = Literal["extension", "system", "user"]

SOURCE_VALUES: set[Source] = {
    "extension",
    "system",
    "user",
}


def check_source(value: str) -> Source:
    if value in SOURCE_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {SOURCE_VALUES!r}")
