"""agent_hello_world, the canonical minimal tool of TUL-011 §6."""

import json
import logging

import pytest

from agent_tools.contract import AgentToolExecutionContext
from agent_tools.registry import ToolRegistry, registry
from agent_tools.tools import HelloWorldTool

CONTEXT = AgentToolExecutionContext(user=None, session_id="session-42", conversation_id="conversation-7")


def run(arguments_json, context=CONTEXT):
    return HelloWorldTool().execute(arguments_json, context)


def test_identity_is_agent_hello_world_and_registers_in_a_fresh_registry():
    assert HelloWorldTool.TOOL_NAME == "agent_hello_world"
    assert HelloWorldTool().name == "agent_hello_world"
    ToolRegistry().register(HelloWorldTool)
    assert type(registry.get("agent_hello_world")) is HelloWorldTool


def test_usage_metadata_says_it_greets_when_the_user_asks_to_be_greeted_or_welcomed():
    metadata = HelloWorldTool.TOOL_USAGE_METADATA.lower()
    assert "greeting" in metadata
    assert "greeted" in metadata and "welcomed" in metadata


def test_schema_has_one_required_string_parameter_name():
    schema = HelloWorldTool.get_schema()
    assert schema["type"] == "function"
    assert schema["name"] == "agent_hello_world"
    assert "greeting" in schema["description"].lower() and "name" in schema["description"].lower()
    assert schema["parameters"]["type"] == "object"
    assert list(schema["parameters"]["properties"]) == ["name"]
    assert schema["parameters"]["properties"]["name"]["type"] == "string"
    assert schema["parameters"]["properties"]["name"]["description"]
    assert schema["parameters"]["required"] == ["name"]


def test_happy_path_greets_by_name_and_echoes_conversation_and_session_ids():
    result = run('{"name": "Ada"}')

    assert result.successful is True
    assert result.error_message is None
    payload = json.loads(result.result)
    assert set(payload) == {"message", "conversationId", "sessionId"}
    assert "Ada" in payload["message"]
    assert payload["conversationId"] == "conversation-7"
    assert payload["sessionId"] == "session-42"


def test_happy_path_without_session_or_conversation_returns_nulls():
    context = AgentToolExecutionContext(user=None, session_id=None, conversation_id=None)
    payload = json.loads(run('{"name": "Grace"}', context).result)
    assert "Grace" in payload["message"]
    assert payload["conversationId"] is None and payload["sessionId"] is None


def test_the_greeting_keeps_non_ascii_names_intact():
    payload = json.loads(run(json.dumps({"name": "Zoë Ōkubo"})).result)
    assert "Zoë Ōkubo" in payload["message"]


@pytest.mark.parametrize(
    "arguments_json",
    ['{"name": ""}', '{"name": "   "}', "{}", '{"name": null}', '{"name": 5}', '{"name": ["Ada"]}'],
    ids=["empty", "blank", "missing", "null", "number", "list"],
)
def test_an_empty_missing_or_non_string_name_fails_mentioning_name(arguments_json):
    result = run(arguments_json)
    assert result.successful is False
    assert result.result is None
    assert "'name'" in result.error_message
    assert result.server_fault is False


@pytest.mark.parametrize("arguments_json", [None, "", "  "], ids=["none", "empty", "blank"])
def test_no_arguments_at_all_fails_with_a_clear_message(arguments_json):
    result = run(arguments_json)
    assert result.successful is False
    assert result.error_message == "HelloWorldTool requires a non-empty arguments object."


def test_an_unknown_argument_is_refused_naming_it():
    result = run('{"name": "Ada", "shout": true}')
    assert result.successful is False
    assert "'shout'" in result.error_message


def test_an_overlong_name_is_refused():
    result = run(json.dumps({"name": "x" * 201}))
    assert result.successful is False
    assert "'name'" in result.error_message


def test_an_unexpected_exception_is_logged_and_becomes_a_generic_failure(caplog):
    # A missing execution context makes run() fail on an attribute; execute() must not let that out.
    with caplog.at_level(logging.ERROR, logger="agent_tools"):
        result = HelloWorldTool().execute(json.dumps({"name": "Ada"}), None)
    assert (result.successful, result.result, result.server_fault) == (False, None, True)
    assert result.error_message == "agent_hello_world failed unexpectedly."
    assert "AttributeError" not in result.error_message and "conversation_id" not in result.error_message
    [record] = [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert record.getMessage() == "agent tool agent_hello_world failed unexpectedly"
    assert record.exc_info[0] is AttributeError
