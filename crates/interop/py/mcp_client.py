"""The MCP Python SDK (`mcp` from PyPI) against the gateway's /api/v1/mcp.

Env: BASE (gateway URL), OPERATOR and VIEWER (API keys). Spawns a fake agent, makes it ask for
a permission, approves it with the operator's key (a viewer's key may not), and reads costs.
Prints "mcp client: all steps passed" at the end.
"""

import asyncio
import json
import os

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

BASE = os.environ["BASE"]
URL = f"{BASE}/api/v1/mcp"


def connect(key):
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60)
    return http, streamable_http_client(URL, http_client=http)


async def call(session, tool, args):
    result = await session.call_tool(tool, args)
    text = result.content[0].text if result.content else ""
    return result.is_error, text


async def call_ok(session, tool, args):
    err, text = await call(session, tool, args)
    assert not err, f"{tool}: {text}"
    return json.loads(text)


async def wait_for(what, probe):
    # A condition, polled: the fake agent asks for the permission on its own time.
    for _ in range(600):
        value = await probe()
        if value:
            return value
        await asyncio.sleep(0.05)
    raise AssertionError(f"never: {what}")


async def main():
    http, transport = connect(os.environ["OPERATOR"])
    async with http, transport as (read, write, *_):
        async with ClientSession(read, write) as s:
            await s.initialize()
            tools = {t.name for t in (await s.list_tools()).tools}
            want = {
                "list_sessions", "list_agents", "session_events", "send_message", "spawn_agent",
                "list_permissions", "decide_permission", "list_questions", "answer_question", "get_costs",
            }
            assert want <= tools, f"missing tools: {want - tools}"
            print("tools:", sorted(tools))

            made = await call_ok(s, "spawn_agent", {"cli": "claude", "handle": "mcp-worker", "title": "from MCP"})
            session_id, agent_id = made["sessionId"], made["agentId"]
            assert agent_id, made
            sessions = await call_ok(s, "list_sessions", {})
            assert any(x["sessionId"] == session_id for x in sessions["sessions"]), sessions
            agents = await call_ok(s, "list_agents", {})
            assert any(a["agentId"] == agent_id for a in agents["agents"]), agents

            await call_ok(s, "send_message", {"sessionId": session_id, "text": "ask-permission Bash rm -rf build"})

            async def pending():
                listed = await call_ok(s, "list_permissions", {"sessionId": session_id})
                return listed["permissions"]

            request = (await wait_for("a pending permission", pending))[0]
            print("pending:", request["requestId"], request.get("toolName"))

            # A viewer's key reads but may not decide: the tool answers with an error.
            vhttp, vtransport = connect(os.environ["VIEWER"])
            async with vhttp, vtransport as (vread, vwrite, *_):
                async with ClientSession(vread, vwrite) as v:
                    await v.initialize()
                    err, text = await call(v, "decide_permission", {"requestId": request["requestId"], "decision": "approve"})
                    assert err and "forbidden" in text, text
                    seen = await call_ok(v, "list_permissions", {"sessionId": session_id})
                    assert [p["requestId"] for p in seen["permissions"]] == [request["requestId"]], seen

            decided = await call_ok(
                s, "decide_permission", {"requestId": request["requestId"], "decision": "approve", "reason": "from MCP"}
            )
            print("decided:", decided)
            assert (await call_ok(s, "list_permissions", {"sessionId": session_id}))["permissions"] == []

            async def decided_event():
                page = await call_ok(s, "session_events", {"sessionId": session_id})
                types = [e["type"] for e in page["events"]]
                return types if any(t.startswith("permission.") and t != "permission.requested" for t in types) else None

            types = await wait_for("the decision in the event log", decided_event)
            print("events:", types)

            err, text = await call(s, "decide_permission", {"requestId": request["requestId"], "decision": "maybe"})
            assert err and "invalid_request" in text, text

            costs = await call_ok(s, "get_costs", {"sessionId": session_id})
            assert "total" in costs and "bySession" in costs, costs
            print("costs:", json.dumps(costs)[:200])
    print("mcp client: all steps passed")


asyncio.run(main())
