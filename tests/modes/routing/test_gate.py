"""
The release gate (CATALOG_EVAL_MIN_ACCURACY, CATALOG_EVAL_MAX_DROP): a revision that routes too few cases right is
neither approved nor published, over the API, the admin and the commands; with no approvals a change it refuses is
not saved; rollbacks are not gated.
"""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from modes.models import AgentMode, CatalogHead, CatalogRollout, RoutingCase
from modes.services import catalog_change

from ..admin_forms import change_url, form_data, messages_of
from .conftest import OVERLAPPING, tell_apart

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]

RELEASER = (
    "view_catalogrevision", "approve_revision", "publish_revision", "publish_unreviewed_revision",
    "add_routingevaluation", "view_routingevaluation",
)
FAILING_CASE = "'Build me a dashboard of weekly sales figures.' from general: expected data_reports, predicted sql_help"


def head():
    return CatalogHead.objects.get(pk=1)


def evaluate(client, number):
    response = client.post(f"/api/catalog/revisions/{number}/evals/")
    assert response.status_code == 201, response.json()
    return response.json()


@pytest.fixture
def gate(settings):
    settings.CATALOG_EVAL_MIN_ACCURACY = 0.7


@pytest.fixture
def under_review(settings, overlapping_modes, gate):
    """The two overlapping modes published; later changes wait for one approval."""
    settings.CATALOG_APPROVALS = 1


def test_overlapping_lines_show_in_the_matrix_and_the_gate_holds_the_revision_until_a_line_is_fixed(
    under_review, routing_staff
):
    _, client = routing_staff("rita", *RELEASER)
    with catalog_change(by=None):  # a pending revision that only reorders: the overlap is still there
        AgentMode.objects.filter(key="data_reports").update(position=99)
    pending = head().latest
    result = evaluate(client, pending)
    assert result["confusion"]["data_reports"]["sql_help"] >= 3
    assert result["perMode"]["data_reports"]["recall"] <= 0.25
    for action in ("approve", "publish"):
        refused = client.post(f"/api/catalog/revisions/{pending}/{action}/")
        assert refused.status_code == 409
        assert "below the 70.0% of CATALOG_EVAL_MIN_ACCURACY" in refused.json()["detail"]
        assert FAILING_CASE in refused.json()["detail"]
    assert head().published == pending - 1

    tell_apart()
    fixed = head().latest
    assert evaluate(client, fixed)["confusion"]["data_reports"] == {"data_reports": 4}
    assert client.post(f"/api/catalog/revisions/{fixed}/approve/").status_code == 200
    assert client.post(f"/api/catalog/revisions/{fixed}/publish/").status_code == 200
    assert head().published == fixed


def test_with_a_gate_a_revision_with_no_evaluation_is_refused_until_one_is_run(under_review, routing_staff):
    _, client = routing_staff("rita", *RELEASER)
    tell_apart()
    refused = client.post(f"/api/catalog/revisions/{head().latest}/approve/")
    assert refused.status_code == 409
    assert "has no routing evaluation by the offline scorer" in refused.json()["detail"]
    assert "run an evaluation first" in refused.json()["detail"]
    with pytest.raises(CommandError, match="run an evaluation first"):
        call_command("publish_revision", str(head().latest), "--user", "rita")
    assert head().published == head().latest - 1


def test_the_permission_to_publish_failing_revisions_lets_one_through(under_review, routing_staff):
    _, client = routing_staff("boss", *RELEASER, "publish_failing_revision")
    with catalog_change(by=None):
        AgentMode.objects.filter(key="data_reports").update(position=99)
    assert client.post(f"/api/catalog/revisions/{head().latest}/approve/").status_code == 200
    assert client.post(f"/api/catalog/revisions/{head().latest}/publish/").status_code == 200


def test_a_drop_below_the_published_revisions_score_is_refused_naming_what_moved(
    settings, overlapping_modes, routing_staff
):
    _, client = routing_staff("rita", *RELEASER)
    tell_apart()  # published at once: no approvals yet
    evaluate(client, head().published)
    settings.CATALOG_APPROVALS, settings.CATALOG_EVAL_MAX_DROP = 1, 0.05
    with catalog_change(by=None):
        AgentMode.objects.filter(key="data_reports").update(when_to_use=OVERLAPPING)
        AgentMode.objects.filter(key="sql_help").update(when_to_use=OVERLAPPING)
    result = evaluate(client, head().latest)
    assert result["changes"]["against"] == head().published
    move = next(move for move in result["changes"]["moves"] if move["was"] == "data_reports")
    assert move["now"] == "sql_help" and move["cases"] >= 3
    assert f"This edit moves {move['cases']} cases from data_reports to sql_help." in result["changes"]["summary"]
    refused = client.post(f"/api/catalog/revisions/{head().latest}/publish/")
    assert refused.status_code == 409
    assert "more than the 5.0% CATALOG_EVAL_MAX_DROP allows" in refused.json()["detail"]


def test_with_no_approvals_a_change_the_gate_refuses_is_not_saved_over_the_api_and_in_the_admin(
    overlapping_modes, staff_client, settings
):
    tell_apart()
    settings.CATALOG_EVAL_MIN_ACCURACY = 0.7
    admin_client = staff_client("add_agentmode", "change_agentmode")  # not publish_failing_revision
    before = head().latest
    roo = {"customModes": [
        {"slug": slug, "name": name, "roleDefinition": "You help.", "whenToUse": OVERLAPPING, "groups": ["read"]}
        for slug, name in (("sql-help", "SQL Help"), ("data-reports", "Data Reports"))
    ]}
    response = admin_client.post(
        "/api/catalog/import/", {"files": [{"path": ".roomodes", "content": json.dumps(roo)}], "update": True},
        format="json", content_type="application/json",
    )
    assert response.status_code == 400, response.content
    assert "below the 70.0% of CATALOG_EVAL_MIN_ACCURACY" in response.json()["detail"]
    mode = AgentMode.objects.get(key="data_reports")
    AgentMode.objects.filter(key="sql_help").update(when_to_use=OVERLAPPING)  # past the services: no revision
    page = admin_client.post(change_url(mode.pk), form_data(mode, when_to_use=OVERLAPPING), follow=True)
    assert any("Nothing was changed" in message and "CATALOG_EVAL_MIN_ACCURACY" in message for message in messages_of(page))
    assert head().latest == before
    assert AgentMode.objects.get(key="data_reports").when_to_use != OVERLAPPING


def test_a_rollback_to_a_revision_once_published_is_not_gated(settings, overlapping_modes, routing_staff):
    _, client = routing_staff("rita", *RELEASER)
    overlapping = head().published
    tell_apart()
    settings.CATALOG_EVAL_MIN_ACCURACY = 0.9
    response = client.post(f"/api/catalog/revisions/{overlapping}/publish/")
    assert response.status_code == 200, response.json()
    assert AgentMode.objects.get(key="data_reports").when_to_use == OVERLAPPING


def test_with_no_approvals_import_modes_refused_by_the_gate_ends_in_one_line_and_changes_nothing(
    overlapping_modes, settings, tmp_path
):
    tell_apart()
    settings.CATALOG_EVAL_MIN_ACCURACY = 0.7
    before = head().latest
    roomodes = tmp_path / ".roomodes"
    roomodes.write_text(json.dumps({"customModes": [
        {"slug": slug, "name": name, "roleDefinition": "You help.", "whenToUse": OVERLAPPING, "groups": ["read"]}
        for slug, name in (("sql-help", "SQL Help"), ("data-reports", "Data Reports"))
    ]}))
    with pytest.raises(CommandError) as refused:
        call_command("import_modes", str(roomodes), "--update", stdout=StringIO())
    assert str(refused.value).startswith("This change routes ")
    assert "\n" not in str(refused.value)
    assert head().latest == before


def test_an_evaluation_made_on_other_cases_than_there_are_now_does_not_pass_the_gate(under_review, routing_staff):
    _, client = routing_staff("rita", *RELEASER)
    tell_apart()
    evaluate(client, head().latest)
    RoutingCase.objects.create(utterance="Plot revenue by region.", expected="data_reports")
    refused = client.post(f"/api/catalog/revisions/{head().latest}/approve/")
    assert refused.status_code == 409
    assert "The routing cases changed since revision" in refused.json()["detail"]
    evaluate(client, head().latest)
    assert client.post(f"/api/catalog/revisions/{head().latest}/approve/").status_code == 200


def test_the_drop_is_judged_on_the_cases_both_revisions_were_scored_on(settings, overlapping_modes, routing_staff):
    _, client = routing_staff("rita", *RELEASER)
    tell_apart()
    evaluate(client, head().published)
    settings.CATALOG_APPROVALS, settings.CATALOG_EVAL_MAX_DROP = 1, 0.0
    # Cases the published revision was never scored on, all failing: they lower the new score, not the drop.
    RoutingCase.objects.bulk_create(
        [RoutingCase(utterance=f"zxqv {n}", current_mode="sql_help", expected="data_reports") for n in range(10)]
    )
    with catalog_change(by=None):
        AgentMode.objects.filter(key="data_reports").update(position=99)
    assert evaluate(client, head().latest)["changes"]["moves"] == []
    assert client.post(f"/api/catalog/revisions/{head().latest}/publish/").status_code == 200


def test_a_revision_staged_past_the_gate_is_neither_widened_nor_promoted_by_one_the_gate_holds(
    under_review, routing_staff
):
    """The gate judges every publication: a rollout's wider share and its promotion, as its approvals are."""
    _, boss = routing_staff("boss", *RELEASER, "publish_failing_revision")
    _, rita = routing_staff("rita", *RELEASER)
    with catalog_change(by=None):  # pending, the overlap still there: it misses the gate
        AgentMode.objects.filter(key="data_reports").update(position=99)
    pending = head().latest
    evaluate(rita, pending)
    assert boss.post(f"/api/catalog/revisions/{pending}/publish/", {"share": 1}, format="json").status_code == 200
    rollout = CatalogRollout.objects.get()

    widened = rita.post(f"/api/catalog/revisions/{pending}/publish/", {"share": 100}, format="json")
    assert widened.status_code == 409
    assert "below the 70.0% of CATALOG_EVAL_MIN_ACCURACY" in widened.json()["detail"]
    promoted = rita.post("/api/catalog/rollout/promote/", {"revision": pending}, format="json")
    assert promoted.status_code == 409
    assert "below the 70.0% of CATALOG_EVAL_MIN_ACCURACY" in promoted.json()["detail"]
    with pytest.raises(CommandError, match="CATALOG_EVAL_MIN_ACCURACY"):
        call_command("promote_rollout", "--user", "rita")
    rollout.refresh_from_db()
    assert (rollout.state, rollout.share, head().rollout_id, head().published) == (
        CatalogRollout.State.IN_FLIGHT, 1, rollout.pk, pending - 1
    )
    assert boss.post("/api/catalog/rollout/promote/", {"revision": pending}, format="json").status_code == 200
    assert head().published == pending


class Scripted:
    """A scorer (the gate's, by name) that routes the first `right` cases of a revision right and fails the rest."""

    name = "offline"

    def __init__(self, right):
        self.right = right

    def outcomes(self, catalog, cases):
        from modes.routing.evaluation import Outcome

        for position, case in enumerate(cases):
            yield Outcome(case.expected) if position < self.right else Outcome(None, error="No answer.")


def test_a_drop_exactly_at_the_allowed_one_passes_and_one_case_more_is_refused_counting_the_cases(settings):
    from modes.routing.evaluation import evaluate_revision
    from modes.routing.gate import gate_refusal

    published = head().published
    with catalog_change(by=None):
        AgentMode.objects.filter(is_default=True).update(position=99)
    pending = head().latest
    evaluate_revision(number=published, scorer=Scripted(12))  # of the seed's 15 example cases: 80%
    settings.CATALOG_EVAL_MAX_DROP = 0.2  # 3 of 15 cases
    evaluate_revision(number=pending, scorer=Scripted(9))  # 60%: a drop of 20.0%, exactly the allowed one
    assert gate_refusal(number=pending, published=published) is None
    evaluate_revision(number=pending, scorer=Scripted(8))
    assert gate_refusal(number=pending, published=published).startswith(
        f"Revision {pending} routes 8 of the 15 cases it shares with the published revision {published} right, where "
        "that one routed 12: a drop of 26.7%, more than the 20.0% CATALOG_EVAL_MAX_DROP allows."
    )


def test_the_minimum_is_judged_on_the_cases_not_on_a_rounded_accuracy_and_the_refusal_says_how_many_more_must_pass(
    settings,
):
    from modes.routing.evaluation import evaluate_revision
    from modes.routing.gate import gate_refusal

    number = head().published
    evaluate_revision(number=number, scorer=Scripted(10))  # 10 of 15: 66.67%, stored rounded as 0.6667
    settings.CATALOG_EVAL_MIN_ACCURACY = 0.66668
    assert gate_refusal(number=number, published=number).startswith(
        f"Revision {number} routes 10 of the 15 cases right (66.7%), below the 66.7% of CATALOG_EVAL_MIN_ACCURACY: "
        "1 case more must pass."
    )
    settings.CATALOG_EVAL_MIN_ACCURACY = 10 / 15
    assert gate_refusal(number=number, published=number) is None
