"""The connection to the mesh and calls over it, as `relay_bus::connect_nats` and
`relay_bus::client` make them in Rust.

A harness with its own NATS identity (a `.creds` whose user JWT names an agent and carries the
tag `workspace:<ws>`, as the spawner or `relayctl auth harness` mints it) calls on the harness
form of each subject, `harness.<workspace>.<agentId>.<subject>`: its identity may publish
nowhere else, and the prefix is what tells the services which agent calls. Any other identity
(a service's `.creds`, an nkey seed, a token, none) calls on the plain subjects.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass
from typing import Any, Optional

import nats
import nats.errors
from nats.aio.client import RawCredentials
from nats.errors import NoRespondersError, TimeoutError as NatsTimeoutError

CALLER_HEADER = "Relay-Caller"
WORKSPACE_HEADER = "Relay-Workspace"
ERROR_HEADER = "Nats-Service-Error"
ERROR_CODE_HEADER = "Nats-Service-Error-Code"
DEFAULT_WORKSPACE = "default"

# The codes of the wire error by the status a micro service puts in its error header.
_CODES = {
    400: "invalid_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    409: "conflict",
    422: "capability_unsupported",
    429: "rate_limited",
    500: "internal",
    503: "unavailable",
    504: "timeout",
}
STATUS = {code: status for status, code in _CODES.items()}


class RelayError(Exception):
    """The mesh's wire error `{"error": {code, message, retryable, details}}`."""

    def __init__(self, code: str, message: str, retryable: Optional[bool] = None, details: Any = None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.retryable = code in ("unavailable", "timeout") if retryable is None else retryable
        self.details = details

    def wire(self) -> dict:
        body = {"code": self.code, "message": self.message, "retryable": self.retryable}
        if self.details is not None:
            body["details"] = self.details
        return {"error": body}


def creds_identity(creds: str) -> tuple[str, Optional[str]]:
    """(name, workspace tag if any) of the user JWT in a `.creds` text (not verified: the
    server does that)."""
    lines = creds.splitlines()
    for i, line in enumerate(lines):
        if "BEGIN NATS USER JWT" in line and i + 1 < len(lines):
            body = lines[i + 1].strip().split(".")[1]
            claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
            tags = (claims.get("nats") or {}).get("tags") or []
            workspace = next((t[len("workspace:"):] for t in tags if t.startswith("workspace:")), None)
            return claims.get("name", ""), workspace
    raise ValueError("no user JWT in the credentials")


@dataclass
class Bus:
    """A NATS connection that calls as one caller: an agent's harness, or a plain client."""

    nc: Any
    # (workspace, agentId) when the identity is an agent's harness identity.
    harness: Optional[tuple[str, str]] = None
    caller: str = "agent"
    workspace: str = DEFAULT_WORKSPACE

    def subject(self, subject: str) -> str:
        """The subject a call to `subject` goes out on from this connection."""
        if self.harness:
            workspace, agent = self.harness
            return f"harness.{workspace}.{agent}.{subject}"
        return subject

    def headers(self) -> dict:
        return {CALLER_HEADER: self.caller, WORKSPACE_HEADER: self.workspace}

    async def call(self, subject: str, body: Any, timeout: float = 10.0) -> Any:
        """Sends `body` as JSON and decodes the reply; a wire error reply raises RelayError, and
        so do transport failures: no responder → `unavailable`, no reply → `timeout`."""
        try:
            msg = await self.nc.request(
                self.subject(subject), json.dumps(body).encode(), timeout=timeout, headers=self.headers()
            )
        except NoRespondersError:
            raise RelayError("unavailable", f"no service answers {subject}") from None
        except NatsTimeoutError:
            raise RelayError("timeout", f"{subject} did not answer within {timeout} s") from None
        except nats.errors.Error as e:
            raise RelayError("unavailable", f"request to {subject} failed: {e}") from None
        status = (msg.headers or {}).get(ERROR_CODE_HEADER)
        if status is None:
            return json.loads(msg.data) if msg.data else None
        try:
            err = json.loads(msg.data)["error"]
            raise RelayError(err["code"], err["message"], err.get("retryable"), err.get("details"))
        except (ValueError, KeyError, TypeError):
            # A micro service that is not ours: the error is in its headers.
            code = _CODES.get(int(status) if status.isdigit() else 500, "internal")
            raise RelayError(code, (msg.headers or {}).get(ERROR_HEADER, "")) from None

    async def close(self) -> None:
        await self.nc.drain()


async def connect(
    url: Optional[str] = None,
    *,
    creds_file: Optional[str] = None,
    creds: Optional[str] = None,
    nkey_seed_file: Optional[str] = None,
    nkey_seed: Optional[str] = None,
    token: Optional[str] = None,
    tls_ca_file: Optional[str] = None,
    name: str = "relay-mesh-harness-python",
) -> Bus:
    """Connects with the identity given, else the one the environment names as for every relay
    service: `RELAY_NATS__URL` (default nats://127.0.0.1:4222), `RELAY_NATS__CREDS` (the text of a
    `.creds`, how the spawner hands a harness its identity), `RELAY_NATS__CREDS_FILE`,
    `RELAY_NATS__TLS_CA_FILE`."""
    env = os.environ.get
    url = url or env("RELAY_NATS__URL") or "nats://127.0.0.1:4222"
    tls_ca_file = tls_ca_file or env("RELAY_NATS__TLS_CA_FILE") or None
    if not (creds or creds_file or nkey_seed or nkey_seed_file or token):
        creds = env("RELAY_NATS__CREDS") or None
        creds_file = env("RELAY_NATS__CREDS_FILE") or None
    if creds is None and creds_file:
        with open(creds_file) as f:
            creds = f.read()

    options: dict = {"name": name, "max_reconnect_attempts": -1}
    bus = Bus(nc=None)
    if creds and creds.strip():
        options["user_credentials"] = RawCredentials(creds)
        who, workspace = creds_identity(creds)
        if workspace:
            # An agent's harness identity: it may read replies only under its own inbox prefix.
            bus.harness = (workspace, who)
            bus.caller, bus.workspace = f"agent:{who}", workspace
            options["inbox_prefix"] = f"_INBOX.agent.{who}"
        else:
            bus.caller = f"service:{who}"
            options["inbox_prefix"] = f"_INBOX.{who}"
    elif nkey_seed_file:
        options["nkeys_seed"] = nkey_seed_file
    elif nkey_seed:
        options["nkeys_seed_str"] = nkey_seed
    elif token:
        options["token"] = token
    if tls_ca_file:
        import ssl

        options["tls"] = ssl.create_default_context(cafile=tls_ca_file)
    bus.nc = await nats.connect(url, **options)
    return bus
