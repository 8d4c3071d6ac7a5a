"""The OpenAPI document as both generators can read it, printed to stdout (sdks/generate.sh).

Two shapes of the gateway's document trip the generators; each is made plain here, with the
same meaning for a client, and nothing else changes:

- The recursive union `NoNulJson` (any JSON value whose strings hold no NUL): openapi-python-
  client 0.29 drops it and, with it, the three operations whose bodies use it (POST
  /actions/invoke, /sessions/{id}/client, /sessions/{id}/compress), and the type
  openapi-typescript 7 writes for it refers to itself (TS2502). The gateway checks the NUL
  rule; here it is any JSON value.
- Optional request bodies written `oneOf: [null, X]` (the gateway reads no body and `null`
  alike): openapi-python-client 0.29 sends its UNSET marker as the JSON of an omitted one
  (a TypeError in httpx; upstream issue 1354). Here they are X, still optional.
"""

import json
import sys

doc = json.load(open(sys.argv[1]))
doc["components"]["schemas"]["NoNulJson"] = {"description": "Any JSON value."}
for operations in doc["paths"].values():
    for operation in operations.values():
        body = operation.get("requestBody") if isinstance(operation, dict) else None
        if not body or body.get("required"):
            continue
        for media in body["content"].values():
            variants = media["schema"].get("oneOf", [])
            rest = [v for v in variants if v != {"type": "null"}]
            if len(variants) == 2 and len(rest) == 1:
                media["schema"] = rest[0]
json.dump(doc, sys.stdout, indent=1, sort_keys=True)
