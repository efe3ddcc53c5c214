"""
The commands and revisions: an import is one revision and says so; a dry run says, mode by mode, what it would
do and writes nothing; export_modes --revision writes a file that import_modes takes back.
"""

import json
from io import StringIO

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from django.db import connection

from modes.catalog import published_catalog
from modes.models import AgentMode, CatalogRevision, CatalogRevisionEntry, DeclaredTool
from modes.revision_store import MODE, history_of
from modes.services import catalog_change, record_unrecorded_changes

pytestmark = pytest.mark.django_db

RESEARCH = {
    "key": "research",
    "display_name": "Research",
    "when_to_use": "Use this mode when the user wants sources found.",
    "associated_tool_ids": ["agent_list_modes", "agent_source_search"],
}
SEARCH_TOOL = {"name": "agent_source_search", "description": "Searches sources.", "read_only": True}


def run(command, *args):
    out, err = StringIO(), StringIO()
    call_command(command, *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def write(tmp_path, document, name="modes.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


def catalog_file(*modes, tools=()):
    return {"format": "aptix-modes", "version": 1, "modes": list(modes), "declared_tools": list(tools)}


def entry_count():
    """What the revisions store, every mode and tool each one changed: the catalog's one history."""
    return CatalogRevisionEntry.objects.count()


def test_an_import_of_modes_and_tools_is_one_revision_and_names_it(tmp_path):
    general = {"key": "general", "when_to_use": "Use this mode for anything."}
    path = write(tmp_path, catalog_file(RESEARCH, general, tools=[SEARCH_TOOL]))

    out, err = run("import_modes", str(path), "--update")

    assert out == (
        "declared tool agent_source_search: created\n"
        "mode research: created\n"
        "mode general: updated (when_to_use)\n"
        "Created 2, updated 1, left 0 unchanged. Catalog revision: 2.\n"
    )
    # The tool research lists is declared by the same file: only general's client tool is unresolved.
    assert err == "Warning (modes.W001): Mode 'general' lists tool ids that name no tool: 'agent_workflow_registry'.\n"
    revision = CatalogRevision.objects.get(number=2)
    assert revision.summary == "mode general: when_to_use; mode research created; tool agent_source_search created"
    assert CatalogRevision.objects.count() == 2
    research = AgentMode.objects.get(key="research")
    assert [(change.revision.number, change.change) for change in history_of(MODE, research.pk)] == [(2, "created")]


def test_a_dry_run_says_per_mode_what_it_would_do_and_writes_nothing(tmp_path):
    ddr = AgentMode.objects.get(key="ddr_authoring")
    path = write(
        tmp_path,
        catalog_file(
            RESEARCH,
            {"key": "general", "when_to_use": "Use this mode for anything.", "position": 7},
            {"key": "ddr_authoring", "display_name": ddr.display_name},
            {"key": "workflow_authoring", "is_default": True},
            tools=[SEARCH_TOOL],
        ),
    )
    revisions, entries = CatalogRevision.objects.count(), entry_count()

    out, _ = run("import_modes", str(path), "--update", "--dry-run")

    assert out == (
        "declared tool agent_source_search: would be created\n"
        "mode research: would be created\n"
        "mode general: would be updated (when_to_use, position)\n"
        "mode ddr_authoring: would be left unchanged\n"
        "mode workflow_authoring: would be updated (is_default)\n"
        "default: workflow_authoring\n"
        "Dry run, nothing changed: would have created 2, updated 2, left 1 unchanged.\n"
    )
    assert not AgentMode.objects.filter(key="research").exists()
    assert AgentMode.objects.get(key="general").is_default
    assert (CatalogRevision.objects.count(), entry_count()) == (revisions, entries)


def test_a_declared_tool_that_exists_needs_update_and_a_bad_one_is_reported(tmp_path):
    DeclaredTool.objects.create(**SEARCH_TOOL)
    bad = {"name": "agent_list_modes", "description": " ", "parameters": [], "color": "red"}
    path = write(tmp_path, catalog_file(tools=[SEARCH_TOOL, bad]))

    with pytest.raises(CommandError) as refused:
        run("import_modes", str(path))

    assert str(refused.value) == (
        f"{path} was not imported; nothing changed:\n"
        "  declared_tools[0] (name 'agent_source_search'): name: tool 'agent_source_search' is already declared; "
        'import with update on (--update, "update": true) to update it.\n'
        "  declared_tools[1] (name 'agent_list_modes'): color: unknown field.\n"
        "  declared_tools[1] (name 'agent_list_modes'): parameters: must be a JSON Schema mapping.\n"
        "  declared_tools[1] (name 'agent_list_modes'): description: This cannot be only spaces.\n"
        "  declared_tools[1] (name 'agent_list_modes'): name: 'agent_list_modes' is a server tool registered in "
        "code; a declaration cannot shadow it."
    )


def test_export_at_a_revision_is_the_revision_and_imports_back_to_it(tmp_path, alice_client, staff_api_client):
    with catalog_change(by=None):
        DeclaredTool.objects.create(**SEARCH_TOOL)
        AgentMode.objects.create(**RESEARCH)
    assert alice_client.get("/api/modes/").json()["catalogRevision"] == 2
    AgentMode.objects.filter(key="research").update(when_to_use="Use this mode for nothing.")
    DeclaredTool.objects.filter(name="agent_source_search").update(description="Gone wrong.")
    record_unrecorded_changes()
    assert alice_client.get("/api/modes/").json()["catalogRevision"] == 3

    exported, _ = run("export_modes", "--revision", "2", "--format", "json")
    over_api = staff_api_client.get("/api/catalog/revisions/2/").json()
    assert json.loads(exported) == {key: over_api[key] for key in ("format", "version", "modes", "declared_tools")}
    path = tmp_path / "revision-2.json"
    path.write_text(exported, encoding="utf-8")

    out, _ = run("import_modes", str(path), "--update")

    assert out.endswith("Created 0, updated 2, left 3 unchanged. Catalog revision: 4.\n")
    assert CatalogRevision.objects.get(number=4).catalog == CatalogRevision.objects.get(number=2).catalog


def test_export_refuses_an_unknown_revision_and_custom_only_with_a_revision():
    with pytest.raises(CommandError, match=r"^There is no catalog revision 9; revisions run from 1 to 1\.$"):
        run("export_modes", "--revision", "9")
    with pytest.raises(CommandError, match="--custom-only cannot be combined with --revision"):
        run("export_modes", "--revision", "1", "--custom-only")


@pytest.mark.parametrize("text", ["0", "-1", " 1", "+1", "١", "99999999999999999999", "9" * 4301, "two"])
def test_a_revision_option_takes_what_the_api_takes_as_a_revision_number(text):
    # The same rule as GET /api/catalog/revisions/<n>/: ASCII digits, 1 to 2**31 - 1.
    with pytest.raises(CommandError, match=r"is not a revision number \(1, 2, 3, \.\.\.\)\.$"):
        run("export_modes", "--revision", text)


def test_record_revision_records_a_change_made_past_the_services_and_then_finds_nothing():
    AgentMode.objects.filter(key="general").update(when_to_use="Use this mode for anything at all.")

    assert run("record_revision") == ("Recorded catalog revision 2.\n", "")
    assert CatalogRevision.objects.get(number=2).summary == "mode general: when_to_use"
    assert published_catalog().mode("general").when_to_use == "Use this mode for anything at all."
    assert run("record_revision") == ("Nothing to record.\n", "")
    assert CatalogRevision.objects.count() == 2


def test_under_review_record_revision_says_the_revision_it_records_is_pending_and_not_served(settings):
    settings.CATALOG_APPROVALS = 1  # a recorded change is a pending revision, as any change is
    AgentMode.objects.filter(key="general").update(when_to_use="Use this mode for anything at all.")

    assert run("record_revision") == (
        "Recorded catalog revision 2, pending: agents are served revision 1 until it is approved and published.\n", ""
    )
    assert published_catalog().revision == 1


def test_a_raw_update_that_breaks_a_rule_is_not_recorded_and_record_revision_names_the_rule():
    with connection.cursor() as cursor:  # no default mode: the database allows it, the catalog's rules do not
        cursor.execute("UPDATE modes_agentmode SET is_default = %s", [False])

    with pytest.raises(CommandError) as refused:
        run("record_revision")

    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith("This would break the catalog's rules: modes.E005: ")
    assert "No mode is the default mode." in message
    assert CatalogRevision.objects.count() == 1
    assert published_catalog().revision == 1
    assert published_catalog().default.key == "general"  # agents keep being served the published revision
