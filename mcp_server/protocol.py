"""
JSON-RPC 2.0 and the MCP messages this server answers, as plain data: the protocol versions it speaks,
the error codes, and the shapes of requests and results. Nothing here knows about modes or sessions.

Two versions are spoken: 2025-11-25, which opens with an `initialize` handshake, and 2026-07-28, which
is stateless: each request names its version in `_meta`, and `server/discover` replaces the handshake.
"""

import base64
from dataclasses import dataclass

HANDSHAKE_VERSION = "2025-11-25"
STATELESS_VERSION = "2026-07-28"
PROTOCOL_VERSIONS = (HANDSHAKE_VERSION, STATELESS_VERSION)
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
HEADER_MISMATCH = -32020
UNSUPPORTED_PROTOCOL_VERSION = -32022
# The HTTP status an error is sent with, as the SDK's own server does; any other code goes with 200.
ERROR_HTTP_STATUS = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}
# 2026-07-28 results of these say how long a client may keep them, and for whom.
CACHEABLE_METHODS = {"server/discover", "tools/list", "resources/list", "resources/read"}


class JsonRpcError(Exception):
    """A request this server answers with a JSON-RPC error object rather than a result."""

    def __init__(self, code: int, message: str, data=None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


@dataclass(frozen=True)
class Message:
    """One JSON-RPC message from a client: a request (it has an id) or a notification (it has none)."""

    method: str
    params: dict
    id: int | str | None
    is_notification: bool

    version: str


def read_message(body, *, headers) -> Message | None:
    """
    The message in a parsed request body; None for a client's response to us (we send no requests).
    headers are the request's: 2026-07-28 requests repeat their version, method and name there.
    """
    if isinstance(body, list):
        raise JsonRpcError(INVALID_REQUEST, "Batches are not supported: send one JSON-RPC message per request.")
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
    if "id" not in body:
        return Message(method=method, params=params, id=None, is_notification=True, version=version)
    request_id = request_id_of(body)
    if request_id is None:
        raise JsonRpcError(INVALID_REQUEST, 'A JSON-RPC request\'s "id" is a string or an integer.')
    return Message(method=method, params=params, id=request_id, is_notification=False, version=version)


def _asked_version(method: str, params: dict, headers) -> str:
    """
    The version a request asks for: 2026-07-28 names it in params._meta and repeats it, the method and the
    tool or resource in headers, which must agree (a gateway may act on the headers alone); 2025-11-25 sends
    the MCP-Protocol-Version header after its handshake.
    """
    header = headers.get("MCP-Protocol-Version")
    meta = params.get("_meta")
    asked = meta.get(VERSION_META) if isinstance(meta, dict) else None
    if asked is None:
        if header is None or header == HANDSHAKE_VERSION:
            return HANDSHAKE_VERSION
        if header == STATELESS_VERSION:
            raise JsonRpcError(HEADER_MISMATCH, f"A {STATELESS_VERSION} request names its version in params._meta too.")
        raise _unsupported(header)
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
            HEADER_MISMATCH, f"The {name} header must repeat the request's {expected[:100]!r}; it was {(value or '')[:100]!r}."
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
    # server/discover exists only in 2026-07-28, whatever the request said of its version.
    if message.version == STATELESS_VERSION or message.method == "server/discover":
        result = {**result, "resultType": "complete", "_meta": {SERVER_INFO_META: SERVER_INFO}}
        if message.method in CACHEABLE_METHODS:
            # What is listed depends on the caller's session and on the catalog, which admins edit at any time.
            result.update(ttlMs=0, cacheScope="private")
    return {"jsonrpc": "2.0", "id": message.id, "result": result}


def error_response(request_id, code: int, message: str, data=None) -> dict:
    error = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def initialize_result(message: Message, *, instructions: str) -> dict:
    return {
        # The one version spoken through a handshake; a client that asked for another may take it or leave.
        "protocolVersion": HANDSHAKE_VERSION,
        "capabilities": CAPABILITIES,
        "serverInfo": SERVER_INFO,
        "instructions": instructions,
    }


def discover_result(*, instructions: str) -> dict:
    # Only 2026-07-28 is reached through discover; 2025-11-25 clients send initialize instead.
    return {"supportedVersions": [STATELESS_VERSION], "capabilities": CAPABILITIES, "instructions": instructions}


def text_result(payload_json: str, payload: dict) -> dict:
    """A tool's successful result: its JSON as text, and the same object as structured content."""
    return {"content": [{"type": "text", "text": payload_json}], "structuredContent": payload, "isError": False}


def tool_error_result(message: str) -> dict:
    """A failure the tool reports: the model sees the message and may try again."""
    return {"content": [{"type": "text", "text": message}], "isError": True}
