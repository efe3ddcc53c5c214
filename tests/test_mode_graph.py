"""
The mode graph (issue 29): each mode's switch_targets and llm_can_enter, carried by the admin, the portable
file, the REST detail, agent_list_modes and every catalog revision.
"""

import json
from io import StringIO

import pytest
import yaml
from django.core.management import CommandError, call_command
from django.urls import reverse

from modes.catalog import catalog_at_revision, current_catalog
from modes.models import AgentMode, CatalogRevision
from modes.releases import approve_revision, publish_revision
from tests.test_admin import form_data

pytestmark = pytest.mark.django_db

GENERAL_ID = "3F8E4F377F7A4C189C7F6A8B9F945C11"


@pytest.fixture
def review_mode(db):
    """A mode the model may leave only for general, and may not enter by itself."""
    return AgentMode.objects.create(
        key="review",
        display_name="Review",
        when_to_use="Use this mode when the user wants a change reviewed.",
        switch_targets=["general"],
        llm_can_enter=False,
    )


def latest_revision():
    return CatalogRevision.objects.order_by("-number").first()


# --- The fields ------------------------------------------------------------------------------------------------


def test_a_new_mode_may_switch_anywhere_and_be_entered_by_the_model():
    mode = AgentMode(key="plain", display_name="Plain", when_to_use="Use this mode for plain things.")
    assert (mode.switch_targets, mode.llm_can_enter) == ([], True)
    assert all(m.switch_targets == [] and m.llm_can_enter for m in AgentMode.objects.all())


def test_the_admin_form_saves_the_policy(admin_client):
    response = admin_client.post(
        reverse("admin:modes_agentmode_add"),
        {**form_data(), "switch_targets": "general\nddr_authoring\n"} | {"llm_can_enter": ""},
    )
    assert response.status_code == 302, response.content
    mode = AgentMode.objects.get(key="research")
    assert (mode.switch_targets, mode.llm_can_enter) == (["general", "ddr_authoring"], False)


def test_the_admin_form_refuses_a_target_that_is_not_a_mode_key_and_saves_nothing(admin_client):
    response = admin_client.post(reverse("admin:modes_agentmode_add"), form_data(switch_targets="General Mode"))
    assert response.status_code == 200
    assert "These are not mode keys (lower-case letters, digits and underscores): &#x27;General Mode&#x27;." in (
        response.content.decode()
    )
    assert not AgentMode.objects.filter(key="research").exists()


# --- Portable file -------------------------------------------------------------------------------------------


def test_export_then_import_carries_the_policy(review_mode, tmp_path):
    out = StringIO()
    call_command("export_modes", "--custom-only", stdout=out)
    entry = yaml.safe_load(out.getvalue())["modes"][0]
    assert (entry["switch_targets"], entry["llm_can_enter"]) == (["general"], False)
    review_mode.delete()
    path = tmp_path / "modes.yaml"
    path.write_text(out.getvalue(), encoding="utf-8")
    call_command("import_modes", str(path), stdout=StringIO(), stderr=StringIO())
    imported = AgentMode.objects.get(key="review")
    assert (imported.switch_targets, imported.llm_can_enter) == (["general"], False)


def test_import_refuses_a_policy_of_the_wrong_type_naming_the_field(tmp_path):
    document = {
        "format": "aptix-modes",
        "version": 1,
        "modes": [
            {
                "key": "scout",
                "display_name": "Scout",
                "when_to_use": "Use this mode when the user wants something looked up.",
                "switch_targets": "general",
                "llm_can_enter": "no",
            }
        ],
    }
    path = tmp_path / "modes.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    with pytest.raises(CommandError) as caught:
        call_command("import_modes", str(path), stdout=StringIO(), stderr=StringIO())
    assert "modes[0] (key 'scout'): llm_can_enter: must be true or false." in str(caught.value)
    assert "modes[0] (key 'scout'): switch_targets: must be a list of text lines." in str(caught.value)
    assert not AgentMode.objects.filter(key="scout").exists()


# --- What agents and clients are shown -------------------------------------------------------------------------


def test_the_rest_detail_and_agent_list_modes_show_the_policy(alice_client, review_mode):
    detail = alice_client.get("/api/modes/review/").json()
    assert (detail["switchTargets"], detail["llmCanEnter"]) == (["general"], False)
    listed = alice_client.post("/api/tools/agent_list_modes/invoke/", {}, format="json").json()
    modes = {mode["key"]: mode for mode in json.loads(listed["result"])["modes"]}
    assert (modes["review"]["switchTargets"], modes["review"]["llmCanEnter"]) == (["general"], False)
    assert (modes["general"]["switchTargets"], modes["general"]["llmCanEnter"]) == ([], True)


# --- Revisions and releases ------------------------------------------------------------------------------------


def test_a_policy_change_is_a_revision_that_names_the_fields(review_mode):
    before = latest_revision().number
    review_mode.switch_targets = ["general", "ddr_authoring"]
    review_mode.llm_can_enter = True
    review_mode.save()
    revision = latest_revision()
    assert revision.number == before + 1
    assert revision.summary == "mode review: llm_can_enter, switch_targets"
    recorded = catalog_at_revision(revision.number).by_key["review"]
    assert (recorded.switch_targets, recorded.llm_can_enter) == (["general", "ddr_authoring"], True)


def test_a_revision_recorded_before_the_policy_existed_reads_as_any_target_and_enterable(custom_mode):
    revision = latest_revision()
    for entry in revision.catalog["modes"]:  # as a revision written before migration 0008 has it
        del entry["switch_targets"], entry["llm_can_enter"]
    revision.save()
    old = catalog_at_revision(revision.number).by_key["research"]
    assert (old.switch_targets, old.llm_can_enter) == ([], True)
    custom_mode.display_name = "Research, renamed"
    custom_mode.save()
    assert latest_revision().summary == "mode research: display_name"


def test_under_review_a_policy_change_is_pending_and_agents_keep_the_published_policy(
    settings, review_mode, django_user_model
):
    settings.CATALOG_APPROVALS = 1
    review_mode.llm_can_enter = True
    review_mode.save()
    pending = latest_revision().number
    assert current_catalog().by_key["review"].llm_can_enter is False
    reviewer = django_user_model.objects.create_user("reviewer", is_staff=True, is_superuser=True)
    approve_revision(number=pending, user=reviewer)
    publish_revision(number=pending, user=reviewer)
    assert current_catalog().by_key["review"].llm_can_enter is True
