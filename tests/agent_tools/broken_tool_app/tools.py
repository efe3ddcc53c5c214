"""Found by agent_tools' autodiscovery of tools.py modules; registering this tool must stop start-up."""

from agent_tools.contract import AgentTool, InvokeResult, function_schema
from agent_tools.registry import registry


class BrokenNameTool(AgentTool):
    TOOL_NAME = "broken tool name"  # a space: outside ^[a-zA-Z0-9_-]{1,64}$
    TOOL_USAGE_METADATA = "Never registered: its name is invalid."

    @staticmethod
    def get_schema() -> dict:
        return function_schema(name=BrokenNameTool.TOOL_NAME, description="A tool with an invalid name.", properties={})

    def run(self, arguments_json, context):
        return InvokeResult.create("{}")


registry.register(BrokenNameTool)
