"""agent_change_mode: the only way a session's mode changes (TUL-007)."""

import logging

from django.conf import settings
from django.db import transaction

from accounts.services import OrganizationRemoved
from agent_tools.contract import AgentTool, InvokeResult, function_schema, load_arguments, reject_unknown_arguments
from agent_tools.registry import registry
from aptix_site.database import BUSY_RETRY_SECONDS, database_busy
from aptix_site.service_errors import RateLimited
from aptix_site.text import compact_json
from aptix_site.throttling import WindowRateThrottle
from modes.catalog import Catalog, UnknownModeError
from modes.graph import ModeSwitchRefused

from .confirmations import (
    DECLINED, STAYED, WAITING, confirmation_payload, pending_confirmation, record_answer, who_confirms
)
from .rollout_cohorts import judge_guard_if_due
from .services import ask_mode_change, set_session_mode

logger = logging.getLogger(__name__)

LABEL = "ModeChangeTool"
FAILED = f"{LABEL} failed to change the session mode."  # TUL-007 §3.6
REASON_MAX_LENGTH = 1000


# Under MODE_CHANGE_CONFIRMATION = "user" the server asks the user itself, so the model is told to propose by calling
# once, not to ask in chat first (or the person would be asked twice): TUL-007 §5.3's description, changed under "user"
# only. (TOOL_USAGE_METADATA, §5.2, is a registry field no answer serves; the description is what models read.)
DESCRIPTION_WHEN_THE_USER_CONFIRMS = (
    "Proposes changing the mode for the current agent session to the specified mode string; the user's client "
    "asks the user to confirm before anything changes. Call it once, without asking in chat first, and provide a "
    "short 'reason' describing why this mode fits the current request. Set branch=true to propose that the new work "
    "start as a separate session; the user's choice decides."
)
CANNOT_ASK = (
    f"{LABEL} needs the user's own confirmation for this change, and this client cannot ask the user: an MCP client "
    "that speaks protocol version 2026-07-28 and declares elicitation can, and so can the REST API "
    "(POST /api/tools/agent_change_mode/invoke/, then the session's confirmations). Nothing changed."
)


class ModeChangeTool(AgentTool):
    TOOL_NAME = "agent_change_mode"
    # TUL-007 §5.2.
    TOOL_USAGE_METADATA = (
        "Use this tool to change the current agent session mode, but only after the user "
        "has explicitly agreed to switch. First, propose a specific target mode and ask "
        "whether the user wants to (1) stay in the current mode, (2) switch this session "
        "to that mode, or (3) switch and start a new session. "
        "Call this tool only for options (2) or (3): use branch=false for switching the "
        "current session, and branch=true when the user wants to switch and start a new session."
    )
    always_available = True
    requires_session = True

    @staticmethod
    def get_schema() -> dict:
        # TUL-007 §5.3, or its words for a server that asks the user itself.
        description = (
            DESCRIPTION_WHEN_THE_USER_CONFIRMS if settings.MODE_CHANGE_CONFIRMATION == "user"
            else "Changes the mode for the current agent session to the specified mode string. "
            "Call only after the user confirms a mode change, and provide a short 'reason' describing why "
            "this mode fits the current request. Set branch=true when the user wants the new work to start "
            "as a separate session."
        )
        return function_schema(
            name=ModeChangeTool.TOOL_NAME,
            description=description,
            properties={
                "mode": {"type": "string", "description": "Key of the mode to switch to, e.g. ddr_authoring."},
                "branch": {
                    "type": "boolean",
                    "description": "false: switch this session; true: switch and start a new session.",
                },
                "reason": {
                    "type": "string",
                    "description": "Short explanation of why this mode fits the user's request.",
                },
            },
            required=("mode", "branch", "reason"),
        )

    def schema_for_session(self, *, mode_keys):
        # The model is shown the keys it may choose from (the mode graph's targets of the session's mode, the
        # mode itself included), so it neither invents one nor tries a switch the graph forbids.
        schema = self.get_schema()
        schema["parameters"]["properties"]["mode"]["enum"] = list(mode_keys)
        return schema

    def run(self, arguments_json, context):
        # The order of these checks and their messages are TUL-007 §3.4's.
        if arguments_json is None or not arguments_json.strip():
            return InvokeResult.from_error(f"{LABEL} requires a non-empty arguments object.")
        if context is None:
            return InvokeResult.from_error(f"{LABEL} requires a valid execution context.")
        if not context.session_id:
            logger.error("agent_change_mode called without a session id (user %s)", getattr(context.user, "pk", None))
            return InvokeResult.from_error(f"{LABEL} cannot change mode because the session id is missing.")
        arguments = load_arguments(arguments_json, empty_message=None, label=LABEL)
        mode, branch, reason = arguments.get("mode"), arguments.get("branch"), arguments.get("reason")
        if not isinstance(mode, str) or not mode.strip():
            return InvokeResult.from_error(f"{LABEL} requires a non-empty 'mode' string.")
        if not isinstance(branch, bool):
            return InvokeResult.from_error(f"{LABEL} requires a 'branch' boolean flag.")
        if not isinstance(reason, str) or not reason.strip():
            return InvokeResult.from_error(
                f"{LABEL} requires a non-empty 'reason' string explaining why the mode change is needed."
            )
        if len(reason) > REASON_MAX_LENGTH:
            return InvokeResult.from_error(f"{LABEL} accepts a 'reason' of at most {REASON_MAX_LENGTH} characters.")
        reject_unknown_arguments(arguments, allowed={"mode", "branch", "reason"}, label=LABEL)
        catalog = context.catalog
        try:
            target = catalog.mode(mode)
        except UnknownModeError as error:
            return InvokeResult.from_error(str(error))
        confirmed_by = who_confirms(target)
        if branch:
            # A question only looks: the answer that branches counts.
            _check_session_limit(context.user, count=confirmed_by != "user")
        if confirmed_by != "user":
            return change_mode(
                catalog=catalog, session_id=context.session_id, mode=target, reason=reason, user=context.user,
                branch=branch, confirmed_by=confirmed_by,
            )
        try:
            confirmation = ask_mode_change(
                catalog=catalog, session_id=context.session_id, mode=target, reason=reason, user=context.user,
                branch=branch, channel=context.confirmation_channel,
            )
        except ModeSwitchRefused as refusal:
            return InvokeResult.from_error(str(refusal))
        if confirmation is None:
            return InvokeResult.from_error(CANNOT_ASK)
        return InvokeResult.from_error(WAITING, confirmation=confirmation_payload(confirmation))


def answer_mode_change(
    *, catalog: Catalog, session_id, confirmation_id, user, choice: str, channel: str
) -> InvokeResult:
    """
    The user's answer, over channel, to a question agent_change_mode asked: TUL-007's result of the change they chose
    (their choice decides whether it branches), judged again now against catalog; STAYED for stay, decline or cancel.
    The answer is taken once (sessions_app.confirmations.pending_confirmation); a branch over the session-create limit
    raises RateLimited and leaves the question unanswered, as does a change refused or failed now.
    """
    result = _take_answer(
        catalog=catalog, session_id=session_id, confirmation_id=confirmation_id, user=user, choice=choice,
        channel=channel,
    )
    if choice in DECLINED:
        transaction.on_commit(judge_guard_if_due)  # a declined proposal feeds a rollout's guard (as a refusal does)
    return result


def _take_answer(*, catalog: Catalog, session_id, confirmation_id, user, choice: str, channel: str) -> InvokeResult:
    with transaction.atomic():
        confirmation = pending_confirmation(
            confirmation_id=confirmation_id, session_id=session_id, user=user, channel=channel
        )
        if choice == "branch":
            _check_session_limit(user, count=True)
        if choice not in ("switch", "branch"):
            record_answer(confirmation, choice)
            return InvokeResult.from_error(STAYED)
        target = catalog.by_id.get(confirmation.to_mode_id)
        if target is None:
            return InvokeResult.from_error(
                f"{LABEL} cannot switch: the proposed mode is no longer in the published catalog. Nothing changed."
            )
        result = change_mode(
            catalog=catalog, session_id=session_id, mode=target, reason=confirmation.reason, user=user,
            branch=choice == "branch", confirmed_by="user", confirmation=confirmation,
        )
        # The answer is taken with the change it made. A change refused or failed now leaves the question open, to be
        # answered again until it expires (a refusal by the mode graph is recorded, as any).
        if result.successful:
            record_answer(confirmation, choice)
        return result


def change_mode(
    *, catalog: Catalog, session_id, mode, reason: str, user, branch: bool, confirmed_by: str, confirmation=None
) -> InvokeResult:
    """set_session_mode, answered as TUL-007 §3.6 says: its result JSON, or the failure the model is told."""
    try:
        change = set_session_mode(
            catalog=catalog, session_id=session_id, mode=mode, reason=reason, user=user, branch=branch,
            confirmed_by=confirmed_by, confirmation=confirmation,
        )
    # UnknownModeError: a mode being removed; OrganizationRemoved: the user's organization, deleted meanwhile.
    except (ModeSwitchRefused, UnknownModeError, OrganizationRemoved) as refusal:
        return InvokeResult.from_error(str(refusal))
    except Exception as error:
        if database_busy(error):  # a lock held past its bound (DATABASE_LOCK_TIMEOUT_MS, SQLite's 20 s): passing
            logger.warning("agent_change_mode: the database was busy for session %s: %s", session_id, error)
            return InvokeResult.from_error(FAILED, retry_after=BUSY_RETRY_SECONDS)
        logger.exception("agent_change_mode: set_session_mode failed for session %s", session_id)
        return InvokeResult.from_error(FAILED, server_fault=True)

    # TUL-007 §3.6, but branch says what was done: the user's choice, where they confirmed, overrides the model's.
    result = {"success": True, "mode": mode.key, "branch": branch, "reason": reason}
    if change.branch_session_id is not None:
        result["branchSessionId"] = str(change.branch_session_id)
    return InvokeResult.create(compact_json(result))


def _check_session_limit(user, *, count: bool) -> None:
    """
    A branch starts a session: it counts against the user's limit on creating sessions (the counter of
    POST /api/sessions/); over it, RateLimited and nothing changes. count=False looks without counting.
    """
    throttle = WindowRateThrottle()
    allowed = throttle.allow_user if count else throttle.would_allow_user
    if not allowed(scope="session-create", user=user):
        raise RateLimited(
            f"{LABEL} cannot start a new session now (branch=true): you have created as many sessions as "
            f"{throttle.rate} allows.",
            retry_after=throttle.wait(),
        )


registry.register(ModeChangeTool)
