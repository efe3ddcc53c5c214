"""agent_change_mode, to the letter of TUL-007."""

import json
import logging
import uuid

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.utils import timezone

from accounts.tokens import create_token
from agent_tools.contract import AgentToolExecutionContext
from agent_tools.registry import ToolRegistry, registry
from modes.catalog import published_catalog
from modes.models import AgentMode
from sessions_app.models import AgentSession, ModeChange
from sessions_app.tools import ModeChangeTool

from ..expected import CHANGE_MODE_SCHEMA, CHANGE_MODE_USAGE_METADATA, DDR_ID, GENERAL_ID, WORKFLOW_ID

pytestmark = pytest.mark.django_db

NO_ARGUMENTS = "ModeChangeTool requires a non-empty arguments object."
NO_CONTEXT = "ModeChangeTool requires a valid execution context."
NO_SESSION = "ModeChangeTool cannot change mode because the session id is missing."
NO_MODE = "ModeChangeTool requires a non-empty 'mode' string."
NO_BRANCH = "ModeChangeTool requires a 'branch' boolean flag."
NO_REASON = "ModeChangeTool requires a non-empty 'reason' string explaining why the mode change is needed."
FAILED = "ModeChangeTool failed to change the session mode."

VALID = {"mode": "ddr_authoring", "branch": False, "reason": "The user wants to write a DDR."}


def context_for(session, *, user=None, session_id="from-session", conversation_id="conv-1"):
    owner = user or session.owner
    return AgentToolExecutionContext(
        user=owner,
        session_id=str(session.pk) if session_id == "from-session" else session_id,
        conversation_id=conversation_id,
        load_catalog=published_catalog,
    )


def run(arguments, context):
    arguments_json = arguments if arguments is None or isinstance(arguments, str) else json.dumps(arguments)
    return ModeChangeTool().execute(arguments_json, context)


@pytest.fixture
def unchanged(alice_session):
    """Asserts, after the test, that nothing was changed: mode, audit rows, sessions."""
    sessions_before = AgentSession.objects.count()
    yield
    assert AgentSession.objects.get(pk=alice_session.pk).mode_id == GENERAL_ID
    assert ModeChange.objects.count() == 0
    assert AgentSession.objects.count() == sessions_before


# --- Identity, schema, usage metadata --------------------------------------------------------------------


def test_identity_and_registration():
    assert ModeChangeTool.TOOL_NAME == "agent_change_mode"
    assert ModeChangeTool().name == "agent_change_mode"
    assert ModeChangeTool.is_tool_fully_executed_on_server is True
    ToolRegistry().register(ModeChangeTool)
    assert type(registry.get("agent_change_mode")) is ModeChangeTool


def test_usage_metadata_is_section_5_2_verbatim():
    assert ModeChangeTool.TOOL_USAGE_METADATA == CHANGE_MODE_USAGE_METADATA


def test_schema_description_is_section_5_3_verbatim():
    assert ModeChangeTool.get_schema()["description"] == CHANGE_MODE_SCHEMA["description"]


def test_schema_requires_mode_string_branch_boolean_and_reason_string_and_nothing_else():
    parameters = ModeChangeTool.get_schema()["parameters"]
    assert parameters["type"] == "object"
    assert sorted(parameters["required"]) == ["branch", "mode", "reason"]
    assert {name: spec["type"] for name, spec in parameters["properties"].items()} == {
        "mode": "string",
        "branch": "boolean",
        "reason": "string",
    }
    for forbidden in ("sessionId", "session_id", "org", "user"):
        assert forbidden not in parameters["properties"]


# --- §3.4 validation, in order, with the exact messages -------------------------------------------------


@pytest.mark.parametrize("arguments", [None, "", "   ", "\n\t"], ids=["none", "empty", "spaces", "newline-tab"])
def test_null_or_whitespace_arguments_are_refused_first(alice_session, unchanged, arguments):
    result = run(arguments, context_for(alice_session))
    assert (result.successful, result.result, result.error_message) == (False, None, NO_ARGUMENTS)


def test_arguments_are_checked_before_the_context():
    assert run(None, None).error_message == NO_ARGUMENTS


def test_a_missing_context_is_refused(unchanged):
    result = run(VALID, None)
    assert (result.successful, result.error_message) == (False, NO_CONTEXT)


@pytest.mark.parametrize("session_id", [None, ""], ids=["none", "empty"])
def test_a_missing_session_id_is_refused_and_logged_as_an_error(alice_session, unchanged, caplog, session_id):
    with caplog.at_level(logging.ERROR, logger="sessions_app"):
        result = run(VALID, context_for(alice_session, session_id=session_id))

    assert (result.successful, result.error_message) == (False, NO_SESSION)
    records = [record for record in caplog.records if record.name == "sessions_app.tools"]
    assert len(records) == 1
    assert records[0].levelno == logging.ERROR
    assert "session id" in records[0].getMessage()


def test_the_session_id_is_checked_before_the_arguments_content(alice_session):
    assert run({}, context_for(alice_session, session_id=None)).error_message == NO_SESSION


@pytest.mark.parametrize(
    "arguments",
    [
        {"branch": False, "reason": "Because."},
        {"mode": "", "branch": False, "reason": "Because."},
        {"mode": "   ", "branch": False, "reason": "Because."},
        {"mode": None, "branch": False, "reason": "Because."},
        {"mode": 5, "branch": False, "reason": "Because."},
        {"mode": ["ddr_authoring"], "branch": False, "reason": "Because."},
        {},
        {"reason": ""},
    ],
    ids=["missing", "empty", "blank", "null", "number", "list", "empty-object", "everything-missing"],
)
def test_a_missing_empty_or_non_string_mode_is_refused(alice_session, unchanged, arguments):
    result = run(arguments, context_for(alice_session))
    assert (result.successful, result.error_message) == (False, NO_MODE)


@pytest.mark.parametrize(
    "arguments",
    [
        {"mode": "ddr_authoring", "reason": "Because."},
        {"mode": "ddr_authoring", "branch": None, "reason": "Because."},
        {"mode": "ddr_authoring", "branch": "yes", "reason": "Because."},
        {"mode": "ddr_authoring", "branch": "false", "reason": "Because."},
        {"mode": "ddr_authoring", "branch": 0, "reason": "Because."},
        {"mode": "ddr_authoring", "branch": 1, "reason": "Because."},
        {"mode": "ddr_authoring"},
    ],
    ids=["missing", "null", "yes", "string-false", "zero", "one", "reason-missing-too"],
)
def test_a_missing_or_non_boolean_branch_is_refused(alice_session, unchanged, arguments):
    result = run(arguments, context_for(alice_session))
    assert (result.successful, result.error_message) == (False, NO_BRANCH)


@pytest.mark.parametrize(
    "arguments",
    [
        {"mode": "ddr_authoring", "branch": False},
        {"mode": "ddr_authoring", "branch": False, "reason": ""},
        {"mode": "ddr_authoring", "branch": False, "reason": "   "},
        {"mode": "ddr_authoring", "branch": False, "reason": None},
        {"mode": "ddr_authoring", "branch": True, "reason": 42},
    ],
    ids=["missing", "empty", "blank", "null", "number"],
)
def test_a_missing_empty_or_non_string_reason_is_refused(alice_session, unchanged, arguments):
    result = run(arguments, context_for(alice_session))
    assert (result.successful, result.error_message) == (False, NO_REASON)


@pytest.mark.parametrize("arguments_json", ["not json", "[1, 2, 3]", '"ddr_authoring"', "{"], ids=str)
def test_arguments_that_are_not_a_json_object_are_refused(alice_session, unchanged, arguments_json):
    result = run(arguments_json, context_for(alice_session))
    assert result.successful is False
    assert result.error_message == "ModeChangeTool arguments must be a JSON object."
    assert result.server_fault is False


@pytest.mark.parametrize("extra", ["sessionId", "org", "user"])
def test_session_org_and_user_are_never_accepted_in_the_arguments(alice_session, bob_session, unchanged, extra):
    arguments = {**VALID, extra: str(bob_session.pk)}
    result = run(arguments, context_for(alice_session))
    assert result.successful is False
    assert f"'{extra}'" in result.error_message
    assert AgentSession.objects.get(pk=bob_session.pk).mode_id == GENERAL_ID


def test_an_unknown_mode_key_is_refused_naming_it_and_listing_the_valid_keys(alice_session, unchanged):
    result = run({**VALID, "mode": "poetry"}, context_for(alice_session))
    assert result.successful is False
    assert result.server_fault is False
    assert "'poetry'" in result.error_message
    for key in ("general", "ddr_authoring", "workflow_authoring"):
        assert key in result.error_message


def test_an_unknown_mode_key_with_branch_true_creates_no_session(alice_session, unchanged):
    assert run({**VALID, "mode": "poetry", "branch": True}, context_for(alice_session)).successful is False


# --- Happy path ---------------------------------------------------------------------------------------


def test_happy_path_returns_the_echo_payload(alice_session):
    result = run(VALID, context_for(alice_session))

    assert result.successful is True, result.error_message
    assert result.error_message is None
    assert json.loads(result.result) == {
        "success": True,
        "mode": "ddr_authoring",
        "branch": False,
        "reason": "The user wants to write a DDR.",
    }


def test_happy_path_stores_the_mode_id_on_the_session(alice_session):
    run(VALID, context_for(alice_session))

    session = AgentSession.objects.get(pk=alice_session.pk)
    assert session.mode_id == DDR_ID == AgentMode.objects.get(key="ddr_authoring").pk
    assert AgentSession.objects.count() == 1


def test_happy_path_records_exactly_one_audit_row(alice, alice_session):
    started = timezone.now()
    run(VALID, context_for(alice_session))
    ended = timezone.now()

    change = ModeChange.objects.get()
    assert change.session_id == alice_session.pk
    assert change.from_mode_id == GENERAL_ID
    assert change.to_mode_id == DDR_ID
    assert change.reason == "The user wants to write a DDR."
    assert change.branch is False
    assert change.branch_session is None
    assert change.changed_by == alice
    assert change.org == alice.membership.organization
    # Dated by the service's clock, which the test reads too (never before the session's last change).
    assert started <= change.changed_at <= ended
    assert change.changed_at == AgentSession.objects.get(pk=alice_session.pk).updated_at


def test_successive_changes_chain_their_audit_rows(alice_session):
    context = context_for(alice_session)
    for key in ("ddr_authoring", "workflow_authoring", "general"):
        assert run({**VALID, "mode": key}, context).successful

    rows = list(ModeChange.objects.order_by("id").values_list("from_mode_id", "to_mode_id"))
    assert rows == [(GENERAL_ID, DDR_ID), (DDR_ID, WORKFLOW_ID), (WORKFLOW_ID, GENERAL_ID)]
    assert AgentSession.objects.get(pk=alice_session.pk).mode_id == GENERAL_ID


def test_changing_to_the_current_mode_is_still_recorded(alice_session):
    result = run({**VALID, "mode": "general"}, context_for(alice_session))
    assert result.successful
    change = ModeChange.objects.get()
    assert (change.from_mode_id, change.to_mode_id) == (GENERAL_ID, GENERAL_ID)


def test_branch_true_changes_this_session_and_creates_a_child_session_in_the_target_mode(alice, alice_session):
    result = run({**VALID, "mode": "workflow_authoring", "branch": True}, context_for(alice_session))

    assert result.successful is True, result.error_message
    payload = json.loads(result.result)
    assert payload["success"] is True
    assert payload["mode"] == "workflow_authoring"
    assert payload["branch"] is True
    assert payload["reason"] == VALID["reason"]

    assert AgentSession.objects.get(pk=alice_session.pk).mode_id == WORKFLOW_ID
    child = AgentSession.objects.exclude(pk=alice_session.pk).get()
    assert payload["branchSessionId"] == str(child.pk)
    assert child.parent_id == alice_session.pk
    assert child.owner == alice
    assert child.org == alice_session.org
    assert child.mode_id == WORKFLOW_ID

    change = ModeChange.objects.get()
    assert change.branch is True
    assert change.branch_session_id == child.pk
    assert (change.from_mode_id, change.to_mode_id) == (GENERAL_ID, WORKFLOW_ID)


def test_branch_false_returns_no_branch_session_id(alice_session):
    payload = json.loads(run(VALID, context_for(alice_session)).result)
    assert "branchSessionId" not in payload


# --- §3.6: the session manager fails --------------------------------------------------------------------


@pytest.mark.parametrize("which", ["nonexistent", "another-users"])
def test_a_session_the_user_does_not_own_fails_generically_and_is_logged_with_the_exception(
    alice, bob_session, caplog, which
):
    session_id = str(uuid.uuid4()) if which == "nonexistent" else str(bob_session.pk)
    context = AgentToolExecutionContext(
        user=alice, session_id=session_id, conversation_id=None, load_catalog=published_catalog
    )
    sessions_before = AgentSession.objects.count()

    with caplog.at_level(logging.ERROR, logger="sessions_app"):
        result = run(VALID, context)

    assert result.successful is False
    assert result.result is None
    assert result.error_message == FAILED
    assert result.server_fault is True
    records = [record for record in caplog.records if record.name == "sessions_app.tools"]
    assert len(records) == 1
    assert records[0].levelno == logging.ERROR
    assert records[0].exc_info[0] is AgentSession.DoesNotExist  # the exception, for whoever reads the log
    assert records[0].getMessage() == f"agent_change_mode: set_session_mode failed for session {session_id}"
    assert ModeChange.objects.count() == 0
    assert AgentSession.objects.count() == sessions_before
    assert AgentSession.objects.get(pk=bob_session.pk).mode_id == GENERAL_ID


def test_a_session_id_that_is_not_a_uuid_fails_without_raising(alice, caplog):
    context = AgentToolExecutionContext(
        user=alice, session_id="not-a-uuid", conversation_id=None, load_catalog=published_catalog
    )
    with caplog.at_level(logging.ERROR):
        result = run(VALID, context)
    assert result.successful is False
    assert result.error_message
    assert ModeChange.objects.count() == 0


# --- Always available (§3.1) ----------------------------------------------------------------------------


@pytest.mark.parametrize("tool_ids", [[], ["agent_list_modes"], ["agent_hello_world"]], ids=str)
def test_agent_change_mode_is_offered_in_every_mode_even_when_the_mode_does_not_list_it(new_mode, tool_ids):
    new_mode("locked_in", when_to_use="Use this mode for tests.", associated_tool_ids=tool_ids)
    catalog = published_catalog()
    names = [tool.name for tool in catalog.tools_for_mode(catalog.mode("locked_in"))]
    assert "agent_change_mode" in names
    assert set(names) == {"agent_change_mode", *tool_ids}


def test_every_seed_mode_offers_agent_change_mode():
    for mode in AgentMode.objects.all():
        assert "agent_change_mode" in [tool.name for tool in published_catalog().tools_for_mode(mode)]


# --- A session row locked past DATABASE_LOCK_TIMEOUT_MS: a passing failure, not a fault ------------------


@pytest.mark.postgres(reason="a row lock held by another connection, and PostgreSQL's lock_timeout")
@pytest.mark.usefixtures("modes_restored_after_flush")
class TestAChangeThatMeetsAHeldLock:
    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_rest_answers_503_with_retry_after_and_mcp_a_tool_error_both_in_tul_007s_words(
        self, caplog, second_connection
    ):
        user = get_user_model().objects.create_user(username="waiter")
        _, key = create_token(user=user, name="tests")
        session = AgentSession.objects.create(owner=user, mode_id=GENERAL_ID)
        call = {"arguments": VALID, "sessionId": str(session.pk)}
        mcp_call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "agent_change_mode", "arguments": VALID}}
        with connection.cursor() as cursor:  # what aptix_site.database sets on a server's connections
            cursor.execute("SET lock_timeout = '200ms'")
        with second_connection() as holder, caplog.at_level(logging.WARNING):  # a stuck admin script
            holder.execute("SELECT id FROM sessions_app_agentsession WHERE id = %s FOR UPDATE", [session.pk])
            rest = Client().post(
                "/api/tools/agent_change_mode/invoke/", json.dumps(call), content_type="application/json",
                HTTP_AUTHORIZATION=f"Token {key}",
            )
            mcp = Client().post(
                f"/mcp/sessions/{session.pk}/", json.dumps(mcp_call), content_type="application/json",
                HTTP_AUTHORIZATION=f"Bearer {key}", HTTP_ACCEPT="application/json, text/event-stream",
                HTTP_MCP_PROTOCOL_VERSION="2025-11-25",
            )

        assert (rest.status_code, rest["Retry-After"]) == (503, "5")
        assert rest.json() == {"successful": False, "result": None, "errorMessage": FAILED}
        assert mcp.status_code == 200
        assert mcp.json()["result"]["isError"] is True
        assert mcp.json()["result"]["content"] == [{"type": "text", "text": FAILED}]
        logged = [record for record in caplog.records if record.name == "sessions_app.tools"]
        assert [(record.levelno, record.exc_info) for record in logged] == [(logging.WARNING, None)] * 2
        assert "lock timeout" in logged[0].getMessage()
        assert ModeChange.objects.count() == 0
        assert AgentSession.objects.get(pk=session.pk).mode_id == GENERAL_ID
