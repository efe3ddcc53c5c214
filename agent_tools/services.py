"""Invoking a tool for an authenticated user: the one code path behind the REST endpoint and invoke_tool."""

import json

from rest_framework import exceptions

from accounts.models import organization_of
from aptix_site.text import compact_json
from modes.catalog import build_system_prompt, current_catalog
from sessions_app.exceptions import SessionNotFound
from sessions_app.models import AgentSession
from sessions_app.selectors import InvalidSessionId, get_owned_session

from .contract import AgentTool, AgentToolExecutionContext, InvokeResult
from .registry import UnknownToolError, registry


class ToolNotFound(exceptions.NotFound):
    default_detail = "No such tool."
    default_code = "unknown_tool"


class ToolNotEnabled(exceptions.PermissionDenied):
    default_detail = "The session's mode does not enable this tool."
    default_code = "tool_not_enabled"


class InvalidInvocation(exceptions.ValidationError):
    default_code = "invalid_invocation"


def tools_for_mode(mode) -> list[AgentTool]:
    """The registered tools a mode enables, sorted by name; always-available tools are always in."""
    enabled = set(mode.associated_tool_ids)
    return [tool for tool in registry.tools() if tool.always_available or tool.name in enabled]


def llm_context_json(*, mode) -> str:
    """
    What an agent needs for its next LLM call in a session of this mode, as JSON text: the Mode
    Catalog block and the schemas of the tools the mode enables. Built once per catalog version.
    """
    catalog = current_catalog()

    def build():
        return compact_json(
            {
                "systemPrompt": build_system_prompt(mode.key),
                "tools": [tool.get_schema() for tool in tools_for_mode(mode)],
            }
        )

    if catalog.by_key.get(mode.key) is not mode:  # a mode newer than this snapshot: nothing to keep
        return build()
    return catalog.memoized(("llm-context", mode.key), build)


def invoke_tool(*, name: str, arguments, session_id, conversation_id, user) -> InvokeResult:
    """
    Run the named tool for user. arguments is a dict, a JSON string of one, or None.
    Raises ToolNotFound, SessionNotFound, ToolNotEnabled or InvalidInvocation before
    the tool runs; the tool's own failures come back in the InvokeResult.
    """
    try:
        tool = registry.get(name)
    except UnknownToolError as error:
        raise ToolNotFound(str(error)) from None
    session = None
    if session_id is not None:
        session = _owned_session(session_id, user)
        if tool not in tools_for_mode(session.mode):
            raise ToolNotEnabled(f"Mode {session.mode.key!r} of this session does not enable the tool {name!r}.")
    context = AgentToolExecutionContext(
        org=organization_of(user),
        user=user,
        session_id=str(session.pk) if session else None,
        conversation_id=conversation_id,
    )
    return tool.execute(_arguments_json(arguments), context)


def _owned_session(session_id, user) -> AgentSession:
    try:
        return get_owned_session(session_id=session_id, user=user)
    except InvalidSessionId as error:
        raise InvalidInvocation({"sessionId": [str(error)]}) from None
    except AgentSession.DoesNotExist:
        raise SessionNotFound(f"No session {session_id} was found for you.") from None


def _arguments_json(arguments) -> str | None:
    if arguments is None:
        return None
    if isinstance(arguments, dict):
        return json.dumps(arguments)
    if isinstance(arguments, str) and (not arguments.strip() or _holds_json_object(arguments)):
        return arguments
    raise InvalidInvocation({"arguments": ["Must be a JSON object, or a string holding a JSON object."]})


def _holds_json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except (ValueError, RecursionError):
        return False
