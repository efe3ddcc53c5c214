"""
What a mode's admin page previews, read-only: the system-prompt block and the tools as a session in this
mode receives them once the catalog as saved is published, through the catalog's own functions, with the tool
ids that name no tool marked.
"""

from django.template.loader import render_to_string
from django.utils.html import format_html

from .catalog import working_catalog
from .checks import UNRESOLVED_TOOLS_HINT, unresolved_tools_message
from .models import AgentMode


def unresolved_tools_warning(key: str, unresolved: list[str]) -> str:
    return f"Warning (modes.W001): {unresolved_tools_message(key, unresolved)} {UNRESOLVED_TOOLS_HINT}"


def system_prompt_preview(mode: AgentMode) -> str:
    return format_html('<pre class="aptix-preview">{}</pre>', working_catalog().system_prompt(mode.key))


def tools_preview(mode: AgentMode) -> str:
    catalog = working_catalog()
    unresolved = catalog.unresolved_tool_ids(mode.associated_tool_ids)
    tools = [
        {
            "name": tool.name,
            "description": tool.get_schema()["description"],
            "runs_on": "this service" if tool.is_tool_fully_executed_on_server else "the agent's client",
            "always_available": tool.always_available and tool.name not in mode.associated_tool_ids,
        }
        for tool in catalog.tools_for_mode(mode)
    ]
    warning = unresolved_tools_warning(mode.key, unresolved) if unresolved else ""
    return render_to_string(
        "modes/admin/tools_preview.html", {"tools": tools, "unresolved": unresolved, "warning": warning}
    )
