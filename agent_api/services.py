"""What an agent back-end asks, whichever way (REST, MCP, a command): the tools, running one, a session's context."""

import json
from collections.abc import Callable

from django.conf import settings

from accounts.models import organization_of
from agent_tools.contract import AgentToolExecutionContext, InvokeResult
from agent_tools.formats import format_tools
from agent_tools.registry import registry
from aptix_site.service_errors import Conflict, InvalidInput, NotAllowed, NotFound
from modes.catalog import Catalog, catalog_at_revision, mode_enables
from modes.permissions import may
from modes.models import AgentMode
from sessions_app.models import AgentSession
from sessions_app.ownership import owned_session
from sessions_app.selectors import mode_id_at_revision, parse_session_id

from .serializers import SessionContextResponse, ToolSchemaListResponse


# The refusals of these services, which each way of serving answers (aptix_site.service_errors).
class ToolNotEnabled(NotAllowed):
    def __init__(self, *, mode_key: str, tool_name: str):
        super().__init__(f"Mode {mode_key!r} of this session does not enable the tool {tool_name!r}.")


class ToolExecutedByClient(Conflict):
    def __init__(self, tool_name: str):
        super().__init__(
            f"The tool {tool_name!r} is executed by the agent's client, not by this service: "
            "run it in the client and give the model its result."
        )


class ArgumentsNotAnObject(InvalidInput):
    field = "arguments"
    message = "Must be a JSON object, or a string holding a JSON object."


class SessionNotAtRevision(NotFound):
    def __init__(self, *, session_id, revision: int):
        super().__init__(f"Session {session_id} was created after catalog revision {revision}.")


class RevisionNotPublished(NotAllowed):
    def __init__(self, revision: int):
        super().__init__(
            f"Catalog revision {revision} was never published; "
            "only staff who may view catalog revisions may preview it."
        )


def tool_list_payload(*, catalog: Catalog, tool_format: str | None) -> dict:
    """GET /api/tools/: every tool, registered or declared, in tool_format; and which ones the client runs."""

    def build():
        tools = catalog.all_tools()
        return ToolSchemaListResponse(
            {"tools": format_tools(tools, tool_format=tool_format), "client_tools": _client_tool_names(tools)}
        ).data

    # agent_change_mode's description depends on MODE_CHANGE_CONFIRMATION too (sessions_app.tools).
    return catalog.memoized(("tool-list", tool_format, settings.MODE_CHANGE_CONFIRMATION), build)


def llm_context(*, catalog: Catalog, mode_id: str, tool_format: str | None) -> dict:
    """What an agent needs for its next LLM call in a session in the mode of this id, built once per catalog and mode;
    a mode the catalog lacks (a rollback removed it) is served as the default mode (AGN-014 §6.3), with a notice."""
    served = catalog.served(mode_id)
    notice = None
    if served.pk != mode_id:
        notice = (
            f"Mode {AgentMode.objects.get(pk=mode_id).key!r} of this session is not in the published catalog "
            f"(revision {catalog.revision}); the default mode {served.key!r} applies."
        )

    def build():
        tools = catalog.tools_for_mode(served)
        return SessionContextResponse(
            {
                "catalog_revision": catalog.revision,
                "system_prompt": catalog.system_prompt(served.key),
                "mode_instructions": served.instructions(),
                "tools": format_tools(tools, tool_format=tool_format, mode_keys=catalog.switch_target_keys(served)),
                "client_tools": _client_tool_names(tools),
                "unresolved_tool_ids": catalog.unresolved_tool_ids(served.associated_tool_ids),
                **({"notice": notice} if notice else {}),
            }
        ).data

    if notice:
        return build()
    return catalog.memoized(("llm-context", served.key, tool_format, settings.MODE_CHANGE_CONFIRMATION), build)


def llm_context_at_revision(*, session: AgentSession, revision: int, viewer, tool_format: str | None) -> dict:
    """llm_context at a catalog revision, for the session's mode then; a revision never published is for staff only."""
    catalog = catalog_at_revision(revision)
    if not catalog.was_published and not may(viewer, "view_catalogrevision"):
        raise RevisionNotPublished(revision)
    mode_id = mode_id_at_revision(session=session, revision=revision)
    if mode_id not in catalog.by_id:
        raise SessionNotAtRevision(session_id=session.pk, revision=revision)
    return llm_context(catalog=catalog, mode_id=mode_id, tool_format=tool_format)


def _client_tool_names(tools) -> list[str]:
    return [tool.name for tool in tools if not tool.is_tool_fully_executed_on_server]


def invocation_session(*, session_id, user) -> AgentSession | None:
    """The session a tool call names by id, or None; InvalidSessionId for an id that is not one (a 400, not a 404)."""
    if session_id is None:
        return None
    parse_session_id(session_id)
    return owned_session(session_id=session_id, user=user)


def invoke_tool(
    *, load_catalog: Callable[[], Catalog], name: str, arguments, session: AgentSession | None, conversation_id, user,
    confirmation_channel: str | None = None,
) -> InvokeResult:
    """
    Run the named tool for user, in session (one of theirs, or None); arguments is a dict, a JSON string of one, or
    None; confirmation_channel: how the user can be asked to confirm (None: they cannot be). The catalog is loaded
    only if needed (a registered tool that reads it reports a failure itself). Refusals and RateLimited raise,
    nothing having run; the tool's own failures come back in the InvokeResult.
    """
    context = AgentToolExecutionContext(
        load_org=lambda: organization_of(user),
        load_catalog=load_catalog,
        user=user,
        session_id=str(session.pk) if session else None,
        conversation_id=conversation_id,
        confirmation_channel=confirmation_channel,
    )
    tool = registry.get(name) if registry.has(name) else context.catalog.tool(name)
    if session is not None and not mode_enables(served := context.catalog.served(session.mode_id), tool):
        raise ToolNotEnabled(mode_key=served.key, tool_name=tool.name)
    if not tool.is_tool_fully_executed_on_server:
        raise ToolExecutedByClient(tool.name)
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
