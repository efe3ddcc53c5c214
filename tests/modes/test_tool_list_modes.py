"""agent_list_modes, the read-only mode catalog tool of TUL-010."""

import json
import logging

import pytest
from django.db import connection

from agent_tools.contract import AgentToolExecutionContext
from agent_tools.registry import ToolRegistry, registry
from modes.catalog import published_catalog
from modes.models import AgentMode
from modes.tools import ListModesTool
from sessions_app.models import AgentSession, ModeChange

from ..expected import seed_listing


def run(arguments_json="{}"):
    # A context per call: its catalog is read once per context.
    context = AgentToolExecutionContext(
        user=None, session_id=None, conversation_id=None, load_catalog=published_catalog
    )
    return ListModesTool().execute(arguments_json, context)


def modes_of(result):
    assert result.successful is True, result.error_message
    return json.loads(result.result)["modes"]


def keys_of(result):
    return [mode["key"] for mode in modes_of(result)]


# --- 1. Schema and registration -------------------------------------------------------------------------


def test_registers_in_a_fresh_registry_and_is_in_the_production_registry():
    ToolRegistry().register(ListModesTool)
    assert type(registry.get("agent_list_modes")) is ListModesTool
    assert ListModesTool().name == ListModesTool.TOOL_NAME == "agent_list_modes"
    assert ListModesTool.is_tool_fully_executed_on_server is True


def test_schema_offers_optional_include_examples_boolean_and_filter_string():
    schema = ListModesTool.get_schema()
    assert schema["type"] == "function"
    assert schema["name"] == "agent_list_modes"
    assert schema["description"].strip()
    parameters = schema["parameters"]
    assert parameters["type"] == "object"
    assert parameters["required"] == []
    assert parameters["properties"]["includeExamples"]["type"] == "boolean"
    assert parameters["properties"]["includeExamples"]["description"].strip()
    assert parameters["properties"]["filter"]["type"] == "string"
    assert parameters["properties"]["filter"]["description"].strip()


@pytest.mark.parametrize(
    "guidance",
    [
        "asks what modes are available",
        "choosing between modes",
        "about to propose a mode change",
        "every user message",
        "already know which mode you are in",
        "substitute for agent_change_mode",
    ],
)
def test_usage_metadata_carries_the_section_5_guidance(guidance):
    assert guidance in ListModesTool.TOOL_USAGE_METADATA


def test_usage_metadata_says_when_not_to_call():
    metadata = ListModesTool.TOOL_USAGE_METADATA
    assert "Do not call it on every user message" in metadata
    assert "never as a substitute for agent_change_mode" in metadata


# --- 2. Happy path ---------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("arguments_json", ["{}", None, "", "  "], ids=["empty-object", "none", "empty", "blank"])
def test_happy_path_lists_the_catalog_with_required_fields_on_the_first_entry(arguments_json):
    result = run(arguments_json)

    assert result.successful is True
    assert result.error_message is None
    modes = json.loads(result.result)["modes"]
    assert len(modes) >= 1
    first = modes[0]
    assert first["id"] == "3F8E4F377F7A4C189C7F6A8B9F945C11"
    assert first["key"] == "general"
    assert first["displayName"] == "General"
    assert first["description"] == (
        "General-purpose assistance for everyday Q&A, explanation, and lightweight help."
    )
    assert first["isDefault"] is True
    assert first["source"] == "builtin"
    assert first["status"] == "active"
    assert first["systemPromptSummary"] == (
        "Use this mode for everyday Q&A, explanation, and lightweight assistance."
    )
    assert first["humanRoleHints"] == ["Asking quick questions", "Looking for explanations or summaries"]


@pytest.mark.django_db
def test_the_payload_is_the_tul_010_shape_listing_every_mode_in_catalog_order():
    result = run()
    assert json.loads(result.result) == seed_listing()


@pytest.mark.django_db
def test_a_custom_mode_is_listed_with_source_custom(custom_mode):
    modes = modes_of(run())
    research = next(mode for mode in modes if mode["key"] == "research")
    assert research["id"] == custom_mode.pk
    assert research["source"] == "custom"
    assert research["isDefault"] is False


@pytest.mark.django_db
def test_listing_is_read_only_and_idempotent(alice_session):
    catalog_before = list(AgentMode.objects.order_by("pk").values())
    session_mode_before = alice_session.mode_id

    first, second = run('{"includeExamples": true}'), run('{"includeExamples": true}')

    assert first.result == second.result
    assert list(AgentMode.objects.order_by("pk").values()) == catalog_before
    assert AgentSession.objects.get(pk=alice_session.pk).mode_id == session_mode_before
    assert ModeChange.objects.count() == 0


# --- 3. includeExamples ----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_include_examples_true_returns_the_seed_example_utterances():
    assert json.loads(run('{"includeExamples": true}').result) == seed_listing(include_examples=True)


@pytest.mark.django_db
@pytest.mark.parametrize("arguments_json", ["{}", '{"includeExamples": false}'], ids=["omitted", "false"])
def test_without_include_examples_example_utterances_are_empty(arguments_json):
    assert all(mode["exampleUtterances"] == [] for mode in modes_of(run(arguments_json)))


# --- filter -----------------------------------------------------------------------------------------------


@pytest.fixture
def filter_modes(new_mode):
    """Four custom modes, each with a marker word in exactly one of the four searched fields."""

    def mode(key, **fields):
        defaults = {"display_name": "Custom", "description": "", "when_to_use": "Use this mode for tests."}
        return new_mode(key, **{**defaults, **fields})

    mode("alpha_zebra")  # in the key
    mode("beta", display_name="Quokka Name")  # in the display name
    mode("gamma", description="Talks about the narwhal.")  # in the description
    mode("delta", when_to_use="Use this mode for axolotl care.")  # in when-to-use


@pytest.mark.django_db
@pytest.mark.parametrize(
    "text, expected",
    [("ZEBRA", ["alpha_zebra"]), ("qUoKkA", ["beta"]), ("Narwhal", ["gamma"]), ("AXOLOTL", ["delta"])],
    ids=["key", "display-name", "description", "when-to-use"],
)
def test_filter_is_a_case_insensitive_contains_over_key_name_description_and_when_to_use(
    filter_modes, text, expected
):
    assert keys_of(run(json.dumps({"filter": text}))) == expected


@pytest.mark.django_db
def test_filter_on_seed_modes_ignores_case():
    assert keys_of(run('{"filter": "wOrKfLoW aUtHoRiNg"}')) == ["workflow_authoring"]
    assert keys_of(run('{"filter": "sys-001"}')) == ["ddr_authoring"]


@pytest.mark.django_db
@pytest.mark.parametrize("text", ["", "   "], ids=["empty", "blank"])
def test_an_empty_filter_lists_every_mode(text):
    assert keys_of(run(json.dumps({"filter": text}))) == ["general", "ddr_authoring", "workflow_authoring"]


@pytest.mark.django_db
def test_a_filter_matching_nothing_is_a_successful_empty_list():
    assert keys_of(run('{"filter": "no mode mentions this"}')) == []


@pytest.mark.django_db
def test_filter_and_include_examples_combine():
    result = run('{"filter": "everyday", "includeExamples": true}')
    assert json.loads(result.result) == seed_listing("general", include_examples=True)


# --- Bad arguments -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "arguments_json, named",
    [
        ('{"includeExamples": "yes"}', "'includeExamples'"),
        ('{"includeExamples": 1}', "'includeExamples'"),
        ('{"includeExamples": null}', "'includeExamples'"),
        ('{"filter": 5}', "'filter'"),
        ('{"filter": ["a"]}', "'filter'"),
        ('{"filter": null}', "'filter'"),
        ('{"verbose": true}', "'verbose'"),
        ('{"mode": "general", "includeExamples": true}', "'mode'"),
    ],
    ids=[
        "examples-string",
        "examples-int",
        "examples-null",
        "filter-int",
        "filter-list",
        "filter-null",
        "unknown",
        "unknown-with-valid",
    ],
)
def test_wrong_types_and_unknown_fields_fail_with_a_message_naming_the_field(arguments_json, named):
    result = run(arguments_json)
    assert result.successful is False
    assert result.result is None
    assert result.server_fault is False
    assert named in result.error_message


def test_an_overlong_filter_is_refused():
    result = run(json.dumps({"filter": "x" * 201}))
    assert result.successful is False
    assert "'filter'" in result.error_message


# --- 4. Catalog failure ------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_catalog_that_cannot_be_read_gives_a_logged_failure_without_a_payload(caplog):
    # A real failure, no mocks: the catalog table is renamed inside the test's transaction (rolled back
    # afterwards). On PostgreSQL the failed query aborts the transaction, so nothing below touches the DB.
    with connection.cursor() as cursor:
        # Every read of the published catalog starts with the head row, whatever copy the process holds; and the
        # revision it names could not be loaded either.
        cursor.execute("ALTER TABLE modes_cataloghead RENAME TO modes_cataloghead_gone")
        cursor.execute("ALTER TABLE modes_catalogrevisionentry RENAME TO modes_catalogrevisionentry_gone")

    with caplog.at_level(logging.ERROR):
        result = run('{"includeExamples": true}')

    assert result.successful is False
    assert result.result is None
    assert result.error_message and result.error_message.strip()
    assert "modes_catalog" not in result.error_message
    assert result.server_fault is True
    records = [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert records, "the catalog failure was not logged"
    assert any(record.exc_info for record in records)
    assert any("agent_list_modes" in record.getMessage() for record in records)
