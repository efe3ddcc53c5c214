"""The agent tool contract of TUL-011: the AgentTool base class, InvokeResult and the context every tool receives."""

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from aptix_site.service_errors import RateLimited
from aptix_site.text import DuplicateKey, refuse_duplicate_keys, unstorable_text

logger = logging.getLogger(__name__)

# TUL-011 §2: what a tool may be called, whether registered in code or declared by an admin. \A and \Z rather
# than ^ and $: "$" would let a trailing newline through in Python, and PostgreSQL reads \A and \Z alike.
TOOL_NAME_CHARACTERS = "[a-zA-Z0-9_-]{1,64}"
TOOL_NAME_PATTERN = rf"\A{TOOL_NAME_CHARACTERS}\Z"


@dataclass(frozen=True)
class InvokeResult:
    successful: bool
    result: str | None = None
    error_message: str | None = None
    # Beyond TUL-011: whether a failure is the server's fault (HTTP 500) rather than the caller's (HTTP 400), and
    # whether it is a passing one: the same call may succeed after retry_after seconds (HTTP 503).
    server_fault: bool = False
    retry_after: int | None = None
    # A question the user must answer before the tool acts (agent_change_mode under MODE_CHANGE_CONFIRMATION "user").
    confirmation: dict | None = None

    @classmethod
    def create(cls, json_text: str) -> "InvokeResult":
        return cls(successful=True, result=json_text)

    @classmethod
    def from_error(
        cls, message: str, *, server_fault: bool = False, retry_after: int | None = None,
        confirmation: dict | None = None,
    ) -> "InvokeResult":
        return cls(
            successful=False, error_message=message, server_fault=server_fault, retry_after=retry_after,
            confirmation=confirmation,
        )


@dataclass(frozen=True)
class AgentToolExecutionContext:
    """
    What a tool knows of its call. The caller's organization and the catalog it is served (from the modes app, which
    this floor does not import) are read once each, if asked for: a tool meets a database failure itself (TUL-010).
    """

    user: Any
    session_id: str | None
    conversation_id: str | None
    # How the user can be asked to confirm what a tool would do ("rest" or "mcp"); None: this caller cannot ask them.
    confirmation_channel: str | None = None
    load_org: Callable[[], Any] = field(default=lambda: None, repr=False, compare=False)
    load_catalog: Callable[[], Any] = field(default=lambda: None, repr=False, compare=False)

    @cached_property
    def org(self) -> Any:
        return self.load_org()

    @cached_property
    def catalog(self) -> Any:
        return self.load_catalog()


@dataclass(frozen=True)
class ClientTool:
    """A tool the agent's client executes (TUL-011's is_tool_fully_executed_on_server = false), declared by an admin."""

    name: str
    description: str
    parameters: dict
    read_only: bool = False

    is_tool_fully_executed_on_server = False
    always_available = False
    requires_session = False

    def get_schema(self) -> dict:
        return {"type": "function", "name": self.name, "description": self.description, "parameters": self.parameters}

    def schema_for_session(self, *, mode_keys: tuple[str, ...]) -> dict:
        return self.get_schema()

    def annotations(self) -> dict:
        # What else the client's tool does (destroys, reaches the outside world) is not known here.
        return {"readOnlyHint": self.read_only}


class ToolArgumentError(Exception):
    """Arguments a tool refuses; the message is shown to the caller as it is."""


class AgentTool:
    """
    Subclasses define, on the class itself, TOOL_NAME, TOOL_USAGE_METADATA, a static get_schema() and run().
    execute() raises nothing but RateLimited: a limit the call spent, with nothing done.
    """

    TOOL_NAME = ""
    TOOL_USAGE_METADATA = ""
    is_tool_fully_executed_on_server = True
    # TUL-007 §3.1: some tools are offered whatever the session's mode.
    always_available = False
    # A tool that only reads: MCP clients may call it without asking the user first.
    read_only = False
    # A tool that works on a session (its context's session_id): served only where a session is known.
    requires_session = False

    @property
    def name(self) -> str:
        return self.TOOL_NAME

    @staticmethod
    def get_schema() -> dict:
        raise NotImplementedError

    def schema_for_session(self, *, mode_keys: tuple[str, ...]) -> dict:
        """The schema a session's model is given, where mode_keys are the modes the session may switch to."""
        return self.get_schema()

    def annotations(self) -> dict:
        """MCP's hints about what the tool does; every server tool here works on this service's data only."""
        return {
            "readOnlyHint": self.read_only,
            "destructiveHint": False,
            "idempotentHint": self.read_only,
            "openWorldHint": False,
        }

    def run(self, arguments_json: str | None, context: AgentToolExecutionContext) -> InvokeResult:
        raise NotImplementedError

    def execute(self, arguments_json: str | None, context: AgentToolExecutionContext) -> InvokeResult:
        try:
            return self.run(arguments_json, context)
        except ToolArgumentError as error:
            return InvokeResult.from_error(str(error))
        except RateLimited:
            raise  # the way of serving answers it as the limit it is (429 over HTTP)
        except Exception:
            logger.exception("agent tool %s failed unexpectedly", self.TOOL_NAME)
            return InvokeResult.from_error(f"{self.TOOL_NAME} failed unexpectedly.", server_fault=True)


def function_schema(*, name: str, description: str, properties: dict, required: tuple[str, ...] = ()) -> dict:
    """A tool's TUL-011 schema: its parameters are an object of these properties, and of no others."""
    parameters = {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}
    return {"type": "function", "name": name, "description": description, "parameters": parameters}


def load_arguments(arguments_json: str | None, *, empty_message: str | None, label: str) -> dict:
    """The arguments as a dict; empty_message=None means no arguments is the same as {}."""
    if arguments_json is None or not arguments_json.strip():
        if empty_message is not None:
            raise ToolArgumentError(empty_message)
        return {}
    try:
        arguments = json.loads(arguments_json, object_pairs_hook=refuse_duplicate_keys)
    except DuplicateKey as error:
        raise ToolArgumentError(f"{label} arguments must not give a key twice: {error}.") from None
    except (ValueError, RecursionError):
        raise ToolArgumentError(f"{label} arguments must be a JSON object.") from None
    if not isinstance(arguments, dict):
        raise ToolArgumentError(f"{label} arguments must be a JSON object.")
    if problem := unstorable_text(arguments):
        raise ToolArgumentError(f"{label} arguments must not contain {problem}.")
    return arguments


def reject_unknown_arguments(arguments: dict, *, allowed: set[str], label: str) -> None:
    if unknown := sorted(set(arguments) - allowed):
        raise ToolArgumentError(
            f"{label} does not accept {', '.join(repr(name) for name in unknown)}; "
            f"its arguments are {', '.join(sorted(allowed))}."
        )
