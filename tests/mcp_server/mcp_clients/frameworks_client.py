"""
What an agent framework makes of a session's MCP endpoint, without a model: `langchain` (langchain-mcp-adapters, as
LangChain and LangGraph agents load MCP tools) or `agents` (the OpenAI Agents SDK's MCP layer). It lists the tools
and converts them to strict function schemas, reads the resources, changes the mode and then calls the tool list it
holds, now stale (agent_hello_world, which the new mode does not serve), the way the framework runs a model's tool
call. Prints what each step gave, as JSON. Usage: python frameworks_client.py langchain|agents URL TOKEN
"""

import asyncio
import json
import sys

CHANGE = {"mode": "ddr_authoring", "branch": False, "reason": "The user wants a DDR."}
MODE_URI = "modes://modes/ddr_authoring"


def outcome(error):
    return {"exception": f"{type(error).__name__}: {error}"}


async def langchain(url, token):
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from langchain_mcp_adapters.client import MultiServerMCPClient

    client = MultiServerMCPClient(
        {"aptix": {"transport": "streamable_http", "url": url, "headers": {"Authorization": f"Bearer {token}"}}}
    )
    tools = {tool.name: tool for tool in await client.get_tools()}
    report = {"tools": list(tools), "strict": [convert_to_openai_tool(tool, strict=True) for tool in tools.values()]}

    async def model_call(name, arguments):
        # A model's tool call, as a LangGraph ToolNode runs it: the ToolMessage is what the model reads next.
        call = {"type": "tool_call", "id": f"call-{name}", "name": name, "args": arguments}
        try:
            message = await tools[name].ainvoke(call)
        except Exception as error:  # noqa: BLE001 - what the framework did is the finding
            return outcome(error)
        return {"content": message.content, "status": message.status, "artifact": message.artifact}

    report["change"] = await model_call("agent_change_mode", CHANGE)
    report["unserved"] = await model_call("agent_hello_world", {"name": "Ada"})
    report["after"] = await model_call("agent_list_modes", {"filter": "ddr", "includeExamples": False})
    async with client.session("aptix") as session:
        report["templates"] = [template.uriTemplate for template in (await session.list_resource_templates()).resourceTemplates]
    [blob] = await client.get_resources("aptix", uris=[MODE_URI])
    report["resource"] = {"mimetype": blob.mimetype, "data": blob.as_string()}
    return report


async def agents(url, token):
    from agents import RunContextWrapper
    from agents.mcp import MCPServerStreamableHttp, MCPUtil
    from agents.tool_context import ToolContext

    params = {"url": url, "headers": {"Authorization": f"Bearer {token}"}}
    async with MCPServerStreamableHttp(params=params, name="aptix", cache_tools_list=True) as server:
        listed = await server.list_tools(RunContextWrapper(context=None), None)
        tools = {tool.name: MCPUtil.to_function_tool(tool, server, convert_schemas_to_strict=True) for tool in listed}
        report = {
            "tools": list(tools),
            "strict": [{"name": name, "strict": tool.strict_json_schema, "parameters": tool.params_json_schema}
                       for name, tool in tools.items()],
        }

        # The SDK's default failure_error_function tells the model only that the tool failed; an application that
        # passes its errors on to the model gives one of its own, as this one does.
        readable = {
            tool.name: MCPUtil.to_function_tool(
                tool, server, convert_schemas_to_strict=True, failure_error_function=lambda context, error: str(error)
            )
            for tool in listed
        }

        async def model_call(name, arguments, *, function_tools=tools):
            # A model's tool call, as Runner.run runs it: what it returns is what the model reads next.
            arguments_json = json.dumps(arguments)
            context = ToolContext(context=None, tool_name=name, tool_call_id=f"call-{name}", tool_arguments=arguments_json)
            try:
                output = await function_tools[name].on_invoke_tool(context, arguments_json)
            except BaseException as error:  # noqa: BLE001 - CancelledError included: what the SDK did is the finding
                return outcome(error)
            if isinstance(output, list):
                output = [item.model_dump() if hasattr(item, "model_dump") else item for item in output]
            return {"output": output}

        report["change"] = await model_call("agent_change_mode", CHANGE)
        report["unserved"] = await model_call("agent_hello_world", {"name": "Ada"})
        report["unserved_readable"] = await model_call("agent_hello_world", {"name": "Ada"}, function_tools=readable)
        report["templates"] = [
            template.uriTemplate for template in (await server.list_resource_templates()).resourceTemplates
        ]
        [content] = (await server.read_resource(MODE_URI)).contents
        report["resource"] = {"mimetype": content.mimeType, "data": content.text}
        report["after"] = await model_call("agent_list_modes", {"filter": "ddr", "includeExamples": False})
    return report


if __name__ == "__main__":
    framework, url, token = sys.argv[1:]
    print(json.dumps(asyncio.run({"langchain": langchain, "agents": agents}[framework](url, token)), default=str))
