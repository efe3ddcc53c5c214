"""agent_hello_world: the canonical minimal tool of TUL-011 §6."""

from aptix_site.text import compact_json

from .contract import AgentTool, InvokeResult, function_schema, load_arguments, reject_unknown_arguments
from .registry import registry

NAME_MAX_LENGTH = 200


class HelloWorldTool(AgentTool):
    TOOL_NAME = "agent_hello_world"
    TOOL_USAGE_METADATA = (
        "Use this tool to generate a personalized greeting when the user asks to be greeted or welcomed. "
        "Pass the user's name."
    )
    read_only = True

    @staticmethod
    def get_schema() -> dict:
        return function_schema(
            name=HelloWorldTool.TOOL_NAME,
            description="Creates a friendly greeting using the user's name.",
            properties={"name": {"type": "string", "description": "The name of the person to greet."}},
            required=("name",),
        )

    def run(self, arguments_json, context):
        label = "HelloWorldTool"
        arguments = load_arguments(
            arguments_json, empty_message=f"{label} requires a non-empty arguments object.", label=label
        )
        name = arguments.get("name")
        if not isinstance(name, str) or not name.strip():
            return InvokeResult.from_error(f"{label} requires a non-empty 'name' string.")
        if len(name) > NAME_MAX_LENGTH:
            return InvokeResult.from_error(f"{label} accepts a 'name' of at most {NAME_MAX_LENGTH} characters.")
        reject_unknown_arguments(arguments, allowed={"name"}, label=label)
        greeting = f"Hello, {name.strip()}! Welcome to Aptix."
        payload = {"message": greeting, "conversationId": context.conversation_id, "sessionId": context.session_id}
        return InvokeResult.create(compact_json(payload))


registry.register(HelloWorldTool)
