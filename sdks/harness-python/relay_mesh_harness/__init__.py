"""relay-mesh harness SDK for Python: an agent attaches as a relay session over NATS, with the
official NATS client (nats-py). The twin of the Rust `relay-harness` crate."""

from .binding import (
    DEFAULT_EMITS,
    AgentSession,
    AttachOptions,
    Binding,
    adapter,
    capabilities,
    receipt,
)
from .bus import Bus, RelayError, connect, creds_identity
from .events import EventSink

__all__ = [
    "DEFAULT_EMITS",
    "AgentSession",
    "AttachOptions",
    "Binding",
    "Bus",
    "EventSink",
    "RelayError",
    "adapter",
    "capabilities",
    "connect",
    "creds_identity",
    "receipt",
]
