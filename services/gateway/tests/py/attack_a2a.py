"""The official A2A Python SDK (`a2a-sdk` from PyPI, protocol 1.0, JSON-RPC) as a driver for
tests/attack_protocols.rs.

One JSON request a line on stdin, one JSON answer a line on stdout:
  {"op": "methods"} -> the A2A service's methods as the SDK's protobuf descriptor declares them
     (lf.a2a.v1.A2AService), each with its input message as a JSON schema (JSON field names;
     one member per oneof; maps and bytes left out), the SDK transport method that sends it, and
     whether it streams.
  {"op": "card", "key", "url"} -> A2ACardResolver(url).get_agent_card()
  {"op": "call", "key", "url", "method", "params", "wait"?} -> the SDK's JsonRpcTransport method
     for `method`, with `params` parsed into its request type; a stream is read until it ends or
     for `wait` seconds (default 3).
An answer is {"result": ...} or {"error": <exception class>, "code": <JSON-RPC code the SDK
maps the class from, if any>, "data": <the error's data, if any>, "message"}, with the HTTP
statuses seen ("statuses") and how long the call took ("elapsedMs", from sending to the answer
or the stream's end).
"""

import asyncio
import inspect
import json
import re
import sys
import time

import httpx
from a2a.client import A2ACardResolver
from a2a.client.transports.jsonrpc import JsonRpcTransport
from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import JSON_RPC_ERROR_CODE_MAP
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor as F

SERVICE = next(iter(pb.DESCRIPTOR.services_by_name.values()))
# The transport method that sends each JSON-RPC method, read from the SDK's own source.
SENDERS = {
    m: name
    for name, m in re.findall(
        r"async def (\w+)\(.*?method='(\w+)'", inspect.getsource(JsonRpcTransport), re.S
    )
}


def repeated(f):
    r = getattr(f, "is_repeated", None)
    return r if r is not None else f.label == F.LABEL_REPEATED


def schema(desc, depth=0):
    name = desc.full_name
    if name == "google.protobuf.Struct":
        return {"type": "object", "x-struct": True}
    if name == "google.protobuf.Timestamp":
        return {"type": "string", "format": "date-time"}
    if name.startswith("google.protobuf.") or depth > 6:
        return None
    props, oneofs = {}, set()
    for f in desc.fields:
        o = f.containing_oneof
        if o is not None and not o.name.startswith("_"):
            if o.name in oneofs:
                continue
            oneofs.add(o.name)
        s = field(f, depth)
        if s is not None:
            props[f.json_name] = s
    return {"type": "object", "x-message": desc.name, "properties": props}


def field(f, depth):
    if f.type == F.TYPE_MESSAGE:
        if f.message_type.GetOptions().map_entry:
            return None
        s = schema(f.message_type, depth + 1)
    elif f.type == F.TYPE_ENUM:
        s = {"type": "string", "enum": [v.name for v in f.enum_type.values if v.number != 0]}
    elif f.type == F.TYPE_BOOL:
        s = {"type": "boolean"}
    elif f.type == F.TYPE_STRING:
        s = {"type": "string"}
    elif f.type == F.TYPE_BYTES:
        s = None
    else:
        s = {"type": "integer"}
    if s is not None and repeated(f):
        s = {"type": "array", "items": s}
    return s


def methods():
    return [
        {
            "name": m.name,
            "sender": SENDERS.get(m.name),
            "streaming": m.server_streaming,
            "input": schema(m.input_type),
        }
        for m in SERVICE.methods
    ]


def error(e, statuses):
    code = JSON_RPC_ERROR_CODE_MAP.get(type(e))
    m = re.match(r"JSON-RPC Error (-?\d+):", str(e))
    if code is None and m:
        code = int(m.group(1))
    data = getattr(e, "data", None)
    return {"error": type(e).__name__, "code": code, "data": data, "message": str(e)[:400], "statuses": statuses}


def todict(x):
    return json_format.MessageToDict(x) if hasattr(x, "DESCRIPTOR") else x


async def handle(req):
    if req["op"] == "methods":
        return {"methods": methods()}
    statuses = []

    async def hook(response):
        statuses.append(response.status_code)

    headers = {"Authorization": f"Bearer {req['key']}"} if req.get("key") else {}
    async with httpx.AsyncClient(headers=headers, timeout=60, event_hooks={"response": [hook]}) as http:
        try:
            if req["op"] == "card":
                card = await A2ACardResolver(http, req["url"]).get_agent_card()
                return {"result": todict(card), "statuses": statuses}
            method = next(m for m in SERVICE.methods if m.name == req["method"])
            request = json_format.ParseDict(req["params"], getattr(pb, method.input_type.name)())
            transport = JsonRpcTransport(http, pb.AgentCard(), req["url"], is_shared_httpx=True)
            send = getattr(transport, SENDERS[method.name])
            started = time.monotonic()

            def elapsed():
                return round((time.monotonic() - started) * 1000)

            if method.server_streaming:
                items = []

                async def read():
                    async for item in send(request):
                        items.append(todict(item))

                try:
                    await asyncio.wait_for(read(), timeout=req.get("wait", 3))
                except asyncio.TimeoutError:
                    pass
                return {"result": {"stream": items}, "statuses": statuses, "elapsedMs": elapsed()}
            result = todict(await send(request))
            return {"result": result, "statuses": statuses, "elapsedMs": elapsed()}
        except Exception as e:  # noqa: BLE001 — every failure is an answer to compare
            return error(e, statuses)


for line in sys.stdin:
    if line.strip():
        print(json.dumps(asyncio.run(handle(json.loads(line)))), flush=True)
