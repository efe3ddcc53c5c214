"""
What the MCP server answers, method by method, for a user and (on a session's endpoint) one of their sessions,
from the services the REST API uses. Their refusals become MCP's answers here (tool_refusal), the one place they do.
"""

import json

from rest_framework.exceptions import Throttled

from agent_api.services import invoke_tool
from agent_tools.formats import format_tools
from agent_tools.registry import registry
from aptix_site.service_errors import RateLimited, ServiceError, one_line
from aptix_site.text import compact_json
from modes.catalog import Catalog, UnknownModeError
from modes.listing import mode_detail_payload, render_markdown
from sessions_app.selectors import InvalidSessionId, parse_session_id
from sessions_app.tools import ModeChangeTool, answer_mode_change

from . import confirmation, protocol
from .protocol import INVALID_PARAMS, METHOD_NOT_FOUND, RESOURCE_NOT_FOUND, JsonRpcError, Message

CATALOG_URI = "modes://catalog"
MODE_URI_PREFIX = "modes://modes/"
# Every parameterised resource; read_resource reads each URI they make.
RESOURCE_TEMPLATES = [
    {
        "uriTemplate": f"{MODE_URI_PREFIX}{{key}}", "name": "mode", "title": "Mode", "mimeType": "application/json",
        "description": "One mode of the catalog, by its key, as JSON (as GET /api/modes/<key>/ gives it).",
    }
]


def answer(message: Message, *, catalog: Catalog, user, session, before_tool_call) -> dict:
    """The result of a request, from catalog; JsonRpcError for one that has none. before_tool_call() runs first."""
    method = message.method
    if method == "initialize" and message.version == protocol.STATELESS_VERSION:
        # 2026-07-28 has no handshake, and no handshake reaches it: a client of that version sends server/discover.
        raise JsonRpcError(
            METHOD_NOT_FOUND,
            f"Method not found: initialize is not a method of protocol version {protocol.STATELESS_VERSION}, which "
            "has no handshake; send server/discover.",
        )
    if method in ("initialize", "server/discover"):
        mode = catalog.served(session.mode_id) if session else catalog.default
        shared = {"capabilities": protocol.CAPABILITIES, "instructions": session_instructions(catalog, mode)}
        if method == "initialize":
            # What the handshake settled (read_message): the client's version, or the server's newest to take or leave.
            return {"protocolVersion": message.version, "serverInfo": protocol.SERVER_INFO, **shared}
        # Only 2026-07-28 is reached through discover; 2025-11-25 clients send initialize instead.
        return {"supportedVersions": [protocol.STATELESS_VERSION], **shared}
    if method == "ping":
        return {}
    if method == "tools/list":
        mode_keys = catalog.switch_target_keys(catalog.served(session.mode_id)) if session else None
        return {"tools": format_tools(served_tools(catalog, session), tool_format="mcp", mode_keys=mode_keys)}
    if method == "tools/call":
        return call_tool(message, catalog=catalog, user=user, session=session, before_tool_call=before_tool_call)
    if method == "resources/list":
        return {"resources": catalog_resources(catalog)}
    if method == "resources/templates/list":
        return {"resourceTemplates": RESOURCE_TEMPLATES}
    if method == "resources/read":
        return {"contents": [read_resource(catalog, message.params.get("uri"), version=message.version)]}
    raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {method[:100]}.")


def may_write(message: Message) -> bool:
    """
    Whether answering message may change something: a tools/call of a server tool not marked read-only. (One this
    endpoint does not serve is refused unrun; a declared tool runs in the agent's client, never here.)
    """
    name = message.params.get("name") if message.method == "tools/call" else None
    return isinstance(name, str) and registry.has(name) and not registry.get(name).read_only


def session_instructions(catalog: Catalog, mode) -> str:
    """What a session in mode tells the model, as one text (MCP has one place for it): what the mode itself says (the
    REST context's modeInstructions), if anything, then the Mode Catalog block, appended as AGN-014 §6.1 asks."""
    return "\n\n".join(part for part in (mode.instructions(), catalog.system_prompt(mode.key)) if part)


def served_tools(catalog: Catalog, session) -> list:
    """The server tools this endpoint runs: in a session, those its mode enables; else those that need no session."""
    tools = catalog.tools_for_mode(catalog.served(session.mode_id)) if session else catalog.all_tools()
    return [tool for tool in tools if tool.is_tool_fully_executed_on_server and (session or not tool.requires_session)]


def call_tool(message: Message, *, catalog: Catalog, user, session, before_tool_call) -> dict:
    params = message.params
    name, arguments = params.get("name"), params.get("arguments", {})
    if not isinstance(name, str):
        raise JsonRpcError(INVALID_PARAMS, "tools/call needs the tool's name, as a string.")
    if name not in {tool.name for tool in served_tools(catalog, session)}:
        raise JsonRpcError(INVALID_PARAMS, _unknown_tool_message(catalog, name, session))
    if not isinstance(arguments, dict):
        raise JsonRpcError(INVALID_PARAMS, f"The arguments of {name} must be an object.")
    if session is not None and "sessionId" in arguments:
        # This endpoint's session is the one a tool works on; naming it again is harmless, naming another is not.
        try:
            same = parse_session_id(arguments.pop("sessionId")) == session.pk
        except InvalidSessionId:
            same = False
        if not same:
            return protocol.tool_error_result(
                f"This MCP endpoint serves session {session.pk}; {name} cannot work on another session here."
            )
    # Only a 2026-07-28 client that declares elicitation can be asked (confirmation.can_ask); any other is refused
    # a change the user must confirm (the tool's CANNOT_ASK), never given it unasked.
    answering = name == ModeChangeTool.TOOL_NAME and confirmation.is_answer(message)  # no other tool asks
    if answering:  # the retry with the user's answer: its requestState is checked before anything runs
        confirmation_id, choice = confirmation.read_answer(
            params, user=user, session=session, name=name, arguments=arguments
        )
    try:
        before_tool_call()
        if answering:
            result = answer_mode_change(
                catalog=catalog, session_id=session.pk, confirmation_id=confirmation_id, user=user, choice=choice,
                channel="mcp",
            )
        else:
            result = invoke_tool(
                load_catalog=lambda: catalog, name=name, arguments=arguments, session=session, conversation_id=None,
                user=user, confirmation_channel="mcp" if confirmation.can_ask(message) else None,
            )
    except ServiceError as error:  # an answer given already (a replayed state), expired, ...: tool_refusal's
        return tool_refusal(error)
    if result.confirmation is not None:
        return confirmation.input_required(
            result.confirmation, user=user, session=session, name=name, arguments=arguments
        )
    if not result.successful:
        return protocol.tool_error_result(result.error_message)
    payload = json.loads(result.result)
    if name == ModeChangeTool.TOOL_NAME:
        # A client keeps the instructions it read when it connected: the new mode's tell the model now.
        instructions = session_instructions(catalog, catalog.by_key.get(payload["mode"], catalog.default))
        return protocol.text_result(result.result, payload, more_text=(instructions,))
    return protocol.text_result(result.result, payload)


def tool_refusal(error: ServiceError) -> dict:
    """
    A tool call a service refused, nothing having run: a spent limit (tool-invoke, or a branch's session-create) is
    MCP's throttled error, in REST's 429 words; any other (the catalog changed since tools/list), the tool's error.
    """
    if isinstance(error, RateLimited):
        message = str(Throttled(wait=error.retry_after, detail=str(error)).detail)
        raise protocol.ThrottledError(message, retry_after=error.retry_after) from None
    return protocol.tool_error_result(one_line(error))


def _unknown_tool_message(catalog: Catalog, name: str, session) -> str:
    known = next((tool for tool in catalog.all_tools() if tool.name == name), None)
    shown = name[:100]
    if known is None:
        return f"Unknown tool: {shown}."
    if not known.is_tool_fully_executed_on_server:
        return f"Unknown tool: {shown} is run by the agent's client, not by this server."
    # A server tool served_tools left out: without a session, one that needs a session; in one, one its mode lacks.
    if session is None:
        return f"Unknown tool: {shown} needs a session; connect to /mcp/sessions/<session id>/ to call it."
    return f"Unknown tool: {shown}. Mode {catalog.served(session.mode_id).key!r} of this session does not enable it."


def catalog_resources(catalog: Catalog) -> list[dict]:
    return [
        {
            "uri": CATALOG_URI, "name": "catalog", "title": "Mode catalog", "mimeType": "text/markdown",
            "description": "Every mode, built-in then custom, with when to use it, its tools and the totals.",
        },
        *(
            {
                "uri": f"{MODE_URI_PREFIX}{mode.key}", "name": mode.key, "title": mode.display_name,
                "description": mode.when_to_use, "mimeType": "application/json",
            }
            for mode in catalog.modes
        ),
    ]


def read_resource(catalog: Catalog, uri, *, version: str) -> dict:
    # SEP-2164: from 2026-07-28 an unknown resource is invalid params (-32602, HTTP 400); before, -32002.
    not_found = INVALID_PARAMS if version == protocol.STATELESS_VERSION else RESOURCE_NOT_FOUND
    if not isinstance(uri, str):
        raise JsonRpcError(INVALID_PARAMS, "resources/read needs the resource's uri, as a string.")
    if uri == CATALOG_URI:
        modes = catalog.find()
        return {"uri": uri, "mimeType": "text/markdown", "text": render_markdown(modes, catalog=modes)}
    if uri.startswith(MODE_URI_PREFIX):
        try:
            mode = catalog.mode(uri[len(MODE_URI_PREFIX):])
        except UnknownModeError as error:
            raise JsonRpcError(not_found, f"Resource not found: {error}", {"uri": uri[:200]}) from None
        return {"uri": uri, "mimeType": "application/json", "text": compact_json(mode_detail_payload(catalog, mode))}
    raise JsonRpcError(not_found, f"Resource not found: {uri[:200]!r}.", {"uri": uri[:200]})
