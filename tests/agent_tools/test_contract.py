"""The contract of TUL-011 §3: InvokeResult, the execution context, and execute() never raising."""

import dataclasses
import logging

import pytest

from agent_api.serializers import InvocationResponse
from agent_tools.contract import AgentTool, AgentToolExecutionContext, InvokeResult, ToolArgumentError, function_schema
from agent_tools.registry import ToolRegistry, registry
from modes.catalog import published_catalog


def context():
    """A call's context, served the published catalog: a new one per call, as each call reads its catalog once."""
    return AgentToolExecutionContext(user=None, session_id="s-1", conversation_id="c-1", load_catalog=published_catalog)


class ExplodingTool(AgentTool):
    TOOL_NAME = "exploding_tool"
    TOOL_USAGE_METADATA = "Only for tests: always fails unexpectedly."

    @staticmethod
    def get_schema() -> dict:
        return function_schema(name=ExplodingTool.TOOL_NAME, description="Fails.", properties={})

    def run(self, arguments_json, context):
        raise RuntimeError("secret internals")


class PickyTool(ExplodingTool):
    TOOL_NAME = "picky_tool"

    def run(self, arguments_json, context):
        raise ToolArgumentError("PickyTool wants something else.")


# --- InvokeResult ---------------------------------------------------------------------------------------


def test_invoke_result_create_is_successful_with_the_json_and_no_error():
    result = InvokeResult.create('{"a": 1}')
    assert (result.successful, result.result, result.error_message) == (True, '{"a": 1}', None)
    assert result.server_fault is False


def test_invoke_result_from_error_is_unsuccessful_with_the_message_and_no_result():
    result = InvokeResult.from_error("Something is missing.")
    assert (result.successful, result.result, result.error_message) == (False, None, "Something is missing.")
    assert result.server_fault is False


def test_invoke_result_from_error_can_mark_a_server_fault():
    assert InvokeResult.from_error("Broken.", server_fault=True).server_fault is True


def test_invoke_result_envelope_is_camel_case_with_the_three_fields():
    created, refused = InvokeResult.create("{}"), InvokeResult.from_error("No.")
    assert InvocationResponse(created).data == {"successful": True, "result": "{}", "errorMessage": None}
    assert InvocationResponse(refused).data == {"successful": False, "result": None, "errorMessage": "No."}


def test_invoke_result_is_immutable():
    with pytest.raises(dataclasses.FrozenInstanceError, match="^cannot assign to field 'successful'$"):
        InvokeResult.create("{}").successful = False


# --- AgentToolExecutionContext --------------------------------------------------------------------------


def test_execution_context_carries_user_session_conversation_and_an_org_looked_up_once_when_read():
    lookups = []
    context = AgentToolExecutionContext(
        user="user", session_id="sid", conversation_id="cid", load_org=lambda: lookups.append("lookup") or "org"
    )
    assert (context.user, context.session_id, context.conversation_id) == ("user", "sid", "cid")
    assert lookups == []
    assert (context.org, context.org) == ("org", "org")
    assert lookups == ["lookup"]


def test_an_execution_context_without_an_org_lookup_has_no_org():
    assert AgentToolExecutionContext(user="user", session_id=None, conversation_id=None).org is None


def test_execution_context_reads_its_catalog_once_and_only_when_a_tool_asks_for_it():
    loads = []
    call = AgentToolExecutionContext(
        user="user", session_id=None, conversation_id=None, load_catalog=lambda: loads.append("load") or "catalog"
    )
    assert loads == []
    assert (call.catalog, call.catalog) == ("catalog", "catalog")
    assert loads == ["load"]


def test_an_execution_context_without_a_catalog_loader_has_no_catalog():
    assert AgentToolExecutionContext(user="user", session_id=None, conversation_id=None).catalog is None


def test_execution_context_is_immutable():
    with pytest.raises(dataclasses.FrozenInstanceError, match="^cannot assign to field 'session_id'$"):
        context().session_id = "other"


# --- AgentTool ------------------------------------------------------------------------------------------


def test_agent_tool_name_is_tool_name_and_runs_on_the_server():
    tool = ExplodingTool()
    assert tool.name == "exploding_tool"
    assert tool.is_tool_fully_executed_on_server is True


def test_a_test_tool_satisfies_the_registry():
    ToolRegistry().register(ExplodingTool)


# --- execute() never raises -----------------------------------------------------------------------------


def test_an_unexpected_exception_becomes_a_generic_server_fault_without_internals(caplog):
    with caplog.at_level(logging.ERROR, logger="agent_tools"):
        result = ExplodingTool().execute("{}", context())

    assert result.successful is False
    assert result.result is None
    assert result.server_fault is True
    assert result.error_message
    assert "secret internals" not in result.error_message
    assert "RuntimeError" not in result.error_message
    assert "Traceback" not in result.error_message


def test_an_unexpected_exception_is_logged_with_its_traceback(caplog):
    with caplog.at_level(logging.ERROR, logger="agent_tools"):
        ExplodingTool().execute("{}", context())

    records = [record for record in caplog.records if record.name == "agent_tools.contract"]
    assert len(records) == 1
    record = records[0]
    assert record.levelno == logging.ERROR
    assert "exploding_tool" in record.getMessage()
    assert record.exc_info is not None  # logger.exception, so the traceback is in the log
    assert isinstance(record.exc_info[1], RuntimeError)
    assert str(record.exc_info[1]) == "secret internals"


def test_a_tool_argument_error_is_a_client_failure_with_its_message_and_is_not_logged(caplog):
    with caplog.at_level(logging.DEBUG):
        result = PickyTool().execute("{}", context())
    assert (result.successful, result.error_message, result.server_fault) == (
        False,
        "PickyTool wants something else.",
        False,
    )
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]


@pytest.mark.django_db
@pytest.mark.parametrize("tool", registry.tools(), ids=lambda tool: tool.name)
@pytest.mark.parametrize(
    "arguments_json",
    [None, "", "   ", "not json", "[1, 2]", '"a string"', "42", "null", "{", '{"unknown": 1}', "[" * 5000],
    ids=["none", "empty", "blank", "not-json", "array", "string", "number", "null", "truncated", "unknown", "deep"],
)
def test_no_production_tool_raises_on_bad_arguments_or_blames_the_server(tool, arguments_json):
    result = tool.execute(arguments_json, context())
    assert isinstance(result, InvokeResult)
    if not result.successful:
        assert result.error_message and result.error_message.strip()
        assert result.result is None
        assert result.server_fault is False, result.error_message


@pytest.mark.parametrize("tool", registry.tools(), ids=lambda tool: tool.name)
@pytest.mark.parametrize(
    "arguments_json", ["[1]", "not json", '"text"'], ids=["array", "not-json", "string"]
)
def test_arguments_that_are_not_a_json_object_are_refused_with_a_clear_message(tool, arguments_json):
    result = tool.execute(arguments_json, context())
    assert result.successful is False
    assert "arguments must be a JSON object" in result.error_message


@pytest.mark.parametrize("tool", registry.tools(), ids=lambda tool: tool.name)
def test_arguments_with_nul_characters_are_refused_not_stored(tool):
    result = tool.execute('{"name": "a\\u0000b", "mode": "general", "branch": false, "reason": "x\\u0000"}', context())
    assert result.successful is False
    assert result.server_fault is False
    assert "NUL" in result.error_message
