"""
Who may do what over the API.

- Another user's session is answered exactly like one that does not exist (404, same body but for the id),
  on every session-scoped endpoint, and a tool call carrying it changes nothing.
- Anonymous requests get 401 on every /api/ endpoint, except the schema, its documentation and
  POST /api/token/, which are public by design.
- Staff are no exception over the API: they see other users' sessions only in the admin.
"""

import json
import uuid

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from accounts.tokens import create_token
from modes.models import AgentMode
from sessions_app.models import AgentSession, ModeChange

from ..expected import refusal_at, tool_error

pytestmark = pytest.mark.django_db

PUBLIC_PATHS = {"/api/schema/", "/api/docs/"}
TOOL_CALLS = {
    "agent_hello_world": {"name": "Ada"},
    "agent_list_modes": {"includeExamples": True},
    "agent_change_mode": {"mode": "ddr_authoring", "branch": False, "reason": "Taking over."},
    "agent_change_mode (branch)": {"mode": "workflow_authoring", "branch": True, "reason": "Taking over."},
}


def database_state():
    return (
        sorted(AgentSession.objects.values_list("pk", "owner_id", "mode_id", "title", "parent_id", "updated_at")),
        sorted(ModeChange.objects.values_list("pk", "session_id", "to_mode_id")),
        sorted(AgentMode.objects.values_list("pk", "is_default", "updated_at")),
    )


def answer(response):
    return response.status_code, response.json()


def schema_operations():
    document = SchemaGenerator().get_schema(request=None, public=True)
    return [(path, method) for path, methods in document["paths"].items() for method in methods]


def concrete(path, session_id=None):
    return (
        path.replace("{key}", "general")
        .replace("{name}", "agent_hello_world")
        .replace("{session_id}", str(session_id or uuid.uuid4()))
    )


# --- Another user's session ---------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", ["", "mode-changes/", "context/"], ids=["detail", "mode-changes", "context"])
def test_another_users_session_is_the_same_404_as_a_random_id(alice_session, bob_client, suffix):
    random_id = uuid.uuid4()
    for_alices = answer(bob_client.get(f"/api/sessions/{alice_session.pk}/{suffix}"))
    for_random = answer(bob_client.get(f"/api/sessions/{random_id}/{suffix}"))
    assert for_alices[0] == for_random[0] == 404
    assert json.dumps(for_alices[1]).replace(str(alice_session.pk), "ID") == json.dumps(for_random[1]).replace(
        str(random_id), "ID"
    )
    assert for_alices[1] == {"detail": f"No session {alice_session.pk} was found for you."}


@pytest.mark.parametrize("tool", list(TOOL_CALLS))
def test_a_tool_call_with_another_users_session_is_the_same_404_and_changes_nothing(alice_session, bob_client, tool):
    name = tool.split(" ")[0]
    url = f"/api/tools/{name}/invoke/"
    random_id = uuid.uuid4()
    before = database_state()
    for_alices = answer(bob_client.post(url, {"arguments": TOOL_CALLS[tool], "sessionId": str(alice_session.pk)}, format="json"))
    assert database_state() == before
    for_random = answer(bob_client.post(url, {"arguments": TOOL_CALLS[tool], "sessionId": str(random_id)}, format="json"))
    assert for_alices[0] == for_random[0] == 404
    assert for_alices[1] == tool_error(f"No session {alice_session.pk} was found for you.")
    assert for_random[1] == tool_error(f"No session {random_id} was found for you.")
    alice_session.refresh_from_db()
    assert alice_session.mode.key == "general"


def test_the_owner_gets_the_session_that_others_are_refused(alice_session, alice_client, bob_client):
    # The 404s above are about ownership, not about a broken endpoint.
    for suffix in ["", "mode-changes/", "context/"]:
        assert alice_client.get(f"/api/sessions/{alice_session.pk}/{suffix}").status_code == 200
        assert bob_client.get(f"/api/sessions/{alice_session.pk}/{suffix}").status_code == 404
    body = {"arguments": TOOL_CALLS["agent_change_mode"], "sessionId": str(alice_session.pk)}
    assert alice_client.post("/api/tools/agent_change_mode/invoke/", body, format="json").status_code == 200


def test_another_users_sessions_never_appear_in_the_session_list(alice_session, bob_session, bob_client):
    listed = bob_client.get("/api/sessions/").json()
    assert [item["id"] for item in listed["results"]] == [str(bob_session.pk)]
    assert listed["next"] is None


def test_a_session_created_with_another_organization_named_in_the_body_still_belongs_to_the_caller(bob, bob_client):
    # Who and which organization come from the authentication, never from the body.
    response = bob_client.post("/api/sessions/", {"title": "Mine", "org": "acme", "owner": 1}, format="json")
    assert response.status_code == 400
    response = bob_client.post("/api/sessions/", {"title": "Mine"}, format="json")
    session = AgentSession.objects.get(pk=response.json()["id"])
    assert (session.owner, session.org.slug, response.json()["org"]) == (bob, "globex", "globex")


# --- Anonymous requests -------------------------------------------------------------------------------


def _api_routes(resolver=None, prefix=""):
    """Every URL pattern under /api/, as schema-style paths."""
    for pattern in (resolver or get_resolver()).url_patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from _api_routes(pattern, route)
        elif isinstance(pattern, URLPattern) and route.startswith("api/"):
            yield "/" + route.replace("<str:", "{").replace(">", "}")


def test_every_api_route_is_in_the_schema_or_public_by_design():
    documented = {path for path, method in schema_operations()}
    assert set(_api_routes()) == documented | PUBLIC_PATHS


@pytest.mark.parametrize("path, method", schema_operations(), ids=lambda value: value)
def test_anonymous_requests_get_401_on_every_operation_but_the_token_endpoint(anon_client, alice_session, path, method):
    url = concrete(path, alice_session.pk)
    body = json.dumps({"arguments": {"name": "Ada"}})
    response = anon_client.generic(method.upper(), url, body, content_type="application/json")
    if path == "/api/token/":
        assert response.status_code == 400  # public: it only asks for a username and password
        assert response.json() == {"arguments": ["Unknown field; accepted fields are username, password, name."]}
    else:
        assert response.status_code == 401
        assert response.json() == refusal_at(url, {"detail": "Authentication credentials were not provided."})
        assert response["WWW-Authenticate"] == "Token"


@pytest.mark.parametrize("url", sorted(PUBLIC_PATHS))
def test_the_schema_and_its_documentation_are_public_by_design(anon_client, url):
    assert anon_client.get(url).status_code == 200


def test_the_token_endpoint_is_public_and_trades_credentials_for_a_new_token(anon_client, alice):
    response = anon_client.post("/api/token/", {"username": "alice", "password": "alice-password-123"}, format="json")
    assert response.status_code == 200
    assert anon_client.get("/api/tools/", HTTP_AUTHORIZATION=f"Token {response.json()['token']}").status_code == 200


@pytest.mark.parametrize(
    "header",
    ["Token " + "0" * 40, "Token expired-or-revoked", "Token", "Bearer something"],
    ids=["unknown-token", "malformed-token", "keyword-only", "bearer"],
)
def test_the_token_endpoint_ignores_a_stale_authorization_header(alice, header):
    # A client whose token was revoked must still be able to log in again: the endpoint is public.
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    response = client.post("/api/token/", {"username": "alice", "password": "alice-password-123"}, format="json")
    assert response.status_code == 200, response.content
    assert list(response.json()) == ["token"]


def test_an_inactive_user_gets_no_token(anon_client, alice):
    alice.is_active = False
    alice.save(update_fields=["is_active"])
    response = anon_client.post("/api/token/", {"username": "alice", "password": "alice-password-123"}, format="json")
    assert response.status_code == 400
    assert response.json() == {"non_field_errors": ["Unable to log in with provided credentials."]}


# --- Staff ----------------------------------------------------------------------------------------------


@pytest.fixture
def staff(db):
    user = get_user_model().objects.create_user(username="staffer", is_staff=True, is_superuser=True)
    _, user.api_key = create_token(user=user, name="tests")
    return user


@pytest.fixture
def staff_client(staff):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {staff.api_key}")
    return client


@pytest.mark.parametrize("suffix", ["", "mode-changes/", "context/"], ids=["detail", "mode-changes", "context"])
def test_staff_get_404_for_other_users_sessions_over_the_api(staff_client, alice_session, suffix):
    response = staff_client.get(f"/api/sessions/{alice_session.pk}/{suffix}")
    assert answer(response) == (404, {"detail": f"No session {alice_session.pk} was found for you."})


def test_staff_cannot_run_tools_in_other_users_sessions_over_the_api(staff_client, alice_session):
    before = database_state()
    body = {"arguments": TOOL_CALLS["agent_change_mode"], "sessionId": str(alice_session.pk)}
    response = staff_client.post("/api/tools/agent_change_mode/invoke/", body, format="json")
    assert response.status_code == 404
    assert database_state() == before


def test_staff_session_list_over_the_api_holds_only_their_own(staff_client, alice_session, bob_session):
    assert staff_client.get("/api/sessions/").json() == {"next": None, "previous": None, "results": []}


def test_staff_see_other_users_sessions_in_the_admin(client, alice_session, bob_session):
    # A staff member with only the view permission: the admin is where every session is visible.
    viewer = get_user_model().objects.create_user(username="viewer", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_agentsession"))
    client.force_login(viewer)
    changelist = client.get(reverse("admin:sessions_app_agentsession_changelist"))
    assert changelist.status_code == 200
    assert str(alice_session.pk) in changelist.content.decode()
    assert str(bob_session.pk) in changelist.content.decode()
    detail = client.get(reverse("admin:sessions_app_agentsession_change", args=[alice_session.pk]))
    assert detail.status_code == 200
    assert "Alice" in detail.content.decode()


def test_a_user_who_is_not_staff_cannot_use_the_admin(client, alice, alice_session):
    client.force_login(alice)
    response = client.get(reverse("admin:sessions_app_agentsession_changelist"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))
