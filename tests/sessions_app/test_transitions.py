"""
The numbers behind the mode graph (issue 29): switches the graph refuses are recorded (never the session or its
audit), and GET /api/catalog/transitions/ counts, for staff, the switches taken, branched and refused, and the
proposals the user declined (issue 40), per pair of modes and per day, as the rows the test made say.
"""

import json
from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db.models import F

from modes.catalog import published_catalog
from modes.models import AgentMode
from modes.services import delete_modes
from sessions_app.models import AgentSession, ModeChange, ModeChangeConfirmation, ModeChangeRefusal, TransitionHour
from sessions_app.services import ask_mode_change
from sessions_app.tools import answer_mode_change
from sessions_app.transitions import transition_counts

from ..agent_calls import change, session_in

pytestmark = pytest.mark.django_db

URL = "/api/catalog/transitions/"


def refusals():
    keys = dict(AgentMode.objects.values_list("id", "key"))
    return [(keys[r.from_mode_id], keys[r.to_mode_id]) for r in ModeChangeRefusal.objects.all()]


# --- Refusals recorded ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("branch", [False, True], ids=["switch", "branch"])
def test_a_refused_switch_is_recorded_and_the_session_and_its_audit_stay_as_they_were(alice_client, graph, branch):
    session_id = session_in(alice_client, "review")
    before = AgentSession.objects.get(pk=session_id)
    assert change(alice_client, session_id, "deploy", branch=branch).status_code == 400
    assert refusals() == [("review", "deploy")]
    after = AgentSession.objects.get(pk=session_id)
    assert (after.mode_id, after.updated_at) == (before.mode_id, before.updated_at)
    assert (ModeChange.objects.count(), AgentSession.objects.count()) == (0, 1)


def test_failures_that_are_not_the_graphs_refusal_are_not_recorded(alice_client, graph):
    session_id = session_in(alice_client, "review")
    assert change(alice_client, session_id, "no_such_mode").status_code == 400
    assert change(alice_client, session_id, "deploy", reason=" ").status_code == 400
    assert change(alice_client, "8e3b7a86-5c0f-4a43-9d3e-2f0a8b1c4d5e", "deploy").status_code != 200
    assert change(alice_client, session_id, "general").status_code == 200
    assert ModeChangeRefusal.objects.count() == 0


def test_the_command_records_the_refusal_it_reports(alice, graph):
    session = AgentSession.objects.create(owner=alice, mode=graph["review_notes"])
    arguments = json.dumps({"mode": "general", "branch": False, "reason": "The user agreed."})
    with pytest.raises(CommandError):
        call_command(
            "invoke_tool", "agent_change_mode", arguments=arguments, session=str(session.pk), user="alice",
            stdout=StringIO(),
        )
    assert refusals() == [("review_notes", "general")]


# --- GET /api/catalog/transitions/ ---------------------------------------------------------------------------


def test_the_counts_match_the_switches_the_refusals_and_the_days_of_the_audit_rows(
    alice_client, staff_token_client, graph
):
    first, second = session_in(alice_client, "review"), session_in(alice_client, "general")
    for session_id, mode, branch in [
        (first, "review_notes", False),
        (first, "review", False),
        (first, "review_notes", True),  # branches
        (second, "review", False),
        (second, "review_notes", False),
    ]:
        assert change(alice_client, session_id, mode, branch=branch).status_code == 200
    for session_id, mode in [(first, "deploy"), (first, "deploy"), (second, "general")]:
        assert change(alice_client, session_id, mode).status_code == 400

    response = staff_token_client.get(URL, {"days": 7})
    assert response.status_code == 200, response.content
    today = datetime.now(UTC).date()
    assert response.json() == {
        "days": 7,
        "revision": None,
        "transitions": [
            {"from": "review", "to": "review_notes", "count": 3, "branches": 1},
            {"from": "general", "to": "review", "count": 1, "branches": 0},
            {"from": "review_notes", "to": "review", "count": 1, "branches": 0},
        ],
        "refusals": [
            {"from": "review_notes", "to": "deploy", "count": 2},
            {"from": "review_notes", "to": "general", "count": 1},
        ],
        "declined": [],
        "byDay": [
            {"date": (today - timedelta(days=n)).isoformat(), "count": 5 if n == 0 else 0, "declined": 0}
            for n in range(6, -1, -1)
        ],
    }


# --- Declined proposals (issue 40) ---------------------------------------------------------------------------


def ask(user, session_id, key, channel="mcp"):
    catalog = published_catalog()
    return ask_mode_change(
        catalog=catalog, session_id=session_id, mode=catalog.mode(key), reason="Fits better.", user=user,
        branch=False, channel=channel,
    )


def answer(user, session_id, question, choice):
    return answer_mode_change(
        catalog=published_catalog(), session_id=session_id, confirmation_id=question.pk, user=user, choice=choice,
        channel=question.channel,
    )


def test_questions_answered_stay_decline_or_cancel_are_counted_as_declined_per_pair_and_per_day(
    settings, alice, alice_client, staff_token_client, graph
):
    settings.MODE_CHANGE_CONFIRMATION = "user"
    review, general = session_in(alice_client, "review"), session_in(alice_client, "general")
    for session_id, key, choice in [
        (review, "review_notes", "stay"),
        (review, "review_notes", "decline"),
        (review, "general", "cancel"),
        (general, "review", "stay"),
    ]:
        assert not answer(alice, session_id, ask(alice, session_id, key), choice).successful
    # Yesterday's answer counts on yesterday.
    yesterday = ModeChangeConfirmation.objects.get(session_id=general)
    ModeChangeConfirmation.objects.filter(pk=yesterday.pk).update(answered_at=F("answered_at") - timedelta(days=1))
    # Neither a question left unanswered (expired or not) nor one answered switch or branch is declined.
    ModeChangeConfirmation.objects.filter(pk=ask(alice, review, "review_notes").pk).update(
        expires_at=F("asked_at") - timedelta(seconds=1)
    )
    ask(alice, general, "review")
    assert answer(alice, general, ask(alice, general, "review", channel="rest"), "branch").successful
    assert answer(alice, review, ask(alice, review, "review_notes"), "switch").successful

    body = staff_token_client.get(URL, {"days": 3}).json()
    assert body["declined"] == [
        {"from": "review", "to": "review_notes", "count": 2},
        {"from": "general", "to": "review", "count": 1},
        {"from": "review", "to": "general", "count": 1},
    ]
    today = datetime.now(UTC).date()
    assert [(day["date"], day["count"], day["declined"]) for day in body["byDay"]] == [
        ((today - timedelta(days=2)).isoformat(), 0, 0),
        ((today - timedelta(days=1)).isoformat(), 0, 1),
        (today.isoformat(), 2, 3),  # the two switches taken, the three proposals declined
    ]
    assert body["transitions"] == [
        {"from": "general", "to": "review", "count": 1, "branches": 1},
        {"from": "review", "to": "review_notes", "count": 1, "branches": 0},
    ]
    assert body["refusals"] == []
    assert staff_token_client.get(URL, {"days": 1}).json()["declined"] == [
        {"from": "review", "to": "review_notes", "count": 2},
        {"from": "review", "to": "general", "count": 1},
    ]


def test_a_declined_proposal_naming_a_deleted_mode_shows_its_id(settings, alice, alice_client, new_mode):
    scratch = new_mode("scratch")
    settings.MODE_CHANGE_CONFIRMATION = "user"
    session_id = session_in(alice_client, "general")
    answer(alice, session_id, ask(alice, session_id, "scratch"), "stay")
    delete_modes(modes=[scratch])
    assert transition_counts(days=1)["declined"] == [{"from": "general", "to": scratch.pk, "count": 1}]


def test_changes_before_the_period_are_left_out_and_30_days_is_the_default(
    alice_client, staff_token_client, graph
):
    session_id = session_in(alice_client, "general")
    for mode in ("review", "general", "review"):
        assert change(alice_client, session_id, mode).status_code == 200
    old = ModeChange.objects.order_by("id").first()
    ModeChange.objects.filter(pk=old.pk).update(changed_at=old.changed_at - timedelta(days=30))
    body = staff_token_client.get(URL).json()
    assert body["days"] == 30 and len(body["byDay"]) == 30
    assert body["transitions"] == [
        {"from": "general", "to": "review", "count": 1, "branches": 0},
        {"from": "review", "to": "general", "count": 1, "branches": 0},
    ]
    assert staff_token_client.get(URL, {"days": 31}).json()["transitions"][0]["count"] == 2


def test_hours_summed_before_and_changes_since_are_counted_together(alice_client, graph):
    session_id = session_in(alice_client, "general")
    assert change(alice_client, session_id, "review", branch=True).status_code == 200
    assert change(alice_client, session_id, "general").status_code == 200
    # Three hours old: their hour is summed once, then read from the sums.
    ModeChange.objects.update(changed_at=F("changed_at") - timedelta(hours=3))
    for _ in range(2):
        assert pairs(transition_counts(days=2)) == {("general", "review", 1, 1), ("review", "general", 1, 0)}
    assert change(alice_client, session_id, "ddr_authoring").status_code == 200
    counts = transition_counts(days=2)
    assert pairs(counts) == {
        ("general", "review", 1, 1), ("review", "general", 1, 0), ("general", "ddr_authoring", 1, 0)
    }
    assert sum(day["count"] for day in counts["byDay"]) == 3


def pairs(counts):
    return {(t["from"], t["to"], t["count"], t["branches"]) for t in counts["transitions"]}


def test_a_refusal_naming_a_deleted_mode_shows_its_id(alice_client, staff_token_client, graph):
    session_id = session_in(alice_client, "review")
    assert change(alice_client, session_id, "deploy").status_code == 400
    deploy_id = graph["deploy"].pk
    delete_modes(modes=[graph["deploy"]])  # refusals do not keep a mode from deletion (its rules: modes.services)
    assert not AgentMode.objects.filter(pk=deploy_id).exists()
    assert staff_token_client.get(URL).json()["refusals"] == [{"from": "review", "to": deploy_id, "count": 1}]


def test_only_staff_may_read_the_counts(alice_client, anon_client):
    assert alice_client.get(URL).status_code == 403
    assert anon_client.get(URL).status_code == 401


@pytest.mark.parametrize("days", ["0", "366", "-1", "thirty", "1.5"])
def test_a_period_outside_1_to_365_days_is_a_clear_400(staff_token_client, days):
    response = staff_token_client.get(URL, {"days": days})
    assert response.status_code == 400
    assert "days" in response.json()


def test_a_revision_that_does_not_exist_is_a_404_rather_than_counts_of_nothing(staff_token_client):
    # As the mode graph page's ?revision= and a context's: a mistyped number must not read as "no switches".
    response = staff_token_client.get(URL, {"revision": 99})
    assert (response.status_code, response.json()) == (
        404, {"detail": "There is no catalog revision 99; revisions run from 1 to 1."}
    )
    assert staff_token_client.get(URL, {"revision": 1}).status_code == 200


def test_the_command_sums_the_complete_hours_ahead_of_any_request(alice_client, graph):
    session_id = session_in(alice_client, "general")
    assert change(alice_client, session_id, "review").status_code == 200
    ModeChange.objects.update(changed_at=F("changed_at") - timedelta(hours=2))
    out = StringIO()
    call_command("sum_transitions", stdout=out)
    assert out.getvalue().startswith("Mode changes are summed up to ")
    assert list(TransitionHour.objects.values_list("count", flat=True)) == [1]
    assert pairs(transition_counts(days=1)) | pairs(transition_counts(days=2)) == {("general", "review", 1, 0)}
