"""The seed migration writes the three V1 modes of AGN-014 §8 exactly, is reversible, and never overwrites edits."""

import importlib
import re
from types import SimpleNamespace

import pytest
from django.apps import apps as global_apps
from django.core.management import call_command
from django.db import connection

from modes.checks import catalog_is_migrated, check_mode_catalog
from modes.models import AgentMode
from modes.services import set_default_mode

from ..conftest import through_the_services
from ..expected import SEED_MODES

seed_migration = importlib.import_module("modes.migrations.0002_seed_v1_modes")

# The fields AGN-014 §8 fixes for the three seed modes, with the values expected.py writes out (in camelCase).
FIELDS = (
    "id key display_name description when_to_use is_default status version source position associated_tool_ids"
).split()
SECTION_8 = [
    {field: mode[re.sub(r"_(\w)", lambda match: match[1].upper(), field)] for field in FIELDS}
    for mode in SEED_MODES.values()
]


def catalog_rows():
    return list(AgentMode.objects.values(*FIELDS))


def run_seed_forward():
    seed_migration.add_seed_modes(global_apps, SimpleNamespace(connection=connection))


def delete_past_the_services(key):
    """A built-in mode deleted in SQL, as an operator might: the services (delete_modes, the admin) refuse to."""
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM modes_agentmode WHERE key = %s", [key])


@pytest.mark.django_db
def test_the_three_v1_modes_exist_in_section_8_order():
    assert list(AgentMode.objects.values_list("id", "key", "display_name", "is_default")) == [
        ("3F8E4F377F7A4C189C7F6A8B9F945C11", "general", "General", True),
        ("A9E1F9C15A0C4F8D9AF51F3E8B2A6D22", "ddr_authoring", "DDR Authoring", False),
        ("0FB81E6A8337444BA00A0CE28E3A1F78", "workflow_authoring", "Workflow Authoring", False),
    ]


@pytest.mark.django_db
def test_seed_rows_match_section_8_field_for_field():
    assert catalog_rows() == SECTION_8


@pytest.mark.django_db
def test_seed_modes_carry_the_other_section_3_metadata():
    for mode in AgentMode.objects.all():
        for name in (
            "mode_instructions",
            "behavior_hints",
            "human_role_hints",
            "example_utterances",
            "tool_group_hints",
            "rag_scope_hints",
            "strong_signals",
            "weak_signals",
        ):
            value = getattr(mode, name)
            assert value and all(isinstance(item, str) and item.strip() for item in value), (mode.key, name)
        mode.full_clean()


@pytest.mark.django_db
def test_rerunning_the_seed_keeps_an_admin_edit():
    def edit():
        AgentMode.objects.filter(key="general").update(
            display_name="General help",
            when_to_use="Use this mode for anything that fits no other mode.",
            associated_tool_ids=["agent_change_mode", "agent_list_modes"],
            status="experimental",
        )
        AgentMode.objects.filter(key="ddr_authoring").update(description="Edited by an admin.")

    through_the_services(edit)  # as the admin saves it: one revision
    before = list(AgentMode.objects.values())

    run_seed_forward()

    assert list(AgentMode.objects.values()) == before
    general = AgentMode.objects.get(key="general")
    assert general.display_name == "General help"
    assert general.when_to_use == "Use this mode for anything that fits no other mode."
    assert general.associated_tool_ids == ["agent_change_mode", "agent_list_modes"]
    assert general.status == "experimental"


@pytest.mark.django_db
def test_rerunning_the_seed_restores_a_deleted_seed_mode_but_never_a_second_default():
    set_default_mode(mode=AgentMode.objects.get(key="ddr_authoring"))
    delete_past_the_services("general")

    run_seed_forward()

    general = AgentMode.objects.get(key="general")
    assert general.id == "3F8E4F377F7A4C189C7F6A8B9F945C11"
    assert general.source == "builtin"
    assert general.is_default is False
    assert list(AgentMode.objects.filter(is_default=True).values_list("key", flat=True)) == ["ddr_authoring"]


@pytest.mark.django_db
def test_rerunning_the_seed_leaves_a_custom_mode_that_took_a_seed_key():
    delete_past_the_services("workflow_authoring")
    AgentMode.objects.create(
        key="workflow_authoring",
        display_name="Our workflows",
        when_to_use="Use this mode for our own workflows.",
    )

    run_seed_forward()

    mode = AgentMode.objects.get(key="workflow_authoring")
    assert (mode.display_name, mode.source) == ("Our workflows", "custom")
    assert not AgentMode.objects.filter(pk="0FB81E6A8337444BA00A0CE28E3A1F78").exists()


@pytest.mark.usefixtures("modes_restored_after_flush")
class TestReversingTheSeed:
    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_seed_migration_is_reversible_and_checks_skip_until_it_is_applied(self):
        custom = AgentMode.objects.create(
            key="research", display_name="Research", when_to_use="Use this mode for research."
        )
        assert catalog_is_migrated("default")

        call_command("migrate", "modes", "0001", verbosity=0)

        # Backwards: the built-in rows go, the custom mode stays.
        assert list(AgentMode.objects.values_list("key", "source")) == [("research", "custom")]
        # The catalog now has no default, but it is not migrated, so the checks leave it alone.
        assert catalog_is_migrated("default") is False
        assert check_mode_catalog(databases=["default"]) == []
        call_command("check", "--database", "default")

        # Forward again with the checks on, as `manage.py migrate` runs: the seed comes back.
        call_command("migrate", verbosity=0, skip_checks=False)

        assert catalog_is_migrated("default")
        assert catalog_rows()[:3] == SECTION_8
        assert list(AgentMode.objects.values_list("key", flat=True)) == [
            "general",
            "ddr_authoring",
            "workflow_authoring",
            "research",
        ]
        assert AgentMode.objects.get(key="research").pk == custom.pk
        call_command("check", "--database", "default")
