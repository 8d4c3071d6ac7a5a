"""The official MCP Python SDK (`mcp` from PyPI) as a driver for tests/attack_protocols.rs.

One JSON request a line on stdin, one JSON answer a line on stdout. Each request connects anew
with its key (the server is stateless) through `streamable_http_client` + `ClientSession`:
  {"key": <token or null>}                          -> tools/list: {"tools": [...]}
  {"key": ..., "tool": name, "args": {...}}         -> tools/call: {"isError", "text", "structured"}
A refusal is {"stage": "connect"|"call", "code"|"exception", "message"}; every answer carries
the HTTP statuses the client saw ("statuses"), which the SDK itself folds into JSON-RPC errors.
"""

import asyncio
import json
import os
import sys

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

URL = os.environ["BASE"] + "/api/v1/mcp"


def flatten(e):
    # anyio task groups wrap what failed in an ExceptionGroup.
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    return e


async def handle(req):
    statuses = []

    async def hook(response):
        statuses.append(response.status_code)

    headers = {"Authorization": f"Bearer {req['key']}"} if req.get("key") else {}
    http = httpx2.AsyncClient(headers=headers, timeout=60, event_hooks={"response": [hook]})
    stage = "connect"
    try:
        async with http, streamable_http_client(URL, http_client=http) as (read, write, *_):
            async with ClientSession(read, write) as s:
                await s.initialize()
                stage = "call"
                if req.get("tool") is None:
                    tools, cursor = [], None
                    while True:
                        page = await s.list_tools(cursor=cursor) if cursor else await s.list_tools()
                        tools += [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in page.tools]
                        cursor = page.next_cursor
                        if not cursor:
                            break
                    return {"tools": tools, "statuses": statuses}
                res = await s.call_tool(req["tool"], req.get("args") or {})
                text = "\n".join(c.text for c in res.content if getattr(c, "text", None) is not None)
                return {
                    "isError": bool(res.is_error),
                    "text": text,
                    "structured": res.structured_content,
                    "statuses": statuses,
                }
    except BaseException as e:  # noqa: BLE001 — every failure is an answer to compare
        e = flatten(e)
        if isinstance(e, MCPError):
            return {"stage": stage, "code": e.code, "message": e.message, "statuses": statuses}
        return {"stage": stage, "exception": type(e).__name__, "message": str(e)[:300], "statuses": statuses}


for line in sys.stdin:
    if line.strip():
        print(json.dumps(asyncio.run(handle(json.loads(line)))), flush=True)
