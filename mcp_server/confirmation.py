"""
Asking the user to confirm a mode change over MCP (issue 40), in 2026-07-28's multi-round-trip shapes: the question
as an `input_required` result carrying one `elicitation/create` form request and a signed `requestState`; the
client's retry read back into the answer sessions_app.tools.answer_mode_change takes. Nothing here decides: the
services ask and take the answer once (the ModeChangeConfirmation row); this module only translates and signs.

`requestState` comes back from the client, so it is attacker-controlled: it is signed with the server's key (a salt
of its own), bound to the user, the session and the call's name and arguments, and good until its question expires
(the instant it carries, judged as the row's). What it names is only the question's row; that the answer is taken
once is the row's to say, across workers and hosts alike.
"""

import hashlib
import json
from datetime import datetime

from django.core import signing

from sessions_app.confirmations import CHOICES, has_expired

from .protocol import INVALID_PARAMS, STATELESS_VERSION, JsonRpcError, Message

CLIENT_CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
INPUT_KEY = "confirm"
SALT = "mcp_server.confirmation.request-state"
# A refused requestState is the request's error, not the tool's: the client sent params this server cannot take
# (as the SDK's own server answers one, -32602), and no tool ran; the model never sees the state, so a tool error
# would tell it nothing it could act on. Nothing changes, and the question may still be answered with its own state.
INVALID_STATE = (
    "This requestState {why}; nothing changed. Answer the question with the state it came with, or call "
    "agent_change_mode again to ask anew."
)


def can_ask(message: Message) -> bool:
    """
    Whether this request's client can put a question to the user: 2026-07-28 (only it has input_required, and the
    server holds no stream open for older versions' server-to-client requests) with form elicitation declared in
    the request's _meta. An elicitation capability naming neither mode is form, as the specification reads it.
    """
    if message.version != STATELESS_VERSION:
        return False
    meta = message.params.get("_meta")
    capabilities = meta.get(CLIENT_CAPABILITIES_META) if isinstance(meta, dict) else None
    elicitation = capabilities.get("elicitation") if isinstance(capabilities, dict) else None
    if not isinstance(elicitation, dict):
        return False
    return "form" in elicitation or "url" not in elicitation


def is_answer(message: Message) -> bool:
    """
    A 2026-07-28 retry carrying the user's answer; in older versions these fields are not MCP's, and ignored. A field
    sent as null is absent, as clients write optional fields.
    """
    params = message.params
    answers = params.get("requestState") is not None or params.get("inputResponses") is not None
    return message.version == STATELESS_VERSION and answers


def input_required(confirmation: dict, *, user, session, name: str, arguments: dict) -> dict:
    """The input_required result that asks confirmation's question (sessions_app.confirmations.confirmation_payload)."""
    claims = {"c": confirmation["id"], "u": user.pk, "s": str(session.pk), "a": _digest(name, arguments)}
    # The question's own expiry, to the microsecond: the signature's time is in whole seconds, and a few milliseconds
    # after the row's, so a state timed by it expired up to a second before its question, or just after.
    state = signing.dumps({**claims, "e": confirmation["expires_at"].isoformat()}, salt=SALT, compress=True)
    question = {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": confirmation["question"],
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "choice": {
                        "type": "string", "title": "Your choice", "enum": list(CHOICES),
                        "description": "stay: stay in the current mode; switch: switch this session; branch: switch "
                        "and start a new session for this work.",
                    }
                },
                "required": ["choice"],
            },
        },
    }
    return {"resultType": "input_required", "inputRequests": {INPUT_KEY: question}, "requestState": state}


def read_answer(params: dict, *, user, session, name: str, arguments: dict) -> tuple[str, str]:
    """
    The confirmation id and the user's choice a retry carries: stay, switch or branch, or decline or cancel for the
    elicitation's other actions. JsonRpcError (INVALID_PARAMS) for a state that is tampered with, expired, another
    user's, session's or call's, or an answer that is not one; nothing has run then.
    """
    state = params.get("requestState")
    if not isinstance(state, str):
        raise JsonRpcError(INVALID_PARAMS, INVALID_STATE.format(why="is missing: an answer comes with its question's"))
    try:
        claims = signing.loads(state, salt=SALT)
    except signing.BadSignature:
        raise JsonRpcError(INVALID_PARAMS, INVALID_STATE.format(why="is not one this server issued")) from None
    if isinstance(claims, dict) and _expired(claims.get("e")):
        raise JsonRpcError(INVALID_PARAMS, INVALID_STATE.format(why="has expired"))
    bound = {"u": user.pk, "s": str(session.pk) if session else None, "a": _digest(name, arguments)}
    if not isinstance(claims, dict) or any(claims.get(key) != value for key, value in bound.items()):
        raise JsonRpcError(
            INVALID_PARAMS, INVALID_STATE.format(why="was issued for another user, session or call")
        )
    return str(claims.get("c")), _choice(params.get("inputResponses"))


def _expired(expires_at) -> bool:
    """Whether the question of a state's expiry (its "e") is past answering; a state without one, issued before states
    carried it, is taken as expired: the client asks anew."""
    try:
        return has_expired(expires_at=datetime.fromisoformat(expires_at))
    except (TypeError, ValueError):
        return True


def _choice(responses) -> str:
    response = responses.get(INPUT_KEY) if isinstance(responses, dict) else None
    action = response.get("action") if isinstance(response, dict) else None
    if action in ("decline", "cancel"):
        return action
    content = response.get("content") if action == "accept" else None
    choice = content.get("choice") if isinstance(content, dict) else None
    if choice not in CHOICES:
        raise JsonRpcError(
            INVALID_PARAMS,
            f'inputResponses.{INPUT_KEY} answers the question: "action" accept with "content": {{"choice": one of '
            f'{", ".join(CHOICES)}}}, or "action" decline or cancel. Nothing changed.',
        )
    return choice


def _digest(name: str, arguments: dict) -> str:
    """The call a state is bound to: its tool and its arguments, whatever order their keys come in."""
    canonical = json.dumps({"name": name, "arguments": arguments}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()
