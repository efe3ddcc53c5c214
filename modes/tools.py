"""agent_list_modes: the read-only mode catalog tool of TUL-010."""

import logging

from agent_tools.contract import AgentTool, InvokeResult, function_schema, load_arguments, reject_unknown_arguments
from agent_tools.registry import registry

logger = logging.getLogger(__name__)

FILTER_MAX_LENGTH = 200


class ListModesTool(AgentTool):
    TOOL_NAME = "agent_list_modes"
    TOOL_USAGE_METADATA = (
        "Use this tool to list the agent modes and what each is for. Call it when the user asks what modes "
        "are available, when the user wants help understanding or choosing between modes, or when you are "
        "about to propose a mode change and want to present the options with their descriptions. "
        "Do not call it on every user message, nor when you already know which mode you are in and do not "
        "need to present options, and never as a substitute for agent_change_mode: this tool only reads."
    )
    read_only = True

    @staticmethod
    def get_schema() -> dict:
        return function_schema(
            name=ListModesTool.TOOL_NAME,
            description="Lists the configured agent modes (read-only): key, name, description, when to use, "
            "default flag and role hints; optionally example utterances and a text filter.",
            properties={
                "includeExamples": {
                    "type": "boolean", "description": "When true, include example user requests for each mode."
                },
                "filter": {
                    "type": "string",
                    "description": "Only modes whose key, name, description or when-to-use contains "
                    "this text (case-insensitive).",
                },
            },
        )

    def run(self, arguments_json, context):
        label = "ListModesTool"
        arguments = load_arguments(arguments_json, empty_message=None, label=label)
        reject_unknown_arguments(arguments, allowed={"includeExamples", "filter"}, label=label)
        include_examples = arguments.get("includeExamples", False)
        if not isinstance(include_examples, bool):
            return InvokeResult.from_error(f"{label} expects 'includeExamples' to be true or false.")
        text = arguments.get("filter", "")
        if not isinstance(text, str) or len(text) > FILTER_MAX_LENGTH:
            return InvokeResult.from_error(
                f"{label} expects 'filter' to be a string of at most {FILTER_MAX_LENGTH} characters."
            )
        try:
            return InvokeResult.create(context.catalog.listing_json(text=text, include_examples=include_examples))
        except Exception:
            logger.exception("agent_list_modes could not read the mode catalog")
            return InvokeResult.from_error(f"{label} could not read the mode catalog.", server_fault=True)


registry.register(ListModesTool)
