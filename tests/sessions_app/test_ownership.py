"""Owner-only sessions: someone else's session is answered exactly like one that does not exist."""

import uuid

import pytest

from modes.catalog import published_release
from sessions_app.models import AgentSession, ModeChange

from ..expected import GENERAL_ID

pytestmark = pytest.mark.django_db


READ_SUFFIXES = ["", "mode-changes/", "context/"]


def snapshot():
    return (
        sorted(AgentSession.objects.values_list("pk", "mode_id", "title", "parent_id")),
        list(ModeChange.objects.values_list("pk", flat=True)),
    )


def answer(response):
    return response.status_code, response.json()


@pytest.mark.parametrize("suffix", READ_SUFFIXES, ids=["detail", "mode-changes", "context"])
def test_reading_someone_elses_session_is_the_same_404_as_a_nonexistent_one(alice_client, bob_session, suffix):
    url = f"/api/sessions/{bob_session.pk}/{suffix}"
    for_bobs = answer(alice_client.get(url))

    # The very same id once it no longer exists: the answer must not differ in any way.
    bob_session.delete()
    for_missing = answer(alice_client.get(url))

    assert for_bobs[0] == 404
    assert for_bobs == for_missing
    assert "bob" not in str(for_bobs[1]).lower()


@pytest.mark.parametrize("suffix", READ_SUFFIXES, ids=["detail", "mode-changes", "context"])
def test_someone_elses_session_and_a_random_id_get_the_same_404_apart_from_the_id(alice_client, bob_session, suffix):
    random_id = uuid.uuid4()
    bobs = alice_client.get(f"/api/sessions/{bob_session.pk}/{suffix}")
    missing = alice_client.get(f"/api/sessions/{random_id}/{suffix}")
    assert bobs.status_code == missing.status_code == 404
    assert bobs.json() == {"detail": f"No session {bob_session.pk} was found for you."}
    assert missing.json() == {"detail": f"No session {random_id} was found for you."}


@pytest.mark.parametrize("suffix", READ_SUFFIXES, ids=["detail", "mode-changes", "context"])
def test_a_malformed_session_id_is_404_too(alice_client, suffix):
    response = alice_client.get(f"/api/sessions/not-a-uuid/{suffix}")
    assert (response.status_code, response.json()) == (404, {"detail": "No session not-a-uuid was found for you."})


@pytest.mark.parametrize(
    "name, arguments",
    [
        ("agent_hello_world", {"name": "Ada"}),
        ("agent_list_modes", {}),
        ("agent_change_mode", {"mode": "ddr_authoring", "branch": True, "reason": "Taking over."}),
    ],
    ids=["hello", "list-modes", "change-mode"],
)
def test_invoking_a_tool_in_someone_elses_session_is_the_same_404_and_changes_nothing(
    alice_client, bob_session, name, arguments
):
    before = snapshot()
    url = f"/api/tools/{name}/invoke/"
    body = {"arguments": arguments, "sessionId": str(bob_session.pk)}

    for_bobs = answer(alice_client.post(url, body, format="json"))
    assert snapshot() == before

    bob_session.delete()
    for_missing = answer(alice_client.post(url, body, format="json"))

    assert for_bobs[0] == 404
    assert for_bobs == for_missing
    assert ModeChange.objects.count() == 0
    assert AgentSession.objects.count() == 0


def test_the_owner_still_sees_and_uses_the_session(bob_client, alice_client, bob_session):
    alice_client.post(
        "/api/tools/agent_change_mode/invoke/",
        {"arguments": {"mode": "ddr_authoring", "branch": False, "reason": "x"}, "sessionId": str(bob_session.pk)},
        format="json",
    )
    assert bob_client.get(f"/api/sessions/{bob_session.pk}/").json()["modeId"] == GENERAL_ID
    response = bob_client.post(
        "/api/tools/agent_change_mode/invoke/",
        {"arguments": {"mode": "ddr_authoring", "branch": False, "reason": "Bob's own."}, "sessionId": str(bob_session.pk)},
        format="json",
    )
    assert response.status_code == 200
    assert bob_client.get(f"/api/sessions/{bob_session.pk}/").json()["mode"] == "ddr_authoring"


def test_a_session_list_never_shows_someone_elses_sessions(alice_client, bob_client, alice_session, bob_session):
    assert [item["id"] for item in alice_client.get("/api/sessions/").json()["results"]] == [str(alice_session.pk)]
    assert [item["id"] for item in bob_client.get("/api/sessions/").json()["results"]] == [str(bob_session.pk)]


def test_a_branch_of_your_session_is_yours_and_readable_through_the_api(alice, alice_client, alice_session):
    response = alice_client.post(
        "/api/tools/agent_change_mode/invoke/",
        {"arguments": {"mode": "ddr_authoring", "branch": True, "reason": "x"}, "sessionId": str(alice_session.pk)},
        format="json",
    )
    assert response.status_code == 200
    child = AgentSession.objects.get(parent=alice_session)
    assert child.owner == alice
    assert alice_client.get(f"/api/sessions/{child.pk}/").status_code == 200


def test_the_audit_row_records_the_callers_identity_from_the_request_not_the_body(
    alice, bob, alice_client, alice_session
):
    response = alice_client.post(
        "/api/tools/agent_change_mode/invoke/",
        {
            "arguments": {"mode": "ddr_authoring", "branch": False, "reason": "x", "user": bob.pk},
            "sessionId": str(alice_session.pk),
        },
        format="json",
    )
    assert response.status_code == 400
    assert "'user'" in response.json()["errorMessage"]
    assert ModeChange.objects.count() == 0

    alice_client.post(
        "/api/tools/agent_change_mode/invoke/",
        {"arguments": {"mode": "ddr_authoring", "branch": False, "reason": "x"}, "sessionId": str(alice_session.pk)},
        format="json",
    )
    change = ModeChange.objects.get()
    assert change.changed_by == alice
    assert change.org == alice.membership.organization
    assert change.org.slug == "acme"


def test_someone_elses_session_is_404_even_where_the_tool_would_be_403(alice_client, bob, new_mode):
    """Ownership is checked before the mode's tools: a 403 would reveal that the session exists."""
    from sessions_app.services import create_session

    new_mode("closed", when_to_use="Use this mode for tests.", associated_tool_ids=[])
    bobs = create_session(release=published_release(), owner=bob, org=None, mode_key="closed")
    url = "/api/tools/agent_hello_world/invoke/"
    body = {"arguments": {"name": "Ada"}, "sessionId": str(bobs.pk)}

    for_bobs = answer(alice_client.post(url, body, format="json"))
    bobs.delete()
    for_missing = answer(alice_client.post(url, body, format="json"))

    assert for_bobs[0] == 404
    assert for_bobs == for_missing
