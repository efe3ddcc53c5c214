"""
The mode graph (issue 29): each mode's switch_targets and llm_can_enter, carried by the admin, the portable
file, the REST detail, agent_list_modes and every catalog revision.
"""

import json
import threading
from io import StringIO

import pytest
import yaml
from django.core.management import CommandError, call_command
from django.db import connection, transaction
from django.urls import reverse

from modes.catalog import catalog_at_revision, get_mode, published_catalog, published_release
from modes.checks import check_mode_catalog
from modes.graph import ModeSwitchRefused
from modes.models import AgentMode, CatalogRevision, CatalogRevisionEntry
from modes.releases import approve_revision, publish_revision
from modes.rules import InvalidCatalog
from modes.services import delete_modes, record_unrecorded_changes
from sessions_app.models import AgentSession, ModeChange
from sessions_app.services import create_session, set_session_mode

from ..agent_calls import change, session_in
from ..conftest import through_the_services
from .admin_forms import form_data

pytestmark = pytest.mark.django_db


@pytest.fixture
def review_mode(new_mode):
    """A mode the model may leave only for general, and may not enter by itself."""
    when_to_use = "Use this mode when the user wants a change reviewed."
    return new_mode("review", when_to_use=when_to_use, switch_targets=["general"], llm_can_enter=False)


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
    delete_modes(modes=[review_mode])
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
    through_the_services(review_mode.save)
    revision = latest_revision()
    assert revision.number == before + 1
    assert revision.summary == "mode review: llm_can_enter, switch_targets"
    recorded = catalog_at_revision(revision.number).by_key["review"]
    assert (recorded.switch_targets, recorded.llm_can_enter) == (["general", "ddr_authoring"], True)


def test_a_revision_recorded_before_the_policy_existed_reads_as_any_target_and_enterable(custom_mode):
    revision = latest_revision()
    # As the revisions written before migration 0008 have them.
    for entry in CatalogRevisionEntry.objects.filter(kind="mode"):
        del entry.content["switch_targets"], entry.content["llm_can_enter"]
        entry.save(update_fields=["content"])
    assert "switch_targets" not in revision.catalog["modes"][0]
    old = catalog_at_revision(revision.number).by_key["research"]
    assert (old.switch_targets, old.llm_can_enter) == ([], True)
    custom_mode.display_name = "Research, renamed"
    through_the_services(custom_mode.save)
    assert latest_revision().summary == "mode research: display_name"


def test_under_review_a_policy_change_is_pending_and_agents_keep_the_published_policy(
    settings, review_mode, django_user_model
):
    settings.CATALOG_APPROVALS = 1
    review_mode.llm_can_enter = True
    through_the_services(review_mode.save)
    pending = latest_revision().number
    assert published_catalog().by_key["review"].llm_can_enter is False
    reviewer = django_user_model.objects.create_user("reviewer", is_staff=True, is_superuser=True)
    approve_revision(number=pending, user=reviewer)
    publish_revision(number=pending, user=reviewer)
    assert published_catalog().by_key["review"].llm_can_enter is True


# --- Enforced: agent_change_mode ---------------------------------------------------------------------------------

REFUSED = "Mode 'review' cannot switch to 'deploy'. Modes it can switch to: general, review_notes."


def audit_rows():
    return list(ModeChange.objects.values_list("from_mode__key", "to_mode__key", "branch"))


@pytest.mark.parametrize("branch", [False, True], ids=["switch", "branch"])
def test_over_rest_a_forbidden_switch_is_a_failed_result_with_the_message_and_changes_nothing(
    alice_client, graph, branch
):
    session_id = session_in(alice_client, "review")
    rows, sessions = audit_rows(), AgentSession.objects.count()
    response = change(alice_client, session_id, "deploy", branch=branch)
    assert response.status_code == 400
    assert response.json() == {"successful": False, "result": None, "errorMessage": REFUSED}
    assert AgentSession.objects.get(pk=session_id).mode.key == "review"
    assert (audit_rows(), AgentSession.objects.count()) == (rows, sessions)


def test_a_target_outside_switch_targets_is_refused_even_when_the_model_may_enter_it(alice_client, graph):
    session_id = session_in(alice_client, "review")
    response = change(alice_client, session_id, "ddr_authoring")
    assert response.json()["errorMessage"] == (
        "Mode 'review' cannot switch to 'ddr_authoring'. Modes it can switch to: general, review_notes."
    )
    assert AgentSession.objects.get(pk=session_id).mode.key == "review"


@pytest.mark.parametrize("branch", [False, True], ids=["switch", "branch"])
def test_an_allowed_switch_succeeds_and_is_audited(alice_client, graph, branch):
    session_id = session_in(alice_client, "review")
    response = change(alice_client, session_id, "review_notes", branch=branch)
    assert response.status_code == 200, response.content
    assert json.loads(response.json()["result"])["mode"] == "review_notes"
    assert AgentSession.objects.get(pk=session_id).mode.key == "review_notes"
    assert audit_rows() == [("review", "review_notes", branch)]


def test_the_model_never_switches_into_a_mode_it_may_not_enter_but_a_session_can_start_there(alice_client, graph):
    for source in ("general", "review", "review_notes", "ddr_authoring"):
        session_id = session_in(alice_client, source)
        response = change(alice_client, session_id, "deploy")
        assert response.status_code == 400
        assert response.json()["errorMessage"].startswith(f"Mode {source!r} cannot switch to 'deploy'. ")
    deploy_session = session_in(alice_client, "deploy")
    assert AgentSession.objects.get(pk=deploy_session).mode.key == "deploy"
    assert audit_rows() == []
    # Staying is always allowed, and from deploy (which lists no targets) the model may go anywhere it may enter.
    assert change(alice_client, deploy_session, "deploy").status_code == 200
    assert change(alice_client, deploy_session, "general").status_code == 200
    assert audit_rows() == [("deploy", "deploy", False), ("deploy", "general", False)]


def test_staying_in_the_current_mode_is_allowed_whatever_its_targets(alice_client, graph):
    session_id = session_in(alice_client, "review_notes")
    assert change(alice_client, session_id, "review_notes").status_code == 200
    assert audit_rows() == [("review_notes", "review_notes", False)]


def test_the_command_refuses_a_forbidden_switch_in_one_line_and_changes_nothing(alice, graph):
    session = AgentSession.objects.create(owner=alice, mode=graph["review"])
    arguments = json.dumps({"mode": "deploy", "branch": False, "reason": "The user agreed."})
    with pytest.raises(CommandError) as caught:
        call_command(
            "invoke_tool", "agent_change_mode", arguments=arguments, session=str(session.pk), user="alice",
            stdout=StringIO(),
        )
    assert str(caught.value) == REFUSED
    assert AgentSession.objects.get(pk=session.pk).mode.key == "review"
    assert audit_rows() == []


def test_the_policy_agents_are_served_is_the_published_one(settings, alice_client, graph, django_user_model):
    settings.CATALOG_APPROVALS = 1
    session_id = session_in(alice_client, "review")
    graph["review"].switch_targets = ["general", "review_notes", "deploy"]
    graph["deploy"].llm_can_enter = True
    # One revision, pending: agents still get the published graph.
    through_the_services(lambda: (graph["review"].save(), graph["deploy"].save()))
    assert latest_revision().published_at is None
    assert change(alice_client, session_id, "deploy").json()["errorMessage"] == REFUSED


@pytest.mark.postgres(reason="needs PostgreSQL row locks")
@pytest.mark.usefixtures("modes_restored_after_flush")
class TestTheGraphIsJudgedUnderTheRowLock:
    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_a_switch_waiting_on_a_concurrent_change_is_judged_on_the_mode_that_change_left(
        self, django_user_model, new_mode
    ):
        user = django_user_model.objects.create_user(username="racer")
        new_mode("review", switch_targets=["general"])
        # In general, from which ddr_authoring is allowed.
        session = create_session(release=published_release(), owner=user, org=None)
        outcome = {}

        def switch():
            try:
                set_session_mode(
                    catalog=published_catalog(), session_id=session.pk, mode=get_mode("ddr_authoring"), reason="late",
                    user=user,
                )
                outcome["result"] = "moved"
            except ModeSwitchRefused as refusal:
                outcome["result"] = str(refusal)
            finally:
                connection.close()

        with transaction.atomic():  # a concurrent change holds the row while it moves the session to review
            set_session_mode(
                catalog=published_catalog(), session_id=session.pk, mode=get_mode("review"), reason="first", user=user
            )
            switcher = threading.Thread(target=switch)
            switcher.start()
            switcher.join(timeout=1)
            assert switcher.is_alive(), "the switch did not wait for the row lock"
        switcher.join(timeout=30)
        assert outcome["result"] == "Mode 'review' cannot switch to 'ddr_authoring'. Modes it can switch to: general."
        assert AgentSession.objects.get(pk=session.pk).mode.key == "review"
        assert list(ModeChange.objects.values_list("reason", flat=True)) == ["first"]


# --- Told to the model --------------------------------------------------------------------------------------------

SCHEMA_PATHS = {
    None: ("parameters",),
    "openai-chat": ("function", "parameters"),
    "openai-responses": ("parameters",),
    "anthropic": ("input_schema",),
    "mcp": ("inputSchema",),
}


def change_mode_enum(client, session_id, tool_format):
    query = {"toolFormat": tool_format} if tool_format else {}
    tools = client.get(f"/api/sessions/{session_id}/context/", query).json()["tools"]
    [schema] = [tool for tool in tools if "agent_change_mode" in (tool.get("name"), tool.get("function", {}).get("name"))]
    for step in SCHEMA_PATHS[tool_format]:
        schema = schema[step]
    return schema["properties"]["mode"]["enum"]


@pytest.mark.parametrize("tool_format", list(SCHEMA_PATHS), ids=lambda name: name or "tul-011")
def test_the_mode_enum_lists_exactly_the_allowed_targets_in_every_format_and_follows_the_session(
    alice_client, graph, tool_format
):
    session_id = session_in(alice_client, "review")
    assert change_mode_enum(alice_client, session_id, tool_format) == ["general", "review", "review_notes"]
    assert change(alice_client, session_id, "review_notes").status_code == 200
    assert change_mode_enum(alice_client, session_id, tool_format) == ["review", "review_notes"]
    assert change(alice_client, session_id, "review").status_code == 200
    assert change(alice_client, session_id, "general").status_code == 200
    assert change_mode_enum(alice_client, session_id, tool_format) == [
        "general", "ddr_authoring", "workflow_authoring", "review", "review_notes"
    ]
    deploy_session = session_in(alice_client, "deploy")  # the mode itself is listed, though the model may not enter it
    assert change_mode_enum(alice_client, deploy_session, tool_format) == [
        "general", "ddr_authoring", "workflow_authoring", "review", "review_notes", "deploy"
    ]


# --- Never stuck ----------------------------------------------------------------------------------------------------

STUCK = (
    "From 'ddr_authoring', 'workflow_authoring' the model cannot reach the default mode 'general' through switches "
    "it may make."
)


def test_recording_a_stuck_graph_is_refused_naming_the_stuck_modes_and_target_keys_that_name_no_mode(graph):
    # Written past the services: recording it (manage.py record_revision) judges it by the rules the checks use,
    # and records nothing, so the published revision, which the checks judge, keeps its graph.
    before = latest_revision().number
    AgentMode.objects.filter(key="ddr_authoring").update(switch_targets=["workflow_authoring"])
    AgentMode.objects.filter(key="workflow_authoring").update(switch_targets=["ddr_authoring", "nowhere"])
    AgentMode.objects.filter(key="general").update(llm_can_enter=False)
    with pytest.raises(InvalidCatalog) as caught:
        record_unrecorded_changes()
    errors = [error for error in caught.value.errors if error.id == "modes.E010"]
    assert [error.msg for error in errors] == [
        "Mode 'workflow_authoring' lists switch targets that name no mode: 'nowhere'.",
        "The default mode 'general' cannot be entered by the model (llm_can_enter is off).",
        "From 'ddr_authoring', 'workflow_authoring', 'review', 'review_notes', 'deploy' the model cannot reach the "
        "default mode 'general' through switches it may make.",
    ]
    assert all(error.hint.startswith("Let the model enter the default mode") for error in errors)
    assert len(errors) == len(caught.value.errors)
    assert latest_revision().number == before
    published = check_mode_catalog(databases=["default"])
    assert "modes.E010" not in [error.id for error in published]
    assert "modes.W004" in [error.id for error in published]  # the rows differ from every revision


def test_import_refuses_a_catalog_where_modes_cannot_reach_the_default_and_changes_nothing(tmp_path):
    document = {
        "format": "aptix-modes",
        "version": 1,
        "modes": [
            {"key": "ddr_authoring", "switch_targets": ["workflow_authoring"]},
            {"key": "workflow_authoring", "switch_targets": ["ddr_authoring"]},
        ],
    }
    path = tmp_path / "modes.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    with pytest.raises(CommandError) as caught:
        call_command("import_modes", str(path), "--update", stdout=StringIO(), stderr=StringIO())
    assert f"modes.E010: {STUCK}" in str(caught.value)
    assert [mode.switch_targets for mode in AgentMode.objects.all()] == [[], [], []]


def test_the_admin_refuses_an_edit_that_leaves_a_mode_stuck_and_saves_nothing(admin_client):
    through_the_services(
        lambda: AgentMode.objects.filter(key="ddr_authoring").update(switch_targets=["workflow_authoring"])
    )
    before = latest_revision().number
    workflow = AgentMode.objects.get(key="workflow_authoring")
    response = admin_client.post(
        reverse("admin:modes_agentmode_change", args=[workflow.pk]), form_data(workflow, switch_targets="ddr_authoring")
    )
    assert response.status_code == 200
    assert STUCK.replace("'", "&#x27;") in response.content.decode()
    assert AgentMode.objects.get(key="workflow_authoring").switch_targets == []
    assert latest_revision().number == before
