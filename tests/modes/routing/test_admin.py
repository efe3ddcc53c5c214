"""The admin: the releases page shows the pending revision's routing beside its diff, as a heat map, and evaluates
it on request; routing cases are edited with readable refusals; each for users holding the permissions only."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from modes.models import AgentMode, CatalogHead, RoutingCase, RoutingEvaluation
from modes.services import catalog_change

from ..admin_forms import messages_of

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]

RELEASES = "/admin/modes/catalogrevision/releases/"


@pytest.fixture
def pending(settings, overlapping_modes):
    """A pending revision, with the two modes' overlap still in it."""
    settings.CATALOG_APPROVALS = 1
    with catalog_change(by=None):
        AgentMode.objects.filter(key="data_reports").update(position=99)
    return CatalogHead.objects.get(pk=1).latest


def test_the_releases_page_evaluates_the_pending_revision_and_shows_its_confusion_as_a_heat_map(pending, staff_client):
    client = staff_client("add_routingevaluation")
    page = client.get(RELEASES).content.decode()
    assert f"No evaluation of revision {pending} yet." in page
    evaluate = f"{RELEASES}{pending}/evaluate/"
    assert f'href="{evaluate}"' in page
    assert "with the offline scorer?" in client.get(evaluate).content.decode()  # asked first
    done = client.post(evaluate, follow=True)
    assert f"Revision {pending} is evaluated." in messages_of(done)
    page = done.content.decode()
    evaluation = RoutingEvaluation.objects.get(revision_id=pending)
    assert f"{evaluation.result['passed']} of {evaluation.result['cases']} cases routed right" in page
    row = page[page.index("<tr><th><code>data_reports</code></th>"):]
    row = row[:row.index("</tr>")]
    # Columns in the labels' order: general, ddr_authoring, workflow_authoring, sql_help, data_reports, stay.
    assert '<td class="aptix-heat-wrong-4">3</td>' in row  # 3 of 4 to sql_help: the fourth fifth, in red
    assert 'style="' not in row  # classes only: the admin's CSP allows no inline style
    assert "Build me a dashboard of weekly sales figures." in page  # among the failing cases


def test_staff_without_the_evaluation_permissions_see_no_routing_and_cannot_run_one(pending, staff_client):
    viewer = staff_client()  # every view_* permission, no add_routingevaluation
    page = viewer.get(RELEASES).content.decode()
    assert "Routing of revision" in page and f"{RELEASES}{pending}/evaluate/" not in page
    refused = viewer.post(f"{RELEASES}{pending}/evaluate/", follow=True)
    assert any("modes.add_routingevaluation" in message for message in messages_of(refused))
    assert not RoutingEvaluation.objects.exists()


def test_a_case_naming_an_unknown_mode_is_refused_on_its_field_and_a_user_without_add_may_not_add(
    overlapping_modes, staff_client, routing_staff
):
    client = staff_client("add_routingcase")
    add = reverse("admin:modes_routingcase_add")
    response = client.post(add, {"utterance": "Chart sales", "current_mode": "", "expected": "charts"})
    assert response.status_code == 200
    assert response.context["adminform"].form.errors == {
        "expected": ["There is no mode 'charts'; name a mode's key or stay."]
    }
    assert client.post(add, {"utterance": "Chart sales", "current_mode": "", "expected": "data_reports"}).status_code == 302
    assert RoutingCase.objects.get(utterance="Chart sales").expected == "data_reports"
    _, reader = routing_staff("reader", "view_routingcase")
    assert reader.post(add, {"utterance": "Chart it", "current_mode": "", "expected": "data_reports"}).status_code == 403
    assert not RoutingCase.objects.filter(utterance="Chart it").exists()


def test_cases_are_imported_from_a_file_all_or_none_and_exported(overlapping_modes, staff_client, routing_staff):
    client = staff_client("add_routingcase", "change_routingcase")
    assert 'id="import-link"' in client.get(reverse("admin:modes_routingcase_changelist")).content.decode()
    importing = reverse("admin:modes_routingcase_import")
    bad = SimpleUploadedFile("cases.csv", b"utterance,expected\nChart it,charts\nPlot it,data_reports\n")
    page = client.post(importing, {"file": bad})
    assert page.context["problems"] == ["line 2: expected: There is no mode 'charts'; name a mode's key or stay."]
    assert not RoutingCase.objects.filter(utterance="Plot it").exists()
    good = SimpleUploadedFile("cases.jsonl", '{"utterance": "Plot it", "expected": "data_reports"}\n'.encode())
    assert client.post(importing, {"file": good}).context["counts"] == {"created": 1, "updated": 0, "unchanged": 0}
    exported = client.get(reverse("admin:modes_routingcase_export", args=["jsonl"]))
    assert exported["Content-Disposition"] == 'attachment; filename="routing-cases.jsonl"'
    assert '{"utterance": "Plot it", "currentMode": "", "expected": "data_reports"}' in exported.content.decode()
    _, reader = routing_staff("reader", "view_routingcase")
    assert reader.post(importing, {"file": SimpleUploadedFile("c.jsonl", b'{"utterance": "x", "expected": "stay"}')}).status_code == 403
    assert reader.get(reverse("admin:modes_routingcase_export", args=["csv"])).status_code == 200
    assert not RoutingCase.objects.filter(utterance="x").exists()


def test_a_key_no_page_can_print_is_shown_escaped(staff_client):
    client = staff_client("add_routingcase", "change_routingcase")
    upload = SimpleUploadedFile("cases.jsonl", b'{"utt\\ud800": "Hi", "expected": "stay"}\n')
    page = client.post(reverse("admin:modes_routingcase_import"), {"file": upload})
    assert page.status_code == 200
    assert "line 1: &#x27;utt\\ud800&#x27;: not a field of a case" in page.content.decode()


def test_past_forty_modes_the_heat_map_draws_the_forty_most_confused():
    from modes.admin import heat_labels

    labels = [f"m{n}" for n in range(60)] + ["stay"]
    confusion = {f"m{n}": {f"m{n}": 5, "stay": n} for n in range(60)}  # m59 the most confused, m0 not at all
    kept = heat_labels({"labels": labels, "confusion": confusion})
    assert len(kept) == 40
    assert kept[0] == "m21" and kept[-2:] == ["m59", "stay"]  # catalog order kept


def test_a_case_added_past_the_bound_is_refused_on_the_form_and_not_stored(overlapping_modes, staff_client, monkeypatch):
    from modes.routing import cases

    monkeypatch.setattr(cases, "MAX_STORED", RoutingCase.objects.count())
    client = staff_client("add_routingcase")
    response = client.post(
        reverse("admin:modes_routingcase_add"), {"utterance": "Chart sales", "current_mode": "", "expected": "data_reports"}
    )
    assert response.status_code == 200
    assert response.context["adminform"].form.non_field_errors() == [
        "There are 8 cases, as many as an evaluation takes: delete some first."
    ]
    assert not RoutingCase.objects.filter(utterance="Chart sales").exists()
