"""The AgentMode model: the fields of AGN-014 §3, its validation messages, and the database constraints."""

import re

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, models, transaction
from django.utils import timezone

from modes.fields import StringListField
from modes.models import AgentMode, AgentModeSummary

from ..conftest import valid_mode
from ..expected import GENERAL_ID, LIST_FIELDS

pytestmark = pytest.mark.django_db


def clean_errors(mode):
    with pytest.raises(ValidationError) as caught:
        mode.full_clean()
    return caught.value.message_dict


# --- fields ------------------------------------------------------------------------------------------


def test_model_has_every_agn014_section_3_field_plus_source_position_and_timestamps():
    names = {field.name for field in AgentMode._meta.get_fields()}
    assert {
        "id",
        "key",
        "display_name",
        "description",
        "when_to_use",
        "is_default",
        "status",
        "version",
        *LIST_FIELDS,
        "source",
        "position",
        "created_at",
        "updated_at",
    } <= names
    assert AgentMode._meta.pk.name == "id"


@pytest.mark.parametrize("name", LIST_FIELDS)
def test_list_fields_are_json_lists_of_strings(name):
    field = AgentMode._meta.get_field(name)
    assert isinstance(field, StringListField)
    assert isinstance(field, models.JSONField)
    items = ["agent_list_modes", "agent_change_mode"] if name == "associated_tool_ids" else ["First line.", "Second"]
    mode = valid_mode(**{name: items})
    mode.full_clean()
    mode.save()
    assert AgentMode.objects.values_list(name, flat=True).get(pk=mode.pk) == items


def test_new_mode_gets_a_generated_32_upper_hex_id_custom_source_and_active_status():
    mode = valid_mode()
    mode.full_clean()
    started = timezone.now()
    mode.save()
    ended = timezone.now()
    mode.refresh_from_db()
    assert re.fullmatch(r"[0-9A-F]{32}", mode.id)
    assert mode.source == "custom"
    assert mode.status == "active"
    assert mode.version == "v1"
    assert mode.is_default is False
    assert started <= mode.created_at <= mode.updated_at <= ended  # both stamped by this process's clock
    assert [mode.mode_instructions, mode.associated_tool_ids, mode.weak_signals] == [[], [], []]


def test_two_new_modes_get_different_ids():
    assert valid_mode().id != valid_mode().id


def test_a_mode_saved_without_position_goes_last_in_catalog_order():
    mode = valid_mode()
    mode.save()
    assert mode.position == 4
    assert [m.key for m in AgentMode.objects.all()] == ["general", "ddr_authoring", "workflow_authoring", "research"]


@pytest.mark.parametrize("last", [1_000_000, 2**31 - 1])  # the form's end, and a row written past it
def test_a_mode_saved_without_position_after_the_last_position_goes_beside_it_not_past_the_column(last):
    AgentMode.objects.filter(key="workflow_authoring").update(position=last)
    mode = valid_mode(key="zz_last")
    mode.save()
    assert mode.position == 1_000_000
    last_in_order = "zz_last" if last == 1_000_000 else "workflow_authoring"  # a tie goes by key
    assert [m.key for m in AgentMode.objects.all()][-1] == last_in_order


def test_catalog_order_is_position_then_key():
    AgentMode.objects.filter(key="workflow_authoring").update(position=0)
    valid_mode(key="aaa_first_on_tie", position=0).save()
    assert [m.key for m in AgentMode.objects.all()] == [
        "aaa_first_on_tie",
        "workflow_authoring",
        "general",
        "ddr_authoring",
    ]


def test_updated_at_changes_on_save_and_created_at_does_not():
    mode = AgentMode.objects.get(key="general")
    created, updated = mode.created_at, mode.updated_at
    mode.display_name = "General (edited)"
    mode.save()
    mode.refresh_from_db()
    assert mode.created_at == created
    assert mode.updated_at > updated


def test_create_summary_projects_section_4_fields():
    mode = AgentMode.objects.get(key="general")
    assert mode.create_summary() == AgentModeSummary(
        id=GENERAL_ID,
        key="general",
        display_name="General",
        description="General-purpose assistance for everyday Q&A, explanation, and lightweight help.",
        system_prompt_summary="Use this mode for everyday Q&A, explanation, and lightweight assistance.",
        is_default=True,
        human_role_hints=("Asking quick questions", "Looking for explanations or summaries"),
        example_utterances=(
            "What is the difference between a workflow and a DDR?",
            "Summarize this paragraph for me.",
            "Explain how the agent decides which tools to use.",
        ),
        source="builtin",
        status="active",
        switch_targets=(),
        llm_can_enter=True,
    )


def test_summary_description_falls_back_to_when_to_use_when_empty():
    mode = valid_mode(description="")
    summary = mode.create_summary()
    assert summary.description == mode.when_to_use
    assert summary.system_prompt_summary == mode.when_to_use


# --- full_clean messages -----------------------------------------------------------------------------


def test_valid_mode_passes_full_clean():
    valid_mode(status="experimental", associated_tool_ids=["agent_list_modes", "tool-2"]).full_clean()


@pytest.mark.parametrize("bad_id", ["3f8e4f377f7a4c189c7f6a8b9f945c11", "3F8E4F37-7F7A-4C18-9C7F-6A8B9F945C11", "ABC", "G" * 32])
def test_full_clean_explains_the_id_format(bad_id):
    assert (
        "A mode id is a GUID without hyphens: exactly 32 upper-case hexadecimal characters (0-9, A-F)."
        in clean_errors(valid_mode(id=bad_id))["id"]
    )


@pytest.mark.parametrize("bad_key", ["DDR", "ddr-authoring", "ddr authoring", "modé", "ddr\n"])
def test_full_clean_explains_the_key_format(bad_key):
    assert clean_errors(valid_mode(key=bad_key))["key"] == [
        "A mode key is snake_case: lower-case letters, digits and underscores only (for example ddr_authoring)."
    ]


def test_full_clean_refuses_a_key_that_is_taken():
    assert clean_errors(valid_mode(key="general"))["key"] == ["A mode with this key already exists."]


def test_full_clean_refuses_an_empty_key():
    assert clean_errors(valid_mode(key=""))["key"] == ["This field cannot be blank."]


def test_full_clean_refuses_an_empty_when_to_use():
    assert clean_errors(valid_mode(when_to_use=""))["when_to_use"] == ["This field cannot be blank."]


def test_full_clean_refuses_a_whitespace_only_when_to_use():
    # The start-up check (modes.E007) rejects a blank when-to-use, so validation must too.
    assert clean_errors(valid_mode(when_to_use="   "))["when_to_use"] in (
        ["This field cannot be blank."],
        ["This cannot be only spaces."],
    )


@pytest.mark.parametrize(
    "text",
    ["Line one.\nLine two.", "Line one.\r\nLine two.", "Line one.\rLine two.", "Line one.\u2028Line two.",
     "Line one.\x85Line two.", "One line, then a break.\n"],
)
def test_full_clean_refuses_a_multi_line_when_to_use(text):
    assert clean_errors(valid_mode(when_to_use=text))["when_to_use"] == [
        "This must be a single line: it is rendered inline in the system prompt."
    ]


def test_full_clean_refuses_an_unknown_status_naming_the_valid_ones():
    assert clean_errors(valid_mode(status="retired"))["status"] == [
        "Status 'retired' is not one of active, experimental or deprecated."
    ]


@pytest.mark.parametrize("status", ["active", "experimental", "deprecated"])
def test_full_clean_accepts_the_three_statuses(status):
    valid_mode(status=status).full_clean()


def test_full_clean_refuses_a_second_default():
    assert clean_errors(valid_mode(is_default=True))["__all__"] == [
        "Another mode is already the default; only one mode can be the default."
    ]


@pytest.mark.parametrize("name", LIST_FIELDS)
def test_full_clean_refuses_a_list_field_that_is_not_a_list_of_strings(name):
    assert clean_errors(valid_mode(**{name: "agent_list_modes"}))[name] == ["This must be a list of text lines."]
    assert clean_errors(valid_mode(**{name: ["ok", 3]}))[name] == ["This must be a list of text lines."]


@pytest.mark.parametrize("name", LIST_FIELDS)
def test_full_clean_refuses_empty_items_in_a_list_field(name):
    assert "Lines in this list must not be empty." in clean_errors(valid_mode(**{name: ["ok", "  "]}))[name]


@pytest.mark.parametrize("name", LIST_FIELDS)
@pytest.mark.parametrize("item", ["one\ntwo", "one\u2029two"])
def test_full_clean_refuses_multi_line_items_in_a_list_field(name, item):
    assert "Each item must be a single line." in clean_errors(valid_mode(**{name: [item]}))[name]


def test_full_clean_names_the_invalid_tool_names():
    errors = clean_errors(valid_mode(associated_tool_ids=["agent_list_modes", "list modes!", "x" * 65]))
    assert errors["associated_tool_ids"] == [
        "These are not valid tool names (letters, digits, '_' and '-', at most 64 characters): "
        f"'list modes!', '{'x' * 65}'."
    ]


def test_full_clean_refuses_a_negative_position():
    assert clean_errors(valid_mode(position=-1))["position"] == ["Ensure this value is greater than or equal to 0."]


# --- database constraints ----------------------------------------------------------------------------

# Each refusal names the constraint that made it, so that a write refused for another reason does not pass.
# A check constraint is named alike on both databases; SQLite names a unique one by its columns.
DUPLICATE_KEY = {
    "postgresql": 'unique constraint "modes_agentmode_key_key"',
    "sqlite": "UNIQUE constraint failed: modes_agentmode.key",
}[connection.vendor]
SECOND_DEFAULT = {
    "postgresql": 'unique constraint "modes_agentmode_single_default"',
    "sqlite": "UNIQUE constraint failed: modes_agentmode.is_default",
}[connection.vendor]


def refused_by(constraint):
    return pytest.raises(IntegrityError, match=re.escape(constraint))


def test_database_refuses_a_duplicate_key():
    with refused_by(DUPLICATE_KEY), transaction.atomic():
        valid_mode(key="general").save()


def test_database_refuses_a_second_default():
    with refused_by(SECOND_DEFAULT), transaction.atomic():
        AgentMode.objects.filter(key="ddr_authoring").update(is_default=True)
    assert list(AgentMode.objects.filter(is_default=True).values_list("key", flat=True)) == ["general"]


def test_database_allows_many_non_default_modes():
    valid_mode(key="one").save()
    valid_mode(key="two").save()
    assert AgentMode.objects.filter(is_default=False).count() == 4


@pytest.mark.parametrize("status", ["retired", "", "Active"])
def test_database_refuses_an_unknown_status(status):
    with refused_by("modes_agentmode_status_valid"), transaction.atomic():
        AgentMode.objects.filter(key="general").update(status=status)


@pytest.mark.parametrize("bad_id", ["3f8e4f377f7a4c189c7f6a8b9f945c11", "NOT-A-GUID", "ABC", ""])
def test_database_refuses_a_malformed_id(bad_id):
    with refused_by("modes_agentmode_id_format"), transaction.atomic():
        AgentMode.objects.filter(key="general").update(id=bad_id)
    assert AgentMode.objects.filter(pk=GENERAL_ID).exists()


@pytest.mark.parametrize("bad_key", ["General", "ddr-authoring", "two words", "", "ddr\n"])
def test_database_refuses_a_malformed_key(bad_key):
    with refused_by("modes_agentmode_key_format"), transaction.atomic():
        AgentMode.objects.filter(key="general").update(key=bad_key)


@pytest.mark.parametrize("text", ["", "   ", "Line one.\nLine two.", "Line one.\rLine two.", "One line.\n"])
def test_database_refuses_a_when_to_use_that_is_empty_blank_or_not_one_line(text):
    with refused_by("modes_agentmode_when_to_use_one_line"), transaction.atomic():
        AgentMode.objects.filter(key="general").update(when_to_use=text)
    assert AgentMode.objects.get(key="general").when_to_use == (
        "Use this mode for everyday Q&A, explanation, and lightweight assistance."
    )
