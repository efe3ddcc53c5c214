"""
JSON-RPC 2.0 and the MCP messages this server answers, as plain data: the protocol versions it speaks,
the error codes, and the shapes of requests and results. Nothing here knows about modes or sessions.

Four versions are spoken. 2025-03-26, 2025-06-18 and 2025-11-25 open with an `initialize` handshake, which
settles the version; 2026-07-28 is stateless: each request names its version in `_meta`, and `server/discover`
replaces the handshake. Each request is answered in its version's shapes and HTTP statuses: before 2026-07-28, a
JSON-RPC answer to a message the server could read is HTTP 200, errors included, as the `mcp` SDK's own server
sends it (its 1.x clients take any other status for a broken transport); 2026-07-28 gives errors the statuses of
its table (ERROR_HTTP_STATUS).
"""

import base64
from dataclasses import dataclass

from django.conf import settings

from aptix_site.text import compact_json

# Oldest first. 2024-11-05 is not among them: its HTTP transport (an SSE stream and a POST endpoint) is not this one.
HANDSHAKE_VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")
STATELESS_VERSION = "2026-07-28"
PROTOCOL_VERSIONS = (*HANDSHAKE_VERSIONS, STATELESS_VERSION)
# A request without the MCP-Protocol-Version header, which 2025-06-18 introduced, is in the version before it: the
# 2025-06-18 transport's rule for a server that, like this stateless one, keeps no record of the handshake.
UNDECLARED_VERSION = "2025-03-26"
# The one version whose clients may send JSON-RPC batches (2025-06-18 removed them).
BATCH_VERSION = "2025-03-26"
# structuredContent, and the title of tools, resources and the server's info, came with this version.
TITLES_AND_STRUCTURED_CONTENT_SINCE = "2025-06-18"
VERSION_META = "io.modelcontextprotocol/protocolVersion"
SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"
SERVER_INFO = {"name": "aptix-modes", "title": "Aptix Modes", "version": "1.0.0"}
CAPABILITIES = {"tools": {"listChanged": False}, "resources": {"listChanged": False, "subscribe": False}}

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002
# No MCP version has a code for a throttled request; -32000 opens JSON-RPC's range for servers' own errors.
THROTTLED = -32000
HEADER_MISMATCH = -32020
UNSUPPORTED_PROTOCOL_VERSION = -32022
# The HTTP status a 2026-07-28 error is sent with, as the SDK's own server does, and of a message that could not be
# read in any version; any other code goes with 200.
ERROR_HTTP_STATUS = {
    PARSE_ERROR: 400, INVALID_REQUEST: 400, INVALID_PARAMS: 400, METHOD_NOT_FOUND: 404,
    HEADER_MISMATCH: 400, UNSUPPORTED_PROTOCOL_VERSION: 400, THROTTLED: 429,
}
# 2026-07-28 results of these say how long a client may keep them, and for whom.
CACHEABLE_METHODS = {"server/discover", "tools/list", "resources/list", "resources/templates/list", "resources/read"}


class JsonRpcError(Exception):
    """A request this server answers with a JSON-RPC error object rather than a result."""

    def __init__(self, code: int, message: str, data=None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data

    def reply(self, request_id) -> dict:
        error = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return {"jsonrpc": "2.0", "id": request_id, "error": error}


class ThrottledError(JsonRpcError):
    """A request refused for a limit the caller has spent; it may be sent again after retry_after seconds."""

    def __init__(self, message: str, *, retry_after: int):
        super().__init__(THROTTLED, message, {"retryAfter": retry_after})
        self.retry_after = retry_after


@dataclass(frozen=True)
class Message:
    """One JSON-RPC message from a client: a request (it has an id) or a notification (id None)."""

    method: str
    params: dict
    id: int | str | None
    version: str


def read_message(body, *, headers) -> Message | None:
    """
    The message in a parsed request body or batch element, with the version it and the request's headers give
    (_asked_version); None for a client's response to us (we send no requests); JsonRpcError if it cannot be read.
    """
    if isinstance(body, list):  # a batch where batches are not spoken, or one inside a batch
        raise _no_batches(headers)
    if not isinstance(body, dict) or body.get("jsonrpc") != "2.0":
        raise JsonRpcError(INVALID_REQUEST, 'A JSON-RPC 2.0 message is an object with "jsonrpc": "2.0".')
    if "method" not in body and ("result" in body or "error" in body):
        return None
    method, params = body.get("method"), body.get("params", {})
    if not isinstance(method, str) or not method:
        raise JsonRpcError(INVALID_REQUEST, 'A JSON-RPC request names its "method" as a string.')
    if not isinstance(params, dict):
        raise JsonRpcError(INVALID_PARAMS, f'The "params" of {method} must be an object.')
    version = _asked_version(method, params, headers)
    request_id = request_id_of(body)
    if request_id is None and "id" in body:
        raise JsonRpcError(INVALID_REQUEST, 'A JSON-RPC request\'s "id" is a string or an integer.')
    return Message(method=method, params=params, id=request_id, version=version)


def batch_elements(body: list, *, headers) -> list:
    """A batch's elements, to read one by one, in the one version that has batches; else JsonRpcError."""
    if headers.get("MCP-Protocol-Version", UNDECLARED_VERSION) != BATCH_VERSION:
        raise _no_batches(headers)
    if not body:
        raise JsonRpcError(INVALID_REQUEST, "An empty batch holds no message.")
    if len(body) > (limit := settings.MCP_MAX_BATCH):  # refused whole: nothing of it runs
        raise JsonRpcError(
            INVALID_REQUEST,
            f"A batch holds at most {limit} messages (MCP_MAX_BATCH); this one holds {len(body)}. "
            f"Send them in batches of {limit} or fewer.",
        )
    return body


def check_response_size(reply: dict, *, used: int = 0) -> None:
    """
    JsonRpcError if reply, with the used bytes of the request's answers before it, would pass MCP_MAX_RESPONSE_BYTES:
    no request makes the server build and send an answer without bound.
    """
    size, limit = response_size(reply), settings.MCP_MAX_RESPONSE_BYTES
    if used + size > limit:
        raise JsonRpcError(
            INVALID_REQUEST,
            f"The answer would be {used + size} bytes, over the limit of {limit} bytes (MCP_MAX_RESPONSE_BYTES); "
            "ask for less, or send it in a request of its own.",
        )


def check_room_left(used: int) -> None:
    """
    JsonRpcError, before it runs, for a call whose answer must be sent whole (it may change something) if the used
    bytes of the answers before it in its batch leave no room under MCP_MAX_RESPONSE_BYTES.
    """
    limit = settings.MCP_MAX_RESPONSE_BYTES
    if used >= limit:
        raise JsonRpcError(
            INVALID_REQUEST,
            f"The answers before this call are {used} bytes, at the limit of {limit} bytes (MCP_MAX_RESPONSE_BYTES), "
            "so it was not run: send it in a request of its own.",
        )


def response_size(reply: dict) -> int:
    return len(compact_json(reply).encode())


def _no_batches(headers) -> JsonRpcError:
    version = str(headers.get("MCP-Protocol-Version", UNDECLARED_VERSION))[:40]
    return JsonRpcError(
        INVALID_REQUEST,
        f"Batches are not supported in protocol version {version}, nor inside a batch: send one JSON-RPC message "
        "per request.",
    )


def _asked_version(method: str, params: dict, headers) -> str:
    """
    The version a request is answered in. 2026-07-28 names it in params._meta and repeats it, the method and the
    tool or resource in headers, which must agree (a gateway may act on the headers alone). The other versions
    send the version the handshake settled in the MCP-Protocol-Version header, from 2025-06-18 on; initialize
    settles it, in the version the client asks for if the server speaks it, else in the server's newest.
    """
    header = headers.get("MCP-Protocol-Version")
    meta = params.get("_meta")
    asked = meta.get(VERSION_META) if isinstance(meta, dict) else None
    if asked is None:
        if header == STATELESS_VERSION:
            raise JsonRpcError(HEADER_MISMATCH, f"A {STATELESS_VERSION} request names its version in params._meta too.")
        if header is not None and header not in HANDSHAKE_VERSIONS:
            raise _unsupported(header)
        if method == "initialize":
            offered = params.get("protocolVersion")
            return offered if offered in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
        return header or UNDECLARED_VERSION
    if not isinstance(asked, str):
        raise JsonRpcError(INVALID_PARAMS, f"params._meta's {VERSION_META} must be a string.")
    if asked not in PROTOCOL_VERSIONS:
        raise _unsupported(asked)
    _require_header(headers, "MCP-Protocol-Version", asked)
    if asked == STATELESS_VERSION:
        _require_header(headers, "Mcp-Method", method)
        named = params.get("uri") if method == "resources/read" else params.get("name")
        if method in ("tools/call", "resources/read") and isinstance(named, str):
            _require_header(headers, "Mcp-Name", named)
    return asked


def _require_header(headers, name: str, expected: str) -> None:
    value = headers.get(name)
    if value is not None and value.startswith("=?base64?") and value.endswith("?="):
        # How the SDK sends a value that is not printable ASCII.
        try:
            value = base64.b64decode(value[len("=?base64?"):-2], validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            pass
    if value != expected:
        raise JsonRpcError(
            HEADER_MISMATCH,
            f"The {name} header must repeat the request's {expected[:100]!r}; it was {(value or '')[:100]!r}.",
        )


def _unsupported(version) -> JsonRpcError:
    shown = str(version)[:40]
    return JsonRpcError(
        UNSUPPORTED_PROTOCOL_VERSION,
        f"Protocol version {shown!r} is not supported; this server speaks {', '.join(PROTOCOL_VERSIONS)}.",
        {"supported": list(PROTOCOL_VERSIONS), "requested": shown},
    )


def request_id_of(body):
    """The id to answer an error with: the request's, if it has a valid one; null otherwise."""
    request_id = body.get("id") if isinstance(body, dict) else None
    return request_id if isinstance(request_id, (int, str)) and not isinstance(request_id, bool) else None


def result_response(message: Message, result: dict) -> dict:
    """The response to a request, its result in the shapes of the request's version."""
    # server/discover exists only in 2026-07-28, whatever the request said of its version.
    if message.version == STATELESS_VERSION or message.method == "server/discover":
        # A result that is not final (input_required: mcp_server.confirmation) says so itself.
        result = {"resultType": "complete", **result, "_meta": {SERVER_INFO_META: SERVER_INFO}}
        if message.method in CACHEABLE_METHODS:
            # What is listed depends on the caller's session and on the catalog, which admins edit at any time.
            result.update(ttlMs=0, cacheScope="private")
    elif PROTOCOL_VERSIONS.index(message.version) < PROTOCOL_VERSIONS.index(TITLES_AND_STRUCTURED_CONTENT_SINCE):
        result = _without_titles_and_structured_content(result)
    return {"jsonrpc": "2.0", "id": message.id, "result": result}


def _without_titles_and_structured_content(result: dict) -> dict:
    """A result as a version before 2025-06-18 has it: no structuredContent, and nothing listed has a title."""
    shaped = _without(result, "structuredContent")
    if "serverInfo" in shaped:
        shaped["serverInfo"] = _without(shaped["serverInfo"], "title")
    for listing in ("tools", "resources", "resourceTemplates"):
        if listing in shaped:
            shaped[listing] = [_without(item, "title") for item in shaped[listing]]
    return shaped


def _without(item: dict, key: str) -> dict:
    return {name: value for name, value in item.items() if name != key}


def text_result(payload_json: str, payload: dict, *, more_text: tuple[str, ...] = ()) -> dict:
    """A tool's successful result: its JSON as text and as structured content; then more_text for the model."""
    content = [{"type": "text", "text": text} for text in (payload_json, *more_text)]
    return {"content": content, "structuredContent": payload, "isError": False}


def tool_error_result(message: str) -> dict:
    """A failure the tool reports: the model sees the message and may try again."""
    return {"content": [{"type": "text", "text": message}], "isError": True}
