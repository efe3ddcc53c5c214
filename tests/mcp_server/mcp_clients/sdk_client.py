"""
One agent's turn on a session's MCP endpoint, with the `mcp` SDK's own ClientSession at whatever version the
running Python has (1.x or 2.x), on one connection: connect, list tools, ask for prompts (a method the server
does not have), read a templated resource, change the mode,
call a tool the new mode does not serve (as a model that called both in one turn would), branch over the
session-create limit, then ping and list again to show the connection survived. Prints what each step gave, as
JSON. Usage: python sdk_client.py URL TOKEN
"""

import asyncio
import json
import sys
from contextlib import asynccontextmanager
from importlib.metadata import version

import mcp.shared.exceptions
from mcp import ClientSession

SdkError = getattr(mcp.shared.exceptions, "McpError", None) or mcp.shared.exceptions.MCPError


@asynccontextmanager
async def connected(url, token):
    headers = {"Authorization": f"Bearer {token}"}
    if version("mcp").startswith("1."):
        from mcp.client.streamable_http import streamablehttp_client

        async with streamablehttp_client(url, headers=headers) as (read, write, _):
            yield read, write
    else:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        async with httpx2.AsyncClient(headers=headers) as http, streamable_http_client(url, http_client=http) as streams:
            yield streams


def dump(value):
    return value.model_dump(by_alias=True, mode="json", exclude_none=True)


async def step(work):
    """What a request gave: its result, the JSON-RPC error the SDK raised, or another exception (a broken transport)."""
    try:
        return {"result": dump(await work)}
    except SdkError as error:
        return {"error": dump(error.error)}
    except Exception as error:  # noqa: BLE001 - what the client did is the finding
        return {"exception": f"{type(error).__name__}: {error}"}


async def turn(url, token):
    change = {"mode": "ddr_authoring", "branch": False, "reason": "The user wants a DDR."}
    branch = {"mode": "workflow_authoring", "branch": True, "reason": "Start the workflow apart."}
    async with connected(url, token) as (read, write), ClientSession(read, write) as session:
        report = {"sdk": version("mcp"), "initialize": dump(await session.initialize())}
        report["tools"] = await step(session.list_tools())
        report["prompts"] = await step(session.list_prompts())  # a method this server does not have
        report["templates"] = await step(session.list_resource_templates())
        report["templated_read"] = await step(session.read_resource("modes://modes/ddr_authoring"))
        report["change"] = await step(session.call_tool("agent_change_mode", change))
        report["unserved"] = await step(session.call_tool("agent_hello_world", {"name": "Ada"}))
        report["branch_over_limit"] = await step(session.call_tool("agent_change_mode", branch))
        report["ping"] = await step(session.send_ping())
        report["tools_after"] = await step(session.list_tools())
    return report


if __name__ == "__main__":
    print(json.dumps(asyncio.run(turn(sys.argv[1], sys.argv[2]))))
