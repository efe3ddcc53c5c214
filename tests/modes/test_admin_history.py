"""
Mode history in the admin, through the real forms: each edit is recorded with its user and diff and is one
catalog revision; an admin reverts a mode, or restores a deleted one, from its history, with the same
validation as an edit.
"""

from html import escape

import pytest
from django.urls import reverse

from modes.catalog import build_system_prompt
from modes.models import AgentMode, CatalogRevision, DeclaredTool

from ..expected import DDR_ID, GENERAL_ID, WORKFLOW_ID
from .admin_forms import CHANGELIST, change_url, form_data, form_errors

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]

SEED_WHEN_TO_USE = "Use this mode for everyday Q&A, explanation, and lightweight assistance."
EDITED = "Use this mode for small talk only."


def history_url(pk, model="agentmode"):
    return reverse(f"admin:modes_{model}_history", args=[pk])


def revert_url(pk, record, model="agentmode"):
    return reverse(f"admin:modes_{model}_simple_history", args=[pk, record.history_id])


def revisions():
    return [(revision.number, revision.summary, revision.created_by) for revision in CatalogRevision.objects.all()]


def edit_general(admin_client, **changes):
    general = AgentMode.objects.get(pk=GENERAL_ID)
    return admin_client.post(change_url(GENERAL_ID), form_data(general, **changes))


def test_an_edit_is_recorded_with_its_user_and_diff_and_is_one_revision(admin_client, admin_user):
    assert edit_general(admin_client, when_to_use=EDITED).status_code == 302

    record = AgentMode.history.filter(id=GENERAL_ID).first()
    assert (record.history_type, record.history_user, record.when_to_use) == ("~", admin_user, EDITED)
    delta = record.diff_against(record.prev_record)
    assert [(change.field, change.old, change.new) for change in delta.changes] == [
        ("when_to_use", SEED_WHEN_TO_USE, EDITED)
    ]
    assert revisions()[0] == (2, "mode general: when_to_use", admin_user)

    page = admin_client.get(history_url(GENERAL_ID))
    assert page.status_code == 200
    text = page.content.decode()
    assert f"<strong>When to use:</strong>\n                    {escape(SEED_WHEN_TO_USE)}" in text
    assert escape(EDITED) in text


def test_saving_the_form_unchanged_adds_no_revision(admin_client):
    assert edit_general(admin_client).status_code == 302
    assert [number for number, *_ in revisions()] == [1]


def test_reordering_on_the_list_is_one_revision(admin_client, admin_user):
    response = admin_client.post(
        CHANGELIST,
        {
            "form-TOTAL_FORMS": "3",
            "form-INITIAL_FORMS": "3",
            "form-0-id": GENERAL_ID,
            "form-0-position": "1",
            "form-1-id": DDR_ID,
            "form-1-position": "3",
            "form-2-id": WORKFLOW_ID,
            "form-2-position": "2",
            "_save": "Save",
        },
    )
    assert response.status_code == 302
    assert revisions()[0] == (2, "mode workflow_authoring: position; mode ddr_authoring: position", admin_user)
    assert len(revisions()) == 2


def test_making_a_mode_the_default_is_one_revision_in_both_histories(admin_client, admin_user):
    admin_client.post(CHANGELIST, {"action": "make_default", "_selected_action": [DDR_ID], "index": 0})

    assert revisions()[0] == (2, "mode general: is_default; mode ddr_authoring: is_default", admin_user)
    for pk, is_default in ((GENERAL_ID, False), (DDR_ID, True)):
        record = AgentMode.history.filter(id=pk).first()
        assert (record.is_default, record.history_user) == (is_default, admin_user)


def test_a_revert_restores_the_old_values_and_prompt_and_is_recorded(admin_client, admin_user):
    edit_general(admin_client, when_to_use=EDITED, mode_instructions="Be brief.")
    assert f"- general: {EDITED}" in build_system_prompt("general")
    original = AgentMode.history.filter(id=GENERAL_ID).earliest()

    page = admin_client.get(revert_url(GENERAL_ID, original))
    assert page.status_code == 200
    assert page.context["adminform"].form.initial["when_to_use"] == SEED_WHEN_TO_USE
    response = admin_client.post(revert_url(GENERAL_ID, original), form_data(original.instance))

    assert response.status_code == 302
    general = AgentMode.objects.get(pk=GENERAL_ID)
    assert general.when_to_use == SEED_WHEN_TO_USE
    assert general.mode_instructions == original.instance.mode_instructions
    assert f"- general: {SEED_WHEN_TO_USE}" in build_system_prompt("general")
    assert revisions()[0] == (3, "mode general: when_to_use, mode_instructions", admin_user)
    assert CatalogRevision.objects.get(number=3).catalog == CatalogRevision.objects.get(number=1).catalog
    assert AgentMode.history.filter(id=GENERAL_ID).first().history_user == admin_user


def test_a_revert_is_validated_like_an_edit(admin_client):
    original = AgentMode.history.filter(id=GENERAL_ID).earliest()
    response = admin_client.post(
        revert_url(GENERAL_ID, original), form_data(original.instance, when_to_use="Two\nlines.")
    )

    assert response.status_code == 200
    assert "This must be a single line: it is rendered inline in the system prompt." in form_errors(response)["when_to_use"]
    assert AgentMode.objects.get(pk=GENERAL_ID).when_to_use == SEED_WHEN_TO_USE
    assert len(revisions()) == 1


def test_a_deleted_mode_is_listed_and_can_be_restored_from_its_history(admin_client, admin_user):
    admin_client.post(reverse("admin:modes_agentmode_add"), form_data())
    research = AgentMode.objects.get(key="research")
    response = admin_client.post(reverse("admin:modes_agentmode_delete", args=[research.pk]), {"post": "yes"})
    assert response.status_code == 302
    assert not AgentMode.objects.filter(key="research").exists()
    assert revisions()[0][:2] == (3, "mode research deleted")

    changelist = admin_client.get(CHANGELIST).content.decode()
    assert "Deleted agent modes" in changelist
    assert history_url(research.pk) in changelist
    assert admin_client.get(history_url(research.pk)).status_code == 200

    last_state = AgentMode.history.filter(id=research.pk, history_type="+").get()
    response = admin_client.post(revert_url(research.pk, last_state), form_data(last_state.instance))

    assert response.status_code == 302
    restored = AgentMode.objects.get(pk=research.pk)
    assert (restored.key, restored.when_to_use) == ("research", last_state.when_to_use)
    assert revisions()[0] == (4, "mode research created", admin_user)
    assert "Deleted agent modes" not in admin_client.get(CHANGELIST).content.decode()


def test_a_declared_tools_edit_is_recorded_and_is_a_revision(admin_client, admin_user):
    tool = DeclaredTool.objects.create(name="agent_ddr_manager", description="Manages DDRs.")
    response = admin_client.post(
        reverse("admin:modes_declaredtool_change", args=[tool.pk]),
        {"name": tool.name, "description": "Manages DDR files.", "parameters": '{"type": "object", "properties": {}, "required": []}'},
    )

    assert response.status_code == 302
    assert DeclaredTool.history.filter(id=tool.pk).first().history_user == admin_user
    assert revisions()[0] == (3, "tool agent_ddr_manager: description", admin_user)


def test_revisions_are_listed_in_the_admin_and_cannot_be_changed(admin_client):
    edit_general(admin_client, when_to_use=EDITED)
    page = admin_client.get(reverse("admin:modes_catalogrevision_changelist"))
    assert page.status_code == 200
    assert "mode general: when_to_use" in page.content.decode()
    assert admin_client.get(reverse("admin:modes_catalogrevision_add")).status_code == 403
    detail = admin_client.post(reverse("admin:modes_catalogrevision_change", args=[2]), {"summary": "Changed."})
    assert detail.status_code == 403
    assert CatalogRevision.objects.get(number=2).summary == "mode general: when_to_use"


def test_a_catalog_revision_is_shown_but_cannot_be_added_changed_or_deleted(admin_client):
    seed = CatalogRevision.objects.get(number=1)
    page = admin_client.get(reverse("admin:modes_catalogrevision_change", args=[1]))
    assert page.status_code == 200
    assert 'name="summary"' not in page.content.decode()

    answers = [
        admin_client.get(reverse("admin:modes_catalogrevision_add")).status_code,
        admin_client.post(reverse("admin:modes_catalogrevision_change", args=[1]), {"summary": "Forged"}).status_code,
        admin_client.post(reverse("admin:modes_catalogrevision_delete", args=[1]), {"post": "yes"}).status_code,
    ]
    assert answers == [403, 403, 403]
    assert [(revision.number, revision.summary, revision.catalog) for revision in CatalogRevision.objects.all()] == [
        (1, seed.summary, seed.catalog)
    ]
