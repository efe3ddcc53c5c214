"""The routing endpoints: cases listed and added, a revision's offline evaluation run and read; each permission."""

import pytest

from modes.catalog import published_catalog
from modes.models import RoutingCase, RoutingEvaluation

pytestmark = pytest.mark.django_db

CASES = "/api/catalog/routing-cases/"


def evals(number, latest=False):
    return f"/api/catalog/revisions/{number}/evals/" + ("latest/" if latest else "")


def test_staff_with_the_permissions_list_and_add_cases(routing_staff):
    _, client = routing_staff("casey", "view_routingcase", "add_routingcase")
    created = client.post(CASES, {"utterance": "Write a DDR about caching.", "expected": "ddr_authoring"}, format="json")
    assert created.status_code == 201, created.json()
    assert {key: created.json()[key] for key in ("utterance", "currentMode", "expected")} == {
        "utterance": "Write a DDR about caching.", "currentMode": "", "expected": "ddr_authoring"
    }
    listed = client.get(CASES).json()
    assert [case["utterance"] for case in listed["results"]] == ["Write a DDR about caching."]


@pytest.mark.parametrize(
    "body, field",
    [
        ({"utterance": "Hi", "expected": "nope"}, "detail"),
        ({"utterance": "", "expected": "stay"}, "utterance"),
        ({"utterance": 5, "expected": "stay"}, "utterance"),
        ({"utterance": "Hi", "expected": "stay", "weight": 1}, "weight"),
        ({"utterance": "Hi"}, "expected"),
    ],
)
def test_a_bad_case_is_a_400_naming_what_is_wrong_and_stores_nothing(routing_staff, body, field):
    _, client = routing_staff("casey", "view_routingcase", "add_routingcase")
    response = client.post(CASES, body, format="json")
    assert response.status_code == 400
    assert field in response.json()
    assert not RoutingCase.objects.exists()


def test_cases_are_refused_to_users_without_the_permissions(routing_staff, alice_client):
    _, viewer = routing_staff("viewer", "view_routingcase")
    _, adder = routing_staff("adder", "add_routingcase")
    assert viewer.get(CASES).status_code == 200
    assert viewer.post(CASES, {"utterance": "Hi", "expected": "stay"}, format="json").status_code == 403
    assert adder.get(CASES).status_code == 403
    assert alice_client.get(CASES).status_code == 403  # an agent's token, not staff
    assert alice_client.post(CASES, {"utterance": "Hi", "expected": "stay"}, format="json").status_code == 403
    assert not RoutingCase.objects.exists()


def test_an_evaluation_is_run_stored_with_the_revision_and_read_back(routing_staff):
    user, client = routing_staff("eve", "add_routingevaluation", "view_routingevaluation")
    number = published_catalog().revision
    assert client.get(evals(number, latest=True)).status_code == 404
    run = client.post(evals(number))
    assert run.status_code == 201, run.json()
    body = run.json()
    assert set(body) == {
        "revision", "scorer", "createdAt", "createdBy", "accuracy", "cases", "passed", "labels", "perMode",
        "confusion", "failures", "violations", "errors", "skipped", "changes",
    }
    assert (body["revision"], body["scorer"], body["createdBy"], body["changes"]) == (number, "offline", "eve", None)
    assert body["cases"] == sum(sum(row.values()) for row in body["confusion"].values())
    assert body["passed"] == body["cases"] - len(body["failures"])
    assert body["labels"] == [*published_catalog().by_key, "stay"]
    assert client.get(evals(number, latest=True)).json() == body
    assert RoutingEvaluation.objects.get().created_by == user


def test_evaluations_are_refused_to_users_without_the_permissions_and_unknown_revisions_are_404(routing_staff):
    _, reader = routing_staff("reader", "view_routingevaluation")
    _, runner = routing_staff("runner", "add_routingevaluation")  # may run one, not read its answer
    number = published_catalog().revision
    assert reader.post(evals(number)).status_code == 403
    assert runner.post(evals(number)).status_code == 403
    assert runner.get(evals(number, latest=True)).status_code == 403
    assert not RoutingEvaluation.objects.exists()
    _, both = routing_staff("both", "add_routingevaluation", "view_routingevaluation")
    assert both.post(evals(999)).status_code == 404
    assert reader.get(evals("x", latest=True)).status_code == 404
    unknown = reader.get(evals(999, latest=True))  # named as missing, not as a revision with no evaluation yet
    assert unknown.status_code == 404
    assert unknown.json()["detail"] == f"There is no catalog revision 999; revisions run from 1 to {number}."
    assert reader.get(evals(number, latest=True) + "?scorer=gpt").status_code == 400
