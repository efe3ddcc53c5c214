"""
A rollout's cohorts compared (issue 43), and its guard: alice's organization is the cohort, bob's sessions the
control. The guard trips when the cohort's sessions decline proposals the control's take; it is judged on the writes
that feed it at most once a minute, and by check_rollout, which reports a rollout promoted or aborted while it
judged it as ended (PostgreSQL: another connection ends it meanwhile). The counts are served over REST, on the
releases page, and filtered by revision in the transition counts.
"""

import logging
from datetime import timedelta
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command

from modes.models import CatalogRollout
from modes.releases import publish_revision
from modes.rollouts import Guard, Staging
from sessions_app.models import ModeChangeRefusal

from ..conftest import CommitOnceWaitedOn

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]

PROPOSAL = {"mode": "ddr_authoring", "branch": False, "reason": "The user wants to write a DDR."}


@pytest.fixture
def user_confirms(settings):
    settings.MODE_CHANGE_CONFIRMATION = "user"


def stage_to_alices_organization(publisher, alice, number, **guard):
    _, client = publisher
    body = {"share": 0, "organizations": [alice.membership.organization.slug]}
    if guard:
        body["guard"] = guard
    assert client.post(f"/api/catalog/revisions/{number}/publish/", body, format="json").status_code == 200


def new_session(client) -> str:
    response = client.post("/api/sessions/", {}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


@pytest.fixture
def propose_and_answer(django_capture_on_commit_callbacks):
    """propose_and_answer(client, session_id, choice): a proposal answered, and what runs once it is committed (the
    test's transaction never commits), a rollout's guard judged among it."""

    def run(client, session_id, choice):
        body = {"sessionId": session_id, "arguments": PROPOSAL}
        with django_capture_on_commit_callbacks(execute=True):
            asked = client.post("/api/tools/agent_change_mode/invoke/", body, format="json").json()
            url = f"/api/sessions/{session_id}/confirmations/{asked['confirmation']['id']}/"
            assert client.post(url, {"choice": choice}, format="json").status_code == 200

    return run


def test_the_guard_aborts_the_rollout_when_its_sessions_decline_what_the_controls_take(
    propose_and_answer, user_confirms, scout_pending, publisher, alice, bob, alice_client, bob_client, caplog
):
    stage_to_alices_organization(publisher, alice, scout_pending, metric="declined", ratio=2, minSessions=3)
    for _ in range(2):
        propose_and_answer(bob_client, new_session(bob_client), "switch")
    alices = [new_session(alice_client) for _ in range(3)]
    assert alice_client.get(f"/api/sessions/{alices[0]}/context/").json()["catalogRevision"] == scout_pending
    with caplog.at_level(logging.WARNING, logger="modes.releases"):
        propose_and_answer(alice_client, alices[0], "stay")
    rollout = CatalogRollout.objects.get()
    assert (rollout.state, rollout.ended_by) == ("aborted", None)
    assert rollout.end_reason == (
        "Its guard tripped: proposals the user declined per session 0.33 in revision 2's cohort (3 sessions) against "
        "0.00 in the control's (revision 1, 2 sessions), more than 2 times."
    )
    assert f"aborted by its guard: {rollout.end_reason}" in caplog.text
    assert alice_client.get(f"/api/sessions/{alices[0]}/context/").json()["catalogRevision"] == 1


def test_the_guard_is_judged_at_most_once_a_minute_on_the_writes_that_feed_it(
    propose_and_answer, user_confirms, scout_pending, publisher, alice, alice_client, bob_client, clock
):
    stage_to_alices_organization(publisher, alice, scout_pending, metric="declined", ratio=1000, minSessions=1)
    propose_and_answer(bob_client, new_session(bob_client), "stay")  # judged: the cohort has no session yet
    judged = CatalogRollout.objects.get().guard_checked_at
    assert judged is not None
    session = new_session(alice_client)
    clock.advance(seconds=30)
    propose_and_answer(alice_client, session, "stay")
    assert CatalogRollout.objects.get().guard_checked_at == judged
    clock.advance(seconds=31)
    propose_and_answer(alice_client, session, "stay")
    assert CatalogRollout.objects.get().guard_checked_at > judged
    assert CatalogRollout.objects.get().state == "in_flight"  # 2 declines a session against 1: not 1000 times


def test_check_rollout_prints_the_cohorts_and_trips_the_guard(
    propose_and_answer, user_confirms, scout_pending, publisher, alice, bob_client, alice_client
):
    stage_to_alices_organization(publisher, alice, scout_pending, metric="refused", ratio=1, minSessions=1)
    out = StringIO()
    call_command("check_rollout", stdout=out)
    assert out.getvalue() == (
        "Rollout of revision 2 against revision 1:\n"
        "  revision 2: 0 sessions, 0 changes (0.00 per session), 0 refused (0.00 per session), 0 declined (0.00 per "
        "session)\n"
        "  revision 1: 0 sessions, 0 changes (0.00 per session), 0 refused (0.00 per session), 0 declined (0.00 per "
        "session)\n"
        "Its guard holds.\n"
    )
    new_session(bob_client)
    session = new_session(alice_client)
    propose_and_answer(alice_client, session, "switch")
    CatalogRollout.objects.update(guard_metric="declined")  # nothing declined in the cohort: it still holds
    call_command("check_rollout", stdout=StringIO())
    assert CatalogRollout.objects.get().state == "in_flight"
    CatalogRollout.objects.update(guard_metric=CatalogRollout.Metric.REFUSED, guard_ratio=0.01)
    ModeChangeRefusal.objects.create(session_id=session, from_mode_id="x", to_mode_id="y", catalog_revision=2)
    out = StringIO()
    call_command("check_rollout", stdout=out)
    assert "Aborted: Its guard tripped: switches the mode graph refused per session 1.00" in out.getvalue()
    assert CatalogRollout.objects.get().state == "aborted"
    call_command("check_rollout", stdout=out)
    assert out.getvalue().endswith("No rollout is in flight.\n")


def test_the_rollout_and_its_cohorts_are_served_to_staff_who_may_view_revisions(
    propose_and_answer, user_confirms, scout_pending, publisher, alice, alice_client, bob_client, staff_token_client
):
    assert publisher[1].get("/api/catalog/rollout/").status_code == 404
    stage_to_alices_organization(publisher, alice, scout_pending)
    propose_and_answer(alice_client, new_session(alice_client), "stay")
    propose_and_answer(bob_client, new_session(bob_client), "switch")
    body = publisher[1].get("/api/catalog/rollout/").json()
    assert (body["revision"], body["control"], body["inFlight"], body["organizations"]) == (2, 1, True, ["acme"])
    assert body["guard"] is None and body["startedBy"] == "publisher"
    assert [(c["revision"], c["sessions"], c["changes"], c["declined"]) for c in body["cohorts"]] == [
        (2, 1, 0, 1), (1, 1, 1, 0)
    ]
    assert body["cohorts"][0]["declinedPerSession"] == 1.0
    assert staff_token_client.get("/api/catalog/rollout/").status_code == 403


def test_the_transition_counts_filter_by_revision(
    propose_and_answer, user_confirms, scout_pending, publisher, alice, alice_client, bob_client, staff_token_client
):
    stage_to_alices_organization(publisher, alice, scout_pending)
    propose_and_answer(alice_client, new_session(alice_client), "stay")
    propose_and_answer(bob_client, new_session(bob_client), "switch")
    counts = {
        revision: staff_token_client.get("/api/catalog/transitions/", {"days": 1, "revision": revision}).json()
        for revision in (1, 2)
    }
    assert [t["count"] for t in counts[1]["transitions"]] == [1] and counts[1]["declined"] == []
    assert counts[2]["transitions"] == [] and [d["count"] for d in counts[2]["declined"]] == [1]
    assert staff_token_client.get("/api/catalog/transitions/", {"revision": "two"}).status_code == 400


def test_the_rollout_in_flight_is_served_whatever_the_clock_that_started_an_ended_one(scout_pending, publisher):
    """An ended rollout started on a host whose clock runs ahead does not hide the one in flight."""
    _, client = publisher
    assert client.post(f"/api/catalog/revisions/{scout_pending}/publish/", {"share": 5}, format="json").status_code == 200
    assert client.post("/api/catalog/rollout/abort/", {}, format="json").status_code == 200
    ended = CatalogRollout.objects.get()
    CatalogRollout.objects.filter(pk=ended.pk).update(started_at=ended.started_at + timedelta(minutes=1))
    restart = {"share": 7, "restart": True}
    assert client.post(f"/api/catalog/revisions/{scout_pending}/publish/", restart, format="json").status_code == 200
    body = client.get("/api/catalog/rollout/").json()
    assert (body["inFlight"], body["share"], body["state"]) == (True, 7.0, "in_flight")


def ended_meanwhile(other, rollout, state):
    """The rollout ended from another connection, as promote and abort end it (the head's row first), not committed."""
    other.execute("UPDATE modes_cataloghead SET rollout_id = NULL WHERE id = 1")
    other.execute(
        "UPDATE modes_catalogrollout SET state = %s, ended_at = now(), ended_by_id = %s, end_reason = %s WHERE id = %s",
        [state, rollout.started_by_id, "Too many refusals." if state == "aborted" else "", rollout.pk],
    )


@pytest.mark.postgres(reason="another connection's uncommitted promotion or abort, and PostgreSQL's row locks")
@pytest.mark.usefixtures("modes_restored_after_flush", "fast_password_hashing")
class TestARolloutEndedWhileCheckRolloutJudgesIt:
    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    @pytest.mark.parametrize("state, guard_trips, said", [
        ("aborted", False, "It was aborted meanwhile by publisher: Too many refusals.\n"),
        ("promoted", True, "It was promoted meanwhile by publisher: every session is served revision 2.\n"),
    ])
    def test_is_reported_as_ended_not_as_held_by_its_guard(
        self, scout_pending, publisher, alice_session, second_connection, state, guard_trips, said
    ):
        guard = Guard(metric=CatalogRollout.Metric.REFUSED, ratio=Decimal(1), min_sessions=1)
        publish_revision(number=scout_pending, user=publisher[0], staging=Staging(share=Decimal(10), guard=guard))
        rollout = CatalogRollout.objects.get()
        if guard_trips:  # a refusal in the cohort and none in the control's
            ModeChangeRefusal.objects.create(
                session=alice_session, from_mode_id="x", to_mode_id="y", catalog_revision=scout_pending
            )
        other = second_connection()
        ended_meanwhile(other, rollout, state)
        committer = CommitOnceWaitedOn(other)
        out = StringIO()
        call_command("check_rollout", stdout=out)
        committer.join()
        assert committer.waited  # the race was run: the command met the end uncommitted
        assert out.getvalue().endswith(said)
        assert CatalogRollout.objects.get().state == state


@pytest.mark.postgres(reason="another connection's uncommitted wider share, and PostgreSQL's row locks")
@pytest.mark.usefixtures("modes_restored_after_flush", "fast_password_hashing")
class TestAGuardReplacedWhileItIsJudged:
    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_is_judged_as_it_is_once_the_change_commits_not_as_it_was(
        self, scout_pending, publisher, alice_session, bob_session, second_connection
    ):
        guard = Guard(metric=CatalogRollout.Metric.REFUSED, ratio=Decimal(1), min_sessions=1)
        publish_revision(number=scout_pending, user=publisher[0], staging=Staging(share=Decimal(10), guard=guard))
        # Two refusals a session in the cohort, one in the control's: more than once, not 1000 times.
        for session, revision in [(alice_session, scout_pending), (alice_session, scout_pending), (bob_session, 1)]:
            ModeChangeRefusal.objects.create(session=session, from_mode_id="x", to_mode_id="y", catalog_revision=revision)
        other = second_connection()  # a wider share with a guard of 1000 times, as publish_revision writes it
        other.execute("SELECT id FROM modes_cataloghead WHERE id = 1 FOR UPDATE")
        other.execute("UPDATE modes_catalogrollout SET share = 20, guard_ratio = 1000, changed_at = now()")
        committer = CommitOnceWaitedOn(other)
        out = StringIO()
        call_command("check_rollout", stdout=out)
        committer.join()
        assert committer.waited  # the race was run: the guard met the wider share uncommitted
        rollout = CatalogRollout.objects.get()
        assert (rollout.state, rollout.end_reason) == ("in_flight", "")
        assert out.getvalue().endswith("Its guard holds.\n")
