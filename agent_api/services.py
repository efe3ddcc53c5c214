"""
What an agent back-end asks of the service, whichever way it asks (REST, MCP, a command): the tools'
schemas, running a tool for an authenticated user, and a session's context for the next LLM call.
"""

import json

from accounts.models import organization_of
from aptix_site.text import compact_json
from modes.catalog import CatalogSnapshot, catalog_at_revision, current_catalog, get_tool, mode_enables
from sessions_app.models import AgentSession
from sessions_app.ownership import owned_session
from sessions_app.selectors import mode_id_at_revision, parse_session_id

from agent_tools.contract import AgentToolExecutionContext, InvokeResult
from agent_tools.formats import format_tools

from .exceptions import (
    ArgumentsNotAnObject, RevisionNotPublished, SessionNotAtRevision, ToolExecutedByClient, ToolNotEnabled
)
from .serializers import SessionContextResponse, ToolSchemaListResponse


def tool_list_payload(*, tool_format: str | None) -> dict:
    """GET /api/tools/: every tool, registered or declared, in tool_format; and which ones the client runs."""
    catalog = current_catalog()

    def build():
        tools = catalog.all_tools()
        return ToolSchemaListResponse(
            {"tools": format_tools(tools, tool_format=tool_format), "client_tools": _client_tool_names(tools)}
        ).data

    return catalog.memoized(("tool-list", tool_format), build)


def llm_context_json(*, mode, tool_format: str | None, catalog: CatalogSnapshot | None = None) -> str:
    """
    What an agent needs for its next LLM call in a session of this mode (SessionContextResponse), as JSON text:
    from the published catalog unless another is given; built once per catalog version. A mode that catalog
    does not have (a rollback removed it) is served as the default mode (AGN-014 §6.3), and the notice says so.
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
        context = SessionContextResponse(
            {
                "catalog_revision": catalog.revision,
                "system_prompt": catalog.system_prompt(served.key),
                "tools": format_tools(tools, tool_format=tool_format, mode_keys=catalog.switch_target_keys(served)),
                "client_tools": _client_tool_names(tools),
                "unresolved_tool_ids": catalog.unresolved_tool_ids(served.associated_tool_ids),
                **({"notice": notice} if notice else {}),
            }
        )
        return compact_json(context.data)

    if notice:
        return build()
    return catalog.memoized(("llm-context", served.key, tool_format), build)


def llm_context_json_at_revision(*, session: AgentSession, revision: int, viewer, tool_format: str | None) -> str:
    """
    llm_context_json as it was at a catalog revision, for the mode the session was in then: any revision that
    was published; one that never was (pending or unpublished) only as a preview for staff.
    """
    catalog = catalog_at_revision(revision)
    if not catalog.was_published and not viewer.is_staff:
        raise RevisionNotPublished(revision)
    mode = catalog.by_id.get(mode_id_at_revision(session=session, revision=revision))
    if mode is None:
        raise SessionNotAtRevision(session_id=session.pk, revision=revision)
    return llm_context_json(mode=mode, tool_format=tool_format, catalog=catalog)


def _client_tool_names(tools) -> list[str]:
    return [tool.name for tool in tools if not tool.is_tool_fully_executed_on_server]


def invocation_session(*, session_id, user) -> AgentSession | None:
    """
    The session a tool call names by id (None for none): InvalidSessionId for an id that is not one (the
    caller's mistake), SessionNotFound for a missing session or anyone else's.
    """
    if session_id is None:
        return None
    parse_session_id(session_id)
    return owned_session(session_id=session_id, user=user)


def invoke_tool(*, name: str, arguments, session: AgentSession | None, conversation_id, user) -> InvokeResult:
    """
    Run the named tool for user, in session (one of theirs, or None). arguments is a dict, a JSON string
    of one, or None. Raises UnknownToolError, ToolNotEnabled, ToolExecutedByClient or ArgumentsNotAnObject
    before the tool runs, ToolRateLimited when the call spent a limit; the tool's own failures come back in
    the InvokeResult.
    """
    tool = get_tool(name)
    if session is not None and not mode_enables(current_catalog().served(session.mode), tool):
        raise ToolNotEnabled(mode_key=session.mode.key, tool_name=tool.name)
    if not tool.is_tool_fully_executed_on_server:
        raise ToolExecutedByClient(tool.name)
    context = AgentToolExecutionContext(
        load_org=lambda: organization_of(user),
        user=user,
        session_id=str(session.pk) if session else None,
        conversation_id=conversation_id,
    )
    return tool.execute(_arguments_json(arguments), context)


def _arguments_json(arguments) -> str | None:
    if arguments is None or isinstance(arguments, str) and not arguments.strip():
        return arguments
    if isinstance(arguments, dict):
        return json.dumps(arguments)
    try:
        if isinstance(arguments, str) and isinstance(json.loads(arguments), dict):
            return arguments
    except (ValueError, RecursionError):
        pass
    raise ArgumentsNotAnObject()
