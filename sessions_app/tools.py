"""agent_change_mode: the only way a session's mode changes (TUL-007)."""

import logging

from agent_tools.contract import AgentTool, InvokeResult, function_schema, load_arguments, reject_unknown_arguments
from agent_tools.registry import registry
from aptix_site.database import BUSY_RETRY_SECONDS, database_busy
from aptix_site.service_errors import RateLimited
from aptix_site.text import compact_json
from aptix_site.throttling import WindowRateThrottle
from modes.catalog import UnknownModeError
from modes.graph import ModeSwitchRefused

from .services import set_session_mode

logger = logging.getLogger(__name__)

LABEL = "ModeChangeTool"
FAILED = f"{LABEL} failed to change the session mode."  # TUL-007 §3.6
REASON_MAX_LENGTH = 1000


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
        return function_schema(
            name=ModeChangeTool.TOOL_NAME,
            # TUL-007 §5.3.
            description="Changes the mode for the current agent session to the specified mode string. "
            "Call only after the user confirms a mode change, and provide a short 'reason' describing why "
            "this mode fits the current request. Set branch=true when the user wants the new work to start "
            "as a separate session.",
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
        if branch:
            # A branch starts a session: it counts against the user's limit on creating sessions (the counter of
            # POST /api/sessions/); over it, nothing changes.
            throttle = WindowRateThrottle()
            if not throttle.allow_user(scope="session-create", user=context.user):
                raise RateLimited(
                    f"{LABEL} cannot start a new session now (branch=true): you have created as many sessions as "
                    f"{throttle.rate} allows.",
                    retry_after=throttle.wait(),
                )

        try:
            change = set_session_mode(
                catalog=catalog, session_id=context.session_id, mode=target, reason=reason, user=context.user,
                branch=branch,
            )
        except (ModeSwitchRefused, UnknownModeError) as refusal:  # UnknownModeError: a mode being removed
            return InvokeResult.from_error(str(refusal))
        except Exception as error:
            if database_busy(error):  # a row lock held past DATABASE_LOCK_TIMEOUT_MS: passing, not a fault
                logger.warning("agent_change_mode: the database was busy for session %s: %s", context.session_id, error)
                return InvokeResult.from_error(FAILED, retry_after=BUSY_RETRY_SECONDS)
            logger.exception("agent_change_mode: set_session_mode failed for session %s", context.session_id)
            return InvokeResult.from_error(FAILED, server_fault=True)

        result = {"success": True, "mode": mode, "branch": branch, "reason": reason}
        if change.branch_session_id is not None:
            result["branchSessionId"] = str(change.branch_session_id)
        return InvokeResult.create(compact_json(result))


registry.register(ModeChangeTool)
