"""
What an agent back-end asks of the service, whichever way it asks (REST, MCP, a command): the tools'
schemas, running a tool for an authenticated user, and a session's context for the next LLM call.
"""

import json

from rest_framework import exceptions, status

from accounts.models import organization_of
from aptix_site.text import compact_json
from modes.catalog import (
    CatalogSnapshot,
    UnknownRevisionError,
    catalog_at_revision,
    current_catalog,
    get_tool,
    mode_enables,
)
from modes.exceptions import RevisionNotFound
from sessions_app.exceptions import SessionNotFound
from sessions_app.models import AgentSession
from sessions_app.selectors import InvalidSessionId, get_owned_session, mode_id_at_revision

from agent_tools.contract import AgentToolExecutionContext, InvokeResult, ToolRateLimited
from agent_tools.formats import format_tools
from agent_tools.registry import UnknownToolError


class ToolNotFound(exceptions.NotFound):
    default_detail = "No such tool."
    default_code = "unknown_tool"


class ToolNotEnabled(exceptions.PermissionDenied):
    default_detail = "The session's mode does not enable this tool."
    default_code = "tool_not_enabled"


class ToolExecutedByClient(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The agent's client executes this tool, not this service."
    default_code = "client_tool"


class SessionNotAtRevision(exceptions.NotFound):
    default_detail = "The session did not exist at that catalog revision."
    default_code = "session_not_at_revision"


class RevisionNotPublished(exceptions.PermissionDenied):
    default_detail = "That catalog revision was never published; only staff may preview it."
    default_code = "revision_not_published"


class InvalidInvocation(exceptions.ValidationError):
    default_code = "invalid_invocation"


def tool_list_payload(*, tool_format: str | None) -> dict:
    """GET /api/tools/: every tool, registered or declared, in tool_format; and which ones the client runs."""
    tools = current_catalog().all_tools()
    return {"tools": format_tools(tools, tool_format=tool_format), "clientTools": _client_tool_names(tools)}


def llm_context_json(*, mode, tool_format: str | None = None, catalog: CatalogSnapshot | None = None) -> str:
    """
    What an agent needs for its next LLM call in a session of this mode, as JSON text: the catalog
    revision, the Mode Catalog block, the tools the mode enables in tool_format, which of them the
    agent's client executes, and the tool ids the mode lists that name no tool. From the published
    catalog unless another is given; built once per catalog version. A mode that catalog does not have
    (a rollback removed it) is served as the default mode (AGN-014 §6.3), and the context's notice says so.
    """
    catalog = catalog or current_catalog()
    served = catalog.served(mode)
    notice = None
    if served.pk != mode.pk:
        notice = (
            f"Mode {mode.key!r} of this session is not in the published catalog (revision {catalog.revision}); "
            f"the default mode {served.key!r} applies."
        )

    def build():
        tools = catalog.tools_for_mode(served)
        context = {
            "catalogRevision": catalog.revision,
            "systemPrompt": catalog.system_prompt(served.key),
            "tools": format_tools(tools, tool_format=tool_format, mode_keys=catalog.switch_target_keys(served)),
            "clientTools": _client_tool_names(tools),
            "unresolvedToolIds": catalog.unresolved_tool_ids(served.associated_tool_ids),
        }
        return compact_json({**context, "notice": notice} if notice else context)

    if notice:
        return build()
    return catalog.memoized(("llm-context", served.key, tool_format), build)


def llm_context_json_at_revision(
    *, session: AgentSession, revision: int, viewer, tool_format: str | None = None
) -> str:
    """
    llm_context_json as it was at a catalog revision, for the mode the session was in then: any revision that
    was published; one that never was (pending or unpublished) only as a preview for staff.
    """
    try:
        catalog = catalog_at_revision(revision)
    except UnknownRevisionError as error:
        raise RevisionNotFound(str(error)) from None
    if not catalog.was_published and not viewer.is_staff:
        raise RevisionNotPublished(f"Catalog revision {revision} was never published; only staff may preview it.")
    mode = catalog.by_id.get(mode_id_at_revision(session=session, revision=revision))
    if mode is None:
        raise SessionNotAtRevision(f"Session {session.pk} was created after catalog revision {revision}.")
    return llm_context_json(mode=mode, tool_format=tool_format, catalog=catalog)


def _client_tool_names(tools) -> list[str]:
    return [tool.name for tool in tools if not tool.is_tool_fully_executed_on_server]


def invoke_tool(*, name: str, arguments, session_id, conversation_id, user) -> InvokeResult:
    """
    Run the named tool for user, in the session session_id names if it is not None. arguments is a
    dict, a JSON string of one, or None. Raises ToolNotFound, SessionNotFound, ToolNotEnabled,
    ToolExecutedByClient or InvalidInvocation before the tool runs; the tool's own failures come
    back in the InvokeResult.
    """
    tool = _tool(name)
    session = None if session_id is None else _owned_session(session_id, user)
    return _run(tool, arguments=arguments, session=session, conversation_id=conversation_id, user=user)


def run_tool(*, name: str, arguments, session: AgentSession | None, conversation_id, user) -> InvokeResult:
    """invoke_tool for a caller that has already read the user's session (or has none)."""
    return _run(_tool(name), arguments=arguments, session=session, conversation_id=conversation_id, user=user)


def _tool(name):
    try:
        return get_tool(name)
    except UnknownToolError as error:
        raise ToolNotFound(str(error)) from None


def _run(tool, *, arguments, session, conversation_id, user) -> InvokeResult:
    if session is not None and not mode_enables(current_catalog().served(session.mode), tool):
        raise ToolNotEnabled(f"Mode {session.mode.key!r} of this session does not enable the tool {tool.name!r}.")
    if not tool.is_tool_fully_executed_on_server:
        raise ToolExecutedByClient(
            f"The tool {tool.name!r} is executed by the agent's client, not by this service: "
            "run it in the client and give the model its result."
        )
    context = AgentToolExecutionContext(
        load_org=lambda: organization_of(user),
        user=user,
        session_id=str(session.pk) if session else None,
        conversation_id=conversation_id,
    )
    try:
        return tool.execute(_arguments_json(arguments), context)
    except ToolRateLimited as error:
        raise exceptions.Throttled(wait=error.retry_after, detail=str(error)) from None


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
