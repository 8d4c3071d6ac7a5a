from typing import Literal

AttachmentKind = Literal["image", "text"]

ATTACHMENT_KIND_VALUES: set[AttachmentKind] = {
    "image",
    "text",
}


def check_attachment_kind(value: str) -> AttachmentKind:
    if value in ATTACHMENT_KIND_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {ATTACHMENT_KIND_VALUES!r}"
    )
