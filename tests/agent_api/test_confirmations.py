"""
The user confirms a mode change over REST (issue 40): under MODE_CHANGE_CONFIRMATION = "user" the invoke answers with
TUL-007 §4.1's question, and POST /api/sessions/<id>/confirmations/<uuid>/ takes the person's answer, once.
"""

import json
import uuid
from datetime import datetime, timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from modes.catalog import published_catalog
from modes.models import AgentMode
from sessions_app.confirmations import who_confirms
from sessions_app.models import AgentSession, ModeChange, ModeChangeConfirmation, ModeChangeRefusal
from sessions_app.services import ask_mode_change

from ..conftest import through_the_services
from ..expected import DDR_ID, GENERAL_ID, WORKFLOW_ID

pytestmark = pytest.mark.django_db

PROPOSAL = {"mode": "ddr_authoring", "branch": False, "reason": "The user wants to write a DDR."}
QUESTION = (
    "It seems like what you are asking for would be better served by **DDR Authoring** mode.\n"
    "Would you like to:\n"
    "1) Stay in the current mode,\n"
    "2) Switch this session to **DDR Authoring**, or\n"
    "3) Switch to **DDR Authoring** and start a new session for this work?"
)
WAITING = "Waiting for the user to confirm this mode change."
STAYED = "The user chose to stay in the current mode."


@pytest.fixture
def user_confirms(settings):
    settings.MODE_CHANGE_CONFIRMATION = "user"


def invoke(client, session, arguments=PROPOSAL):
    body = {"arguments": arguments, "sessionId": str(session.pk)}
    return client.post("/api/tools/agent_change_mode/invoke/", body, format="json")


def answer(client, session, confirmation_id, choice="switch", **extra):
    url = f"/api/sessions/{session.pk}/confirmations/{confirmation_id}/"
    return client.post(url, {"choice": choice, **extra}, format="json")


def asked(client, session, arguments=PROPOSAL) -> str:
    response = invoke(client, session, arguments)
    assert response.status_code == 200, response.json()
    return response.json()["confirmation"]["id"]


def mode_of(session) -> str:
    return AgentSession.objects.get(pk=session.pk).mode_id


def test_by_default_the_models_call_changes_the_mode_at_once_as_confirmed_by_the_model(alice_client, alice_session):
    response = invoke(alice_client, alice_session)

    assert (response.status_code, list(response.json())) == (200, ["successful", "result", "errorMessage"])
    assert mode_of(alice_session) == DDR_ID
    change = ModeChange.objects.get()
    assert (change.confirmed_by, change.confirmation) == ("model", None)


def test_under_user_the_invoke_asks_the_question_and_changes_nothing(user_confirms, alice_client, alice_session):
    before = timezone.now()
    response = invoke(alice_client, alice_session)

    body = response.json()
    assert response.status_code == 200
    assert (body["successful"], body["result"], body["errorMessage"]) == (False, None, WAITING)
    confirmation = body["confirmation"]
    assert uuid.UUID(confirmation["id"])
    assert (confirmation["question"], confirmation["choices"]) == (QUESTION, ["stay", "switch", "branch"])
    expires = datetime.fromisoformat(confirmation["expiresAt"].replace("Z", "+00:00"))
    assert before + timedelta(minutes=10) <= expires <= timezone.now() + timedelta(minutes=10)
    assert (mode_of(alice_session), ModeChange.objects.count()) == (GENERAL_ID, 0)


def test_switch_changes_the_mode_recorded_as_the_users_rest_confirmation(user_confirms, alice_client, alice_session):
    confirmation_id = asked(alice_client, alice_session)

    response = answer(alice_client, alice_session, confirmation_id, "switch")

    assert response.json() == {
        "successful": True,
        "result": '{"success":true,"mode":"ddr_authoring","branch":false,"reason":"The user wants to write a DDR."}',
        "errorMessage": None,
    }
    assert mode_of(alice_session) == DDR_ID
    change = ModeChange.objects.get()
    assert (change.confirmed_by, str(change.confirmation_id), change.confirmation.channel) == (
        "user", confirmation_id, "rest"
    )


def test_the_users_branch_overrides_the_models_switch_and_the_result_says_so(user_confirms, alice_client, alice_session):
    confirmation_id = asked(alice_client, alice_session)  # the model proposed branch=false

    result = answer(alice_client, alice_session, confirmation_id, "branch").json()

    assert result["successful"], result
    payload = json.loads(result["result"])
    assert payload["branch"] is True
    child = AgentSession.objects.get(pk=payload["branchSessionId"])
    assert (child.parent_id, child.mode_id, mode_of(alice_session)) == (alice_session.pk, DDR_ID, DDR_ID)


def test_stay_changes_nothing_and_is_kept_as_a_declined_proposal(user_confirms, alice_client, alice_session):
    confirmation_id = asked(alice_client, alice_session)

    response = answer(alice_client, alice_session, confirmation_id, "stay")

    assert (response.status_code, response.json()) == (
        200, {"successful": False, "result": None, "errorMessage": STAYED}
    )
    assert (mode_of(alice_session), ModeChange.objects.count()) == (GENERAL_ID, 0)
    assert ModeChangeConfirmation.objects.get(pk=confirmation_id).choice == "stay"


def test_an_answer_is_taken_once(user_confirms, alice_client, alice_session):
    confirmation_id = asked(alice_client, alice_session)
    answer(alice_client, alice_session, confirmation_id, "stay")

    again = answer(alice_client, alice_session, confirmation_id, "switch")

    assert again.status_code == 409
    assert again.json()["errorMessage"].startswith(f"Confirmation {confirmation_id} was answered already (stay)")
    assert (mode_of(alice_session), ModeChange.objects.count()) == (GENERAL_ID, 0)


def test_an_answer_after_ten_minutes_is_a_410_and_changes_nothing(user_confirms, alice_client, alice_session, clock):
    confirmation_id = asked(alice_client, alice_session)
    clock.advance(minutes=10, seconds=1)

    response = answer(alice_client, alice_session, confirmation_id, "switch")

    assert response.status_code == 410
    assert "expired" in response.json()["errorMessage"]
    assert (mode_of(alice_session), ModeChangeConfirmation.objects.get().answered_at) == (GENERAL_ID, None)


def test_another_users_confirmation_is_not_found(user_confirms, alice_client, alice_session, bob_client, bob_session):
    confirmation_id = asked(alice_client, alice_session)

    on_alices_session = answer(bob_client, alice_session, confirmation_id, "switch")
    on_bobs_session = answer(bob_client, bob_session, confirmation_id, "switch")

    assert on_alices_session.status_code == on_bobs_session.status_code == 404
    assert on_alices_session.json()["errorMessage"] == f"No session {alice_session.pk} was found for you."
    assert on_bobs_session.json()["errorMessage"] == (
        f"No confirmation {confirmation_id} was found for session {bob_session.pk}."
    )
    assert (mode_of(alice_session), ModeChangeConfirmation.objects.get().answered_at) == (GENERAL_ID, None)


@pytest.mark.parametrize(
    ("body", "status"),
    [({"choice": "maybe"}, 400), ({}, 400), ({"choice": "switch", "mode": "general"}, 400), ({"choice": 2}, 400)],
)
def test_bad_answers_are_400s_and_change_nothing(user_confirms, alice_client, alice_session, body, status):
    confirmation_id = asked(alice_client, alice_session)
    url = f"/api/sessions/{alice_session.pk}/confirmations/{confirmation_id}/"

    response = alice_client.post(url, body, format="json")

    assert response.status_code == status, response.json()
    assert ModeChangeConfirmation.objects.get().answered_at is None


def test_an_id_that_is_no_uuid_is_not_found(user_confirms, alice_client, alice_session):
    assert answer(alice_client, alice_session, "not-a-uuid").status_code == 404


def test_a_branch_over_the_session_limit_is_a_429_and_the_question_stays(
    user_confirms, settings, alice_client, alice_session
):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "session-create": "1/day"},
    }
    confirmation_id = asked(alice_client, alice_session)
    assert alice_client.post("/api/sessions/", {}, format="json").status_code == 201  # the minute's one session

    refused = answer(alice_client, alice_session, confirmation_id, "branch")

    assert refused.status_code == 429
    assert ModeChangeConfirmation.objects.get().answered_at is None
    assert answer(alice_client, alice_session, confirmation_id, "switch").json()["successful"] is True


# Left for another mode; or left and come back, so the session is in the mode the question was asked in again.
@pytest.mark.parametrize(("moves", "mode_now"), [(["workflow_authoring"], WORKFLOW_ID),
                                                 (["workflow_authoring", "general"], GENERAL_ID)])
def test_a_question_about_leaving_a_mode_the_session_has_left_since_is_refused(
    user_confirms, alice_client, alice_session, moves, mode_now
):
    to_ddr = asked(alice_client, alice_session)
    for mode in moves:
        moved = answer(alice_client, alice_session, asked(alice_client, alice_session, {**PROPOSAL, "mode": mode}))
        assert moved.json()["successful"] is True

    stale = answer(alice_client, alice_session, to_ddr, "switch")

    assert stale.status_code == 409
    assert "asked about leaving a mode that the session has left since" in stale.json()["errorMessage"]
    assert (mode_of(alice_session), ModeChange.objects.count()) == (mode_now, len(moves))


def test_a_change_stamped_by_a_host_whose_clock_runs_fast_does_not_outdate_a_later_question(
    user_confirms, alice_client, alice_session
):
    # Judged by times, a question asked after it, on a host with the right time, was refused as outdated.
    first = asked(alice_client, alice_session, {**PROPOSAL, "mode": "workflow_authoring"})
    assert answer(alice_client, alice_session, first).json()["successful"] is True
    ModeChange.objects.update(changed_at=timezone.now() + timedelta(seconds=30))

    later = answer(alice_client, alice_session, asked(alice_client, alice_session))

    assert later.json()["successful"] is True
    assert (mode_of(alice_session), ModeChange.objects.count()) == (DDR_ID, 2)


def test_a_question_asked_over_mcp_is_not_answered_over_rest(user_confirms, alice, alice_client, alice_session):
    question = ask_mode_change(
        catalog=published_catalog(), session_id=alice_session.pk, mode=published_catalog().mode("ddr_authoring"),
        reason="DDR.", user=alice, branch=False, channel="mcp",
    )

    response = answer(alice_client, alice_session, question.pk, "switch")

    assert response.status_code == 409
    assert response.json()["errorMessage"].startswith(f"Confirmation {question.pk} was asked over MCP: answer it there")
    assert (mode_of(alice_session), ModeChangeConfirmation.objects.get().answered_at) == (GENERAL_ID, None)


def test_a_switch_the_mode_graph_forbids_is_refused_without_a_question(user_confirms, graph, alice_client, alice_session):
    response = invoke(alice_client, alice_session, {**PROPOSAL, "mode": "deploy"})

    assert response.status_code == 400
    assert "confirmation" not in response.json()
    assert ModeChangeConfirmation.objects.count() == 0


def test_the_answer_is_judged_against_the_catalog_published_when_it_comes(user_confirms, alice_client, alice_session):
    confirmation_id = asked(alice_client, alice_session)
    through_the_services(lambda: AgentMode.objects.filter(pk=DDR_ID).update(llm_can_enter=False))

    result = answer(alice_client, alice_session, confirmation_id, "switch").json()

    assert result["successful"] is False
    assert "ddr_authoring" in result["errorMessage"]
    assert (mode_of(alice_session), ModeChange.objects.count()) == (GENERAL_ID, 0)
    assert ModeChangeRefusal.objects.count() == 1  # counted as any refusal of the mode graph, for a rollout's guard too
    # The question is still open, and can still be declined.
    assert ModeChangeConfirmation.objects.get().answered_at is None
    assert answer(alice_client, alice_session, confirmation_id, "stay").json()["errorMessage"] == STAYED


def test_an_answer_for_a_mode_no_longer_published_leaves_the_question_open(user_confirms, alice_client, alice_session):
    confirmation_id = asked(alice_client, alice_session)
    through_the_services(lambda: AgentMode.objects.filter(pk=DDR_ID).delete())

    gone = answer(alice_client, alice_session, confirmation_id, "switch").json()

    assert gone["errorMessage"].endswith("the proposed mode is no longer in the published catalog. Nothing changed.")
    assert (mode_of(alice_session), ModeChangeConfirmation.objects.get().answered_at) == (GENERAL_ID, None)


@pytest.mark.parametrize(("setting", "entry", "asks", "by"), [
    ("user", "none", False, "none"),
    ("model", "user", True, None),
    ("model", "none", False, "none"),
])
def test_a_modes_entry_confirmation_overrides_the_setting(settings, alice_client, alice_session, setting, entry, asks, by):
    settings.MODE_CHANGE_CONFIRMATION = setting
    through_the_services(lambda: AgentMode.objects.filter(pk=DDR_ID).update(entry_confirmation=entry))

    body = invoke(alice_client, alice_session).json()

    assert ("confirmation" in body, mode_of(alice_session) == DDR_ID) == (asks, not asks)
    if by:
        assert ModeChange.objects.get().confirmed_by == by


@pytest.mark.parametrize("setting", ["model", "user"])
@pytest.mark.parametrize("value", ["USER", "", "model", "always"])
def test_an_entry_confirmation_no_rule_allows_asks_the_user(settings, setting, value):
    # A value modes.E011 reports, in a catalog served past the rules: the user is asked, never a change unasked.
    settings.MODE_CHANGE_CONFIRMATION = setting
    assert who_confirms(AgentMode(entry_confirmation=value)) == "user"


def test_a_command_cannot_ask_the_user_and_refuses_in_one_line(user_confirms, alice, alice_session):
    with pytest.raises(CommandError, match="this client cannot ask the user"):
        call_command(
            "invoke_tool", "agent_change_mode", "--user", alice.username, "--session", str(alice_session.pk),
            "--arguments", '{"mode": "ddr_authoring", "branch": false, "reason": "DDR."}', stdout=StringIO(),
        )
    assert mode_of(alice_session) == GENERAL_ID


def test_a_client_that_cannot_ask_is_told_of_the_mode_graphs_refusal_first(user_confirms, graph, alice, alice_session):
    # The refusal needs no question (issue 40's order), so it is what any client is told, and it is recorded.
    with pytest.raises(CommandError, match="deploy") as refused:
        call_command(
            "invoke_tool", "agent_change_mode", "--user", alice.username, "--session", str(alice_session.pk),
            "--arguments", '{"mode": "deploy", "branch": false, "reason": "Deploy it."}', stdout=StringIO(),
        )
    assert "cannot ask the user" not in str(refused.value)
    assert ModeChangeRefusal.objects.count() == 1


def test_under_user_the_model_is_told_to_call_once_and_not_ask_in_chat(user_confirms, alice_client, alice_session):
    tools = alice_client.get(f"/api/sessions/{alice_session.pk}/context/").json()["tools"]
    description = next(tool for tool in tools if tool["name"] == "agent_change_mode")["description"]

    assert "the user's client asks the user to confirm before anything changes" in description
    assert "Call it once, without asking in chat first" in description


@pytest.mark.postgres(reason="two transactions at once, queued on a row lock")
@pytest.mark.usefixtures("modes_restored_after_flush")
class TestAnswersAtOnce:
    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_two_answers_sent_at_once_make_one_change(self, settings, alice_client, alice_session, at_once):
        settings.MODE_CHANGE_CONFIRMATION = "user"
        confirmation_id = asked(alice_client, alice_session)
        statuses = []

        at_once(*[lambda: statuses.append(answer(alice_client, alice_session, confirmation_id).status_code)] * 2)

        assert sorted(statuses) == [200, 409]
        assert ModeChange.objects.filter(session=alice_session).count() == 1
