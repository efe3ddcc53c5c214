"""REST API authentication: a token or a logged-in session; anonymous requests get 401 everywhere."""

import uuid

import pytest
from rest_framework.test import APIClient

from accounts.models import ApiToken

from ..expected import refusal_at

pytestmark = pytest.mark.django_db

SOME_ID = "00000000-0000-4000-8000-000000000000"

ENDPOINTS = [
    ("get", "/api/modes/"),
    ("get", "/api/modes/general/"),
    ("get", "/api/modes/general/tools/"),
    ("get", "/api/system-prompt/"),
    ("get", "/api/tools/"),
    ("post", "/api/tools/agent_hello_world/invoke/"),
    ("post", "/api/tools/agent_list_modes/invoke/"),
    ("post", "/api/tools/agent_change_mode/invoke/"),
    ("get", "/api/sessions/"),
    ("post", "/api/sessions/"),
    ("get", f"/api/sessions/{SOME_ID}/"),
    ("get", f"/api/sessions/{SOME_ID}/mode-changes/"),
    ("get", f"/api/sessions/{SOME_ID}/context/"),
]


def call(client, method, url):
    if method == "post":
        return client.post(url, {"arguments": {"name": "Ada"}}, format="json")
    return getattr(client, method)(url)


@pytest.mark.parametrize("method, url", ENDPOINTS, ids=[f"{m} {u}" for m, u in ENDPOINTS])
def test_anonymous_requests_get_401(anon_client, method, url):
    response = call(anon_client, method, url)
    assert response.status_code == 401
    assert response.json() == refusal_at(url, {"detail": "Authentication credentials were not provided."})
    assert response["WWW-Authenticate"] == "Token"


@pytest.mark.parametrize("method, url", ENDPOINTS, ids=[f"{m} {u}" for m, u in ENDPOINTS])
def test_an_unknown_token_gets_401(method, url, alice):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)
    response = call(client, method, url)
    assert response.status_code == 401
    assert response.json() == refusal_at(url, {"detail": "Invalid token."})


@pytest.mark.parametrize(
    "header",
    [
        "Token",
        "Token ",
        "Token short",
        "Token " + "x" * 41,
        "Token " + "é" * 40,
        "Token a b",
        "Token " + "a" * 63,
        "Token " + "a" * 65,
        "Token " + "A" * 64,
        "Token " + "g" * 64,
    ],
    ids=["no-key", "empty-key", "short", "long", "non-ascii", "two-parts", "63-hex", "65-hex", "upper-hex", "not-hex"],
)
def test_a_malformed_token_gets_401_without_a_query(alice, header, django_assert_num_queries):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    with django_assert_num_queries(0):
        assert client.get("/api/modes/").status_code == 401


def test_a_well_formed_unknown_key_of_either_length_gets_401(alice, anon_client):
    for key in ("0" * 40, "0" * 64, alice.api_key[:-1] + ("1" if alice.api_key[-1] == "0" else "0")):
        assert anon_client.get("/api/modes/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 401


def test_a_deleted_token_no_longer_authenticates(alice, alice_client):
    assert alice_client.get("/api/tools/").status_code == 200
    ApiToken.objects.filter(user=alice).delete()
    assert alice_client.get("/api/tools/").status_code == 401


def test_an_inactive_users_token_gets_401(alice, alice_client):
    alice.is_active = False
    alice.save()
    assert alice_client.get("/api/tools/").status_code == 401


def test_token_authentication_identifies_the_user(alice_client, alice):
    response = alice_client.post("/api/sessions/", {}, format="json")
    assert response.status_code == 201
    from sessions_app.models import AgentSession

    assert AgentSession.objects.get(pk=response.json()["id"]).owner == alice


def test_a_logged_in_django_session_authenticates(alice):
    client = APIClient()
    client.force_login(alice)
    assert client.get("/api/modes/").status_code == 200
    response = client.post("/api/sessions/", {"title": "From the browser"}, format="json")
    assert response.status_code == 201
    from sessions_app.models import AgentSession

    assert AgentSession.objects.get(pk=response.json()["id"]).owner == alice


def test_a_logged_out_session_gets_401(alice):
    client = APIClient()
    client.force_login(alice)
    client.logout()
    assert client.get("/api/modes/").status_code == 401


def test_the_token_endpoint_trades_credentials_for_a_new_token(alice, anon_client):
    response = anon_client.post("/api/token/", {"username": "alice", "password": "alice-password-123"}, format="json")
    assert response.status_code == 200
    assert list(response.json()) == ["token"] and response.json()["token"] != alice.api_key
    assert anon_client.get("/api/tools/", HTTP_AUTHORIZATION=f"Token {response.json()['token']}").status_code == 200


def test_the_token_endpoint_refuses_a_wrong_password(alice, anon_client):
    response = anon_client.post("/api/token/", {"username": "alice", "password": "wrong"}, format="json")
    assert response.status_code == 400
    assert "token" not in response.json()


def test_basic_authentication_is_not_accepted(alice):
    import base64

    client = APIClient()
    credentials = base64.b64encode(b"alice:alice-password-123").decode()
    client.credentials(HTTP_AUTHORIZATION=f"Basic {credentials}")
    assert client.get("/api/modes/").status_code == 401


def test_a_nonexistent_session_id_is_404_only_once_authenticated(alice_client, anon_client):
    url = f"/api/sessions/{uuid.uuid4()}/"
    assert anon_client.get(url).status_code == 401
    assert alice_client.get(url).status_code == 404
