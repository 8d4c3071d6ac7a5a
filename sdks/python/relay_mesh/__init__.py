"""Python client for the relay-mesh HTTP API.

`relay_mesh.generated` is generated from docs/api/openapi.json by openapi-python-client
(`make sdks`): one module per operation under `generated.api.<tag>`, the request and reply
types under `generated.models`. This package adds what a generator does not write: auth,
RelayError from the error envelope, and event streams that resume with `Last-Event-ID`.
"""

from .client import Client
from .errors import RelayError
from .events import EventStream
from .generated.models.event import Event
from .generated.version import API_VERSION

__all__ = ["API_VERSION", "Client", "Event", "EventStream", "RelayError"]
