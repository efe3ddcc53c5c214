"""
Catalog revisions: every change of the catalog through the services, and one made past them once record_revision
records it (never before), is a numbered revision kept whole;
the listing, the context and the audit rows name the revision in force; any revision can be read back, and
a session's context rebuilt as it was then, byte for byte.
"""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from modes.catalog import published_catalog
from modes.models import AgentMode, CatalogRevision, DeclaredTool
from modes.services import record_unrecorded_changes

from ..conftest import through_the_services
from ..expected import (
    LIST_MODES_SCHEMA,
    SEED_MODE_KEYS,
    SEED_WHEN_TO_USE,
    change_mode_schema_in_session,
    prompt_with,
    seed_prompt,
)

pytestmark = pytest.mark.django_db

SEED_SUMMARY = "mode general created; mode ddr_authoring created; mode workflow_authoring created"
NEW_WHEN_TO_USE = "Use this mode for anything at all."


def latest():
    return CatalogRevision.objects.order_by("-number").first()


def listing(client, **query):
    response = client.get("/api/modes/", query)
    assert response.status_code == 200
    return response.json()


def context_text(client, session, **query):
    response = client.get(f"/api/sessions/{session.pk}/context/", query)
    assert response.status_code == 200, response.content
    return response.content


def change_mode(client, session, mode):
    response = client.post(
        "/api/tools/agent_change_mode/invoke/",
        {"arguments": {"mode": mode, "branch": False, "reason": "Test."}, "sessionId": str(session.pk)},
        format="json",
    )
    assert response.status_code == 200, response.content


# --- numbering ------------------------------------------------------------------------------------------


def test_the_migrated_catalog_is_revision_1_naming_the_seed_modes():
    first = CatalogRevision.objects.get(number=1)
    assert first.summary == SEED_SUMMARY
    assert first.created_by is None
    assert [mode["key"] for mode in first.catalog["modes"]] == ["general", "ddr_authoring", "workflow_authoring"]
    assert first.catalog["declared_tools"] == []
    assert latest().number == 1


def test_a_queryset_update_is_a_new_revision_once_recorded(alice_client):
    AgentMode.objects.filter(key="general").update(when_to_use=NEW_WHEN_TO_USE)
    # Past the services: in no revision, so agents are not served it.
    assert listing(alice_client)["catalogRevision"] == 1
    assert published_catalog().mode("general").when_to_use == SEED_WHEN_TO_USE[0][1]
    record_unrecorded_changes()  # a change made past the services, recorded as record_revision does

    assert listing(alice_client)["catalogRevision"] == 2
    revision = latest()
    assert (revision.number, revision.summary, revision.created_by) == (2, "mode general: when_to_use", None)
    assert revision.catalog["modes"][0]["when_to_use"] == NEW_WHEN_TO_USE


def test_raw_sql_on_declared_tools_is_served_only_once_recorded_as_a_revision(alice_client):
    through_the_services(lambda: DeclaredTool.objects.create(name="agent_ddr_manager", description="Manages DDRs."))
    assert listing(alice_client)["catalogRevision"] == 2
    with connection.cursor() as cursor:
        cursor.execute("UPDATE modes_declaredtool SET description = 'Manages DDR files.'")
    assert listing(alice_client)["catalogRevision"] == 2  # in no revision: not served
    assert published_catalog().client_tools["agent_ddr_manager"].description == "Manages DDRs."
    record_unrecorded_changes()

    assert listing(alice_client)["catalogRevision"] == 3
    assert published_catalog().client_tools["agent_ddr_manager"].description == "Manages DDR files."
    assert [(r.number, r.summary) for r in CatalogRevision.objects.all()[:2]] == [
        (3, "tool agent_ddr_manager: description"),
        (2, "tool agent_ddr_manager created"),
    ]


def test_a_write_that_leaves_the_catalog_as_it_was_is_no_new_revision(alice_client):
    AgentMode.objects.filter(key="general").update(when_to_use=AgentMode.objects.get(key="general").when_to_use)
    record_unrecorded_changes()  # a change made past the services, recorded as record_revision does
    assert listing(alice_client)["catalogRevision"] == 1
    assert latest().number == 1


def test_a_rename_reads_as_a_change_of_key_and_a_deletion_as_one(custom_mode, alice_client):
    listing(alice_client)
    AgentMode.objects.filter(key="research").update(key="investigation")
    record_unrecorded_changes()  # a change made past the services, recorded as record_revision does
    listing(alice_client)
    AgentMode.objects.filter(key="investigation").delete()
    record_unrecorded_changes()  # a change made past the services, recorded as record_revision does
    listing(alice_client)
    assert [r.summary for r in CatalogRevision.objects.all()[:3]] == [
        "mode investigation deleted",
        "mode investigation: key",
        "mode research created",
    ]


def test_reads_name_the_same_revision_until_the_catalog_changes(alice_client, alice_session, django_assert_num_queries):
    revision = listing(alice_client)["catalogRevision"]
    with django_assert_num_queries(2):  # the token with its user, the head row: the revision costs no query
        assert listing(alice_client)["catalogRevision"] == revision
    with django_assert_num_queries(3):  # the token with its user, the session, the head row
        assert json.loads(context_text(alice_client, alice_session))["catalogRevision"] == revision


def test_the_listing_tool_and_a_filtered_listing_carry_the_revision(alice_client):
    AgentMode.objects.filter(key="general").update(position=9)
    record_unrecorded_changes()  # a change made past the services, recorded as record_revision does
    response = alice_client.post("/api/tools/agent_list_modes/invoke/", {"arguments": {"filter": "ddr"}}, format="json")
    payload = json.loads(response.json()["result"])
    assert [mode["key"] for mode in payload["modes"]] == ["ddr_authoring"]
    assert payload["catalogRevision"] == 2


# --- the audit rows -------------------------------------------------------------------------------------


def test_each_mode_change_records_the_revision_in_force_and_the_history_shows_it(alice_client, alice_session):
    change_mode(alice_client, alice_session, "ddr_authoring")
    AgentMode.objects.filter(key="general").update(when_to_use=NEW_WHEN_TO_USE)
    record_unrecorded_changes()  # a change made past the services, recorded as record_revision does
    change_mode(alice_client, alice_session, "general")

    changes = alice_client.get(f"/api/sessions/{alice_session.pk}/mode-changes/").json()["results"]
    assert [(change["toMode"], change["catalogRevision"]) for change in changes] == [
        ("ddr_authoring", 1),
        ("general", 2),
    ]


def test_a_branch_records_the_revision_for_the_change_and_the_new_session(alice_client, alice_session):
    AgentMode.objects.filter(key="general").update(when_to_use=NEW_WHEN_TO_USE)
    record_unrecorded_changes()  # a change made past the services, recorded as record_revision does
    response = alice_client.post(
        "/api/tools/agent_change_mode/invoke/",
        {"arguments": {"mode": "ddr_authoring", "branch": True, "reason": "New work."}, "sessionId": str(alice_session.pk)},
        format="json",
    )
    assert response.status_code == 200
    change = alice_session.mode_changes.get()
    assert change.catalog_revision == 2
    assert change.branch_session.catalog_revision == 2


# --- reading a revision back ----------------------------------------------------------------------------


def test_a_context_rebuilt_at_an_old_revision_is_byte_for_byte_the_one_served_then(
    alice, alice_client, alice_session, custom_mode
):
    through_the_services(lambda: DeclaredTool.objects.create(name="agent_ddr_manager", description="Manages DDRs."))
    AgentMode.objects.filter(key="research").update(
        associated_tool_ids=["agent_list_modes", "agent_ddr_manager"], prompt="# Research\n\n  Cite every source.\n"
    )
    record_unrecorded_changes()  # a change made past the services, recorded as record_revision does
    change_mode(alice_client, alice_session, "research")
    formats = {"registry": {}, "openai-chat": {"toolFormat": "openai-chat"}}
    served = {name: context_text(alice_client, alice_session, **query) for name, query in formats.items()}
    # The custom mode (2) and the declared tool (3) are saved through the services; the mode's new tools (4) recorded.
    then = 4
    assert json.loads(served["registry"]) == {
        "catalogRevision": then,
        "systemPrompt": prompt_with("research", *SEED_WHEN_TO_USE, ("research", custom_mode.when_to_use)),
        "modeInstructions": "# Research\n\n  Cite every source.",
        "tools": [
            change_mode_schema_in_session([*SEED_MODE_KEYS, "research"]),
            {
                "type": "function",
                "name": "agent_ddr_manager",
                "description": "Manages DDRs.",
                "parameters": {"type": "object", "properties": {}, "required": []},
            },
            LIST_MODES_SCHEMA,
        ],
        "clientTools": ["agent_ddr_manager"],
        "unresolvedToolIds": [],
    }

    # Everything the context depends on changes afterwards: the mode's sentence and tools, the tool, the mode.
    AgentMode.objects.filter(key="research").update(
        when_to_use="Use this mode for research.", associated_tool_ids=[], prompt="Cite nothing."
    )
    record_unrecorded_changes()  # a change made past the services, recorded as record_revision does
    DeclaredTool.objects.filter(name="agent_ddr_manager").update(description="Does something else now.")
    record_unrecorded_changes()  # a change made past the services, recorded as record_revision does
    change_mode(alice_client, alice_session, "general")
    AgentMode.objects.filter(key="ddr_authoring").update(display_name="DDRs")
    record_unrecorded_changes()  # a change made past the services, recorded as record_revision does
    now = json.loads(context_text(alice_client, alice_session))
    assert now["catalogRevision"] > then

    for name, query in formats.items():
        assert context_text(alice_client, alice_session, revision=then, **query) == served[name]


def test_the_context_at_a_revision_uses_the_mode_the_session_had_then(alice_client, alice_session):
    first = json.loads(context_text(alice_client, alice_session))
    change_mode(alice_client, alice_session, "ddr_authoring")
    AgentMode.objects.filter(key="general").update(when_to_use=NEW_WHEN_TO_USE)
    record_unrecorded_changes()  # a change made past the services, recorded as record_revision does
    listing(alice_client)

    rebuilt = json.loads(context_text(alice_client, alice_session, revision=1))
    assert rebuilt["systemPrompt"] == seed_prompt("ddr_authoring")
    assert first["systemPrompt"] == seed_prompt("general")


def test_a_context_at_an_unknown_revision_or_before_the_session_is_a_404_saying_so(alice, alice_client):
    AgentMode.objects.filter(key="general").update(when_to_use=NEW_WHEN_TO_USE)
    record_unrecorded_changes()  # a change made past the services, recorded as record_revision does
    listing(alice_client)
    session = alice_client.post("/api/sessions/", {}, format="json").json()

    missing = alice_client.get(f"/api/sessions/{session['id']}/context/", {"revision": 7})
    assert (missing.status_code, missing.json()) == (
        404,
        {"detail": "There is no catalog revision 7; revisions run from 1 to 2."},
    )
    before = alice_client.get(f"/api/sessions/{session['id']}/context/", {"revision": 1})
    assert (before.status_code, before.json()) == (
        404,
        {"detail": f"Session {session['id']} was created after catalog revision 1."},
    )


@pytest.mark.parametrize("value", ["0", "-1", "one", ""])
def test_a_revision_that_is_not_a_number_is_a_400(alice_client, alice_session, value):
    response = alice_client.get(f"/api/sessions/{alice_session.pk}/context/", {"revision": value})
    assert response.status_code == 400
    assert list(response.json()) == ["revision"]


def test_mode_prompt_at_a_revision_prints_the_block_as_it_was():
    AgentMode.objects.filter(key="general").update(when_to_use=NEW_WHEN_TO_USE)
    record_unrecorded_changes()  # a change made past the services, recorded as record_revision does

    def prompt(*args):
        out = StringIO()
        call_command("mode_prompt", "--current", "ddr_authoring", *args, stdout=out)
        return out.getvalue()

    assert prompt("--revision", "1") == seed_prompt("ddr_authoring") + "\n"
    edited = prompt_with("ddr_authoring", ("general", NEW_WHEN_TO_USE), *SEED_WHEN_TO_USE[1:]) + "\n"
    assert prompt("--revision", "2") == prompt() == edited


def test_an_unknown_revision_is_a_command_error():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match=r"^There is no catalog revision 5; revisions run from 1 to 1\.$"):
        call_command("mode_prompt", "--revision", "5", stdout=StringIO())
