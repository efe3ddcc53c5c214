"""The catalog service of AGN-014 §5 and the Mode Catalog system-prompt block of §6.2 (modes/catalog.py)."""

import pytest
from django.db import connection, transaction

from modes.catalog import (
    UnknownModeError,
    build_system_prompt,
    get_all_modes,
    get_mode,
    get_tools_for_mode,
)
from modes.models import AgentMode, AgentModeSummary
from modes.services import record_unrecorded_changes, set_default_mode

from ..expected import SEED_MODE_KEYS, SEED_MODES, seed_prompt

pytestmark = pytest.mark.django_db

# --- get_all_modes -----------------------------------------------------------------------------------


def test_get_all_modes_returns_a_summary_per_mode_in_catalog_order():
    summaries = get_all_modes()
    assert all(isinstance(summary, AgentModeSummary) for summary in summaries)
    assert [(s.id, s.key, s.display_name, s.is_default) for s in summaries] == [
        ("3F8E4F377F7A4C189C7F6A8B9F945C11", "general", "General", True),
        ("A9E1F9C15A0C4F8D9AF51F3E8B2A6D22", "ddr_authoring", "DDR Authoring", False),
        ("0FB81E6A8337444BA00A0CE28E3A1F78", "workflow_authoring", "Workflow Authoring", False),
    ]


def test_each_summary_is_the_section_4_projection_of_its_seed_mode():
    assert get_all_modes() == [
        AgentModeSummary(
            id=mode["id"],
            key=mode["key"],
            display_name=mode["displayName"],
            description=mode["description"],
            system_prompt_summary=mode["whenToUse"],
            is_default=mode["isDefault"],
            human_role_hints=tuple(mode["humanRoleHints"]),
            example_utterances=tuple(mode["exampleUtterances"]),
            source="builtin",
            status="active",
            switch_targets=(),
            llm_can_enter=True,
        )
        for mode in (SEED_MODES[key] for key in SEED_MODE_KEYS)
    ]


def test_summary_description_falls_back_to_when_to_use_when_description_is_empty(custom_mode):
    AgentMode.objects.filter(pk=custom_mode.pk).update(description="")
    record_unrecorded_changes()
    summary = next(s for s in get_all_modes() if s.key == "research")
    assert summary.description == "Use this mode when the user wants sources found, compared or summarised."
    assert summary.system_prompt_summary == summary.description


def test_get_all_modes_follows_position_order():
    AgentMode.objects.filter(key="general").update(position=10)
    record_unrecorded_changes()
    assert [s.key for s in get_all_modes()] == ["ddr_authoring", "workflow_authoring", "general"]


# --- get_mode / get_tools_for_mode -------------------------------------------------------------------


def test_get_mode_returns_the_full_mode_by_key():
    mode = get_mode("workflow_authoring")
    assert isinstance(mode, AgentMode)
    assert mode.id == "0FB81E6A8337444BA00A0CE28E3A1F78"
    assert mode.mode_instructions[0] == "Model each workflow as named steps with clear inputs, outputs and transitions."


def test_unknown_key_error_names_the_bad_key_and_lists_every_valid_key(custom_mode):
    with pytest.raises(UnknownModeError) as caught:
        get_mode("ddr_writing")
    message = str(caught.value)
    assert "'ddr_writing'" in message
    for key in ("general", "ddr_authoring", "workflow_authoring", "research"):
        assert key in message
    assert message == "Unknown mode key 'ddr_writing'. Valid keys: general, ddr_authoring, workflow_authoring, research."


def test_get_mode_looks_up_by_key_never_by_id():
    with pytest.raises(UnknownModeError) as caught:
        get_mode("3F8E4F377F7A4C189C7F6A8B9F945C11")
    assert "3F8E4F377F7A4C189C7F6A8B9F945C11" in str(caught.value)


def test_get_tools_for_mode_returns_the_mode_tools():
    assert get_tools_for_mode("general") == [
        "agent_change_mode",
        "agent_list_modes",
        "agent_workflow_registry",
        "agent_hello_world",
    ]
    assert get_tools_for_mode("workflow_authoring") == [
        "agent_change_mode",
        "agent_list_modes",
        "agent_workflow_registry",
        "agent_workflow_authoring",
    ]


def test_get_tools_for_mode_returns_a_fresh_list_each_time():
    tools = get_tools_for_mode("ddr_authoring")
    tools.append("agent_delete_everything")
    tools.remove("agent_change_mode")
    assert get_tools_for_mode("ddr_authoring") == [
        "agent_change_mode",
        "agent_list_modes",
        "agent_workflow_registry",
        "agent_ddr_manager",
    ]
    assert get_tools_for_mode("ddr_authoring") is not get_tools_for_mode("ddr_authoring")


def test_get_tools_for_unknown_mode_raises_the_same_error_with_valid_keys():
    with pytest.raises(UnknownModeError) as caught:
        get_tools_for_mode("nope")
    assert str(caught.value) == "Unknown mode key 'nope'. Valid keys: general, ddr_authoring, workflow_authoring."


# --- build_system_prompt -----------------------------------------------------------------------------


@pytest.mark.parametrize("key", SEED_MODE_KEYS)
def test_system_prompt_of_each_seed_mode_is_exactly_section_6_2(key):
    assert build_system_prompt(key) == seed_prompt(key)


def test_system_prompt_mode_switching_bullets_use_typographic_apostrophes():
    prompt = build_system_prompt("general")
    assert "user\u2019s request clearly matches another mode\u2019s" in prompt
    assert "user's" not in prompt


@pytest.mark.parametrize("key", [None, "", "no_such_mode", "3F8E4F377F7A4C189C7F6A8B9F945C11"])
def test_system_prompt_falls_back_to_the_default_mode(key):
    assert build_system_prompt(key) == seed_prompt("general")


def test_system_prompt_fallback_follows_the_current_default():
    set_default_mode(mode=AgentMode.objects.get(key="workflow_authoring"))
    assert build_system_prompt(None).splitlines()[0] == "Current Mode: workflow_authoring"
    assert build_system_prompt("unknown").splitlines()[0] == "Current Mode: workflow_authoring"


def test_system_prompt_lists_modes_in_catalog_position_order(custom_mode):
    AgentMode.objects.filter(key="research").update(position=0)
    AgentMode.objects.filter(key="general").update(position=99)
    record_unrecorded_changes()
    lines = build_system_prompt("research").splitlines()
    assert lines[0] == "Current Mode: research"
    assert lines[2:8] == [
        "Available Modes:",
        "- research: Use this mode when the user wants sources found, compared or summarised.",
        "- ddr_authoring: Use this mode when the user wants to create, refine, or validate Aptix DDR "
        "specifications following SYS-001.",
        "- workflow_authoring: Use this mode when defining, editing, or validating Aptix workflows using TUL-006.",
        "- general: Use this mode for everyday Q&A, explanation, and lightweight assistance.",
        "",
    ]


def test_system_prompt_reflects_an_edited_when_to_use():
    AgentMode.objects.filter(key="general").update(when_to_use="Use this mode for anything else.")
    record_unrecorded_changes()
    assert "- general: Use this mode for anything else." in build_system_prompt("general").splitlines()


# --- the catalog served is the published revision --------------------------------------------------------


def test_a_change_made_with_raw_sql_is_served_once_a_revision_records_it():
    assert get_tools_for_mode("general")[-1] == "agent_hello_world"  # the catalog has been read once
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE modes_agentmode SET when_to_use = %s WHERE key = %s", ["Use this mode for anything.", "general"]
        )
    assert build_system_prompt("general") == seed_prompt("general")
    record_unrecorded_changes()
    assert "- general: Use this mode for anything." in build_system_prompt("general").splitlines()
    assert get_mode("general").when_to_use == "Use this mode for anything."


def test_a_new_mode_is_seen_on_the_next_read(new_mode):
    assert len(get_all_modes()) == 3
    new_mode("later", display_name="Later", when_to_use="Use this mode later.")  # through the services
    assert [s.key for s in get_all_modes()][-1] == "later"
    assert get_tools_for_mode("later") == []


def test_a_mode_created_past_the_services_is_seen_only_once_a_revision_records_it():
    assert len(get_all_modes()) == 3
    AgentMode.objects.create(key="later", display_name="Later", when_to_use="Use this mode later.")
    assert [s.key for s in get_all_modes()] == list(SEED_MODE_KEYS)
    with pytest.raises(UnknownModeError):
        get_mode("later")
    record_unrecorded_changes()
    assert [s.key for s in get_all_modes()][-1] == "later"


def test_a_rolled_back_change_is_not_served_afterwards():
    with transaction.atomic():
        AgentMode.objects.filter(key="general").update(when_to_use="Temporary sentence.")
        record_unrecorded_changes()
        assert "- general: Temporary sentence." in build_system_prompt(None).splitlines()
        transaction.set_rollback(True)
    assert build_system_prompt("ddr_authoring") == seed_prompt("ddr_authoring")
    assert get_mode("general").when_to_use == "Use this mode for everyday Q&A, explanation, and lightweight assistance."
