"""GET /api/catalog/revisions/ and /<n>/: every revision, newest first, and each one's whole catalog; for staff only."""

import pytest
from django.urls import reverse

from modes.models import AgentMode
from modes.services import record_unrecorded_changes

from ..expected import GENERAL_ID
from .admin_forms import change_url, form_data

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]

SEED_SUMMARY = "mode general created; mode ddr_authoring created; mode workflow_authoring created"


def test_revisions_are_listed_newest_first_with_who_when_and_what(admin_client, admin_user, staff_api_client):
    general = AgentMode.objects.get(pk=GENERAL_ID)
    admin_client.post(change_url(GENERAL_ID), form_data(general, display_name="Everyday"))
    AgentMode.objects.filter(key="ddr_authoring").update(status="deprecated")
    record_unrecorded_changes()

    body = staff_api_client.get("/api/catalog/revisions/").json()

    assert body["next"] is None
    assert [
        {key: revision[key] for key in ("revision", "createdBy", "summary", "status")} for revision in body["results"]
    ] == [
        {"revision": 3, "createdBy": None, "summary": "mode ddr_authoring: status", "status": "published"},
        {"revision": 2, "createdBy": admin_user.username, "summary": "mode general: display_name", "status": "previous"},
        {"revision": 1, "createdBy": None, "summary": SEED_SUMMARY, "status": "previous"},
    ]
    times = [revision["createdAt"] for revision in body["results"]]
    assert times == sorted(times, reverse=True)


def test_revisions_are_paged_by_cursor(staff_api_client):
    for position in range(2, 6):
        AgentMode.objects.filter(key="general").update(position=position)
        record_unrecorded_changes()

    first = staff_api_client.get("/api/catalog/revisions/", {"pageSize": 2}).json()
    second = staff_api_client.get(first["next"]).json()
    assert [revision["revision"] for revision in first["results"]] == [5, 4]
    assert [revision["revision"] for revision in second["results"]] == [3, 2]
    assert staff_api_client.get(second["previous"]).json()["results"] == first["results"]


def test_a_revision_is_its_whole_catalog_in_the_portable_format_with_its_release(staff_api_client):
    body = staff_api_client.get("/api/catalog/revisions/1/").json()

    assert list(body)[:4] == ["format", "version", "modes", "declared_tools"]
    assert (body["revision"], body["status"], body["approvals"], body["unreviewed"]) == (1, "published", [], False)
    assert (body["format"], body["version"], body["declared_tools"]) == ("aptix-modes", 1, [])
    assert [mode["key"] for mode in body["modes"]] == ["general", "ddr_authoring", "workflow_authoring"]
    assert body["modes"][0]["when_to_use"] == "Use this mode for everyday Q&A, explanation, and lightweight assistance."


@pytest.mark.parametrize("number", ["2", "0", "99999999999999999999", "two", "-1", "9" * 4301])
def test_an_unknown_revision_is_a_404_naming_it(staff_api_client, number):
    response = staff_api_client.get(f"/api/catalog/revisions/{number}/")
    assert (response.status_code, response.json()) == (404, {"detail": f"There is no catalog revision {number}."})


def test_revisions_need_a_token(anon_client):
    for url in ("/api/catalog/revisions/", "/api/catalog/revisions/1/"):
        assert anon_client.get(url).status_code == 401


def test_an_agents_token_cannot_read_who_edited_the_catalog(admin_client, admin_user, alice_client):
    general = AgentMode.objects.get(pk=GENERAL_ID)
    admin_client.post(change_url(GENERAL_ID), form_data(general, display_name="Everyday"))

    for url in ("/api/catalog/revisions/", "/api/catalog/revisions/2/"):
        response = alice_client.get(url)
        assert (response.status_code, response.json()) == (
            403, {"detail": "You do not have permission to perform this action."}
        )
        assert admin_user.username not in response.content.decode()
    # What an agent needs to run is still there: the revision its answers come from.
    assert alice_client.get("/api/modes/").json()["catalogRevision"] == 2


def test_a_session_owner_still_rebuilds_a_served_context_at_its_revision(admin_client, alice_client, alice_session):
    served = alice_client.get(f"/api/sessions/{alice_session.pk}/context/").content
    general = AgentMode.objects.get(pk=GENERAL_ID)
    admin_client.post(change_url(GENERAL_ID), form_data(general, when_to_use="Use this mode for anything else."))

    rebuilt = alice_client.get(f"/api/sessions/{alice_session.pk}/context/", {"revision": 1})

    assert (rebuilt.status_code, rebuilt.content) == (200, served)
    assert alice_client.get(f"/api/sessions/{alice_session.pk}/context/").content != served


def test_the_revisions_are_in_the_api_schema(admin_client):
    schema = admin_client.get(reverse("api-schema"), {"format": "json"}).json()
    assert schema["paths"]["/api/catalog/revisions/"]["get"]["operationId"] == "listCatalogRevisions"
    assert schema["paths"]["/api/catalog/revisions/{number}/"]["get"]["operationId"] == "getCatalogRevision"


# --- Reading revisions needs modes.view_catalogrevision, here as in the admin ------------------------------


@pytest.fixture
def staff_with(db, django_user_model):
    """staff_with(*codenames): an API client of a new staff user holding those permissions and no other."""
    from django.contrib.auth.models import Permission
    from rest_framework.test import APIClient

    def client_of(*codenames):
        user = django_user_model.objects.create_user(username=f"staff-{len(codenames)}", is_staff=True)
        user.user_permissions.set(Permission.objects.filter(content_type__app_label="modes", codename__in=codenames))
        client = APIClient()
        client.force_authenticate(user)
        return client

    return client_of


def test_staff_without_the_view_permission_read_no_revision_and_with_it_every_one(staff_with):
    urls = ("/api/catalog/revisions/", "/api/catalog/revisions/1/", "/api/catalog/revisions/1/diff/")
    bare, viewer = staff_with(), staff_with("view_catalogrevision")
    assert [bare.get(url).status_code for url in urls] == [403, 403, 403]
    assert [viewer.get(url).status_code for url in urls] == [200, 200, 200]


def test_a_never_published_revision_is_previewed_in_a_context_only_with_the_view_permission(
    staff_with, settings, admin_client
):
    settings.CATALOG_APPROVALS = 1
    general = AgentMode.objects.get(pk=GENERAL_ID)
    admin_client.post(change_url(GENERAL_ID), form_data(general, display_name="Everyday"))  # revision 2, pending
    answers = []
    for client in (staff_with(), staff_with("view_catalogrevision")):
        session = client.post("/api/sessions/", {}, format="json").json()["id"]
        answers.append(client.get(f"/api/sessions/{session}/context/", {"revision": 2}))
    assert [answer.status_code for answer in answers] == [403, 200]
    assert answers[0].json() == {
        "detail": "Catalog revision 2 was never published; only staff who may view catalog revisions may preview it."
    }
