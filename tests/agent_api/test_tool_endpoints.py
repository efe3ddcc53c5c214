"""/api/tools/ and POST /api/tools/<name>/invoke/: the envelope and its status codes."""

import json
import logging
import uuid

import pytest
from django.db import connection

from modes.catalog import published_release
from sessions_app.models import AgentSession, ModeChange
from sessions_app.services import create_session

from ..expected import (
    CHANGE_MODE_SCHEMA,
    DDR_ID,
    GENERAL_ID,
    HELLO_WORLD_SCHEMA,
    LIST_MODES_SCHEMA,
    WORKFLOW_ID,
    change_mode_result,
    hello_result,
    seed_listing,
    tool_error,
)

pytestmark = pytest.mark.django_db


def invoke(client, name, body):
    return client.post(f"/api/tools/{name}/invoke/", body, format="json")


def invoke_in(session, client, tool, /, **arguments):
    """The tool invoked with these arguments in the session."""
    return invoke(client, tool, {"arguments": arguments, "sessionId": str(session.pk)})


def envelope(response):
    body = response.json()
    assert list(body) == ["successful", "result", "errorMessage"], body
    return body


# --- GET /api/tools/ -----------------------------------------------------------------------------------------


def test_tool_list_returns_every_schema_sorted_by_name(alice_client):
    response = alice_client.get("/api/tools/")
    assert response.status_code == 200
    body = response.json()
    assert body == {"tools": [CHANGE_MODE_SCHEMA, HELLO_WORLD_SCHEMA, LIST_MODES_SCHEMA], "clientTools": []}


# --- Success -------------------------------------------------------------------------------------------------


def test_invoke_hello_world_with_an_arguments_object_is_200_with_the_envelope(alice_client):
    response = invoke(alice_client, "agent_hello_world", {"arguments": {"name": "Ada"}, "conversationId": "c-9"})
    assert response.status_code == 200
    body = envelope(response)
    assert (body["successful"], body["errorMessage"]) == (True, None)
    assert json.loads(body["result"]) == hello_result("Ada", conversation_id="c-9")


def test_invoke_accepts_arguments_as_a_json_string_of_an_object(alice_client):
    as_object = envelope(invoke(alice_client, "agent_hello_world", {"arguments": {"name": "Ada"}}))
    as_string = envelope(invoke(alice_client, "agent_hello_world", {"arguments": '{"name": "Ada"}'}))
    assert as_string == as_object
    assert as_string["successful"] is True


def test_invoke_passes_the_session_id_to_the_tool(alice_client, alice_session):
    response = invoke_in(alice_session, alice_client, "agent_hello_world", name="Ada")
    assert response.status_code == 200
    assert json.loads(envelope(response)["result"]) == hello_result("Ada", session_id=str(alice_session.pk))


def test_invoke_list_modes_without_arguments_lists_the_catalog(alice_client):
    for body in ({}, {"arguments": None}, {"arguments": {}}, {"arguments": ""}):
        response = invoke(alice_client, "agent_list_modes", body)
        assert response.status_code == 200, body
        assert json.loads(envelope(response)["result"]) == seed_listing(), body


def test_invoke_change_mode_changes_the_callers_session(alice, alice_client, alice_session):
    response = invoke_in(
        alice_session, alice_client, "agent_change_mode", mode="ddr_authoring", branch=False, reason="Spec work."
    )
    assert response.status_code == 200
    result = json.loads(envelope(response)["result"])
    assert result == change_mode_result("ddr_authoring", branch=False, reason="Spec work.")
    assert AgentSession.objects.get(pk=alice_session.pk).mode_id == DDR_ID
    change = ModeChange.objects.get()
    assert (change.changed_by, change.org) == (alice, alice.membership.organization)


def test_invoke_change_mode_with_branch_returns_the_new_session_id(alice, alice_client, alice_session):
    response = invoke_in(
        alice_session, alice_client, "agent_change_mode", mode="workflow_authoring", branch=True, reason="New work."
    )
    assert response.status_code == 200
    child = AgentSession.objects.get(parent=alice_session)
    assert json.loads(envelope(response)["result"]) == change_mode_result(
        "workflow_authoring", branch=True, reason="New work.", branch_session_id=child.pk
    )
    assert (child.owner, child.mode_id) == (alice, WORKFLOW_ID)
    # The new session is alice's and shows up through the API.
    assert alice_client.get(f"/api/sessions/{child.pk}/").json()["parentId"] == str(alice_session.pk)


# --- 400: the tool rejected its arguments -------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, body, message",
    [
        ("agent_hello_world", {"arguments": {"name": ""}}, "'name'"),
        ("agent_hello_world", {"arguments": {}}, "'name'"),
        ("agent_list_modes", {"arguments": {"includeExamples": "yes"}}, "'includeExamples'"),
        ("agent_list_modes", {"arguments": {"filter": 5}}, "'filter'"),
        ("agent_list_modes", {"arguments": {"bogus": 1}}, "'bogus'"),
        ("agent_change_mode", {"arguments": {"branch": False, "reason": "r"}}, "session id is missing"),
    ],
    ids=["empty-name", "no-name", "examples-yes", "filter-5", "unknown-field", "change-without-session"],
)
def test_a_tool_rejecting_its_arguments_is_400_with_the_envelope(alice_client, name, body, message):
    response = invoke(alice_client, name, body)
    assert response.status_code == 400
    body = envelope(response)
    assert body["successful"] is False
    assert body["result"] is None
    assert message in body["errorMessage"]


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"branch": False, "reason": "r"}, "ModeChangeTool requires a non-empty 'mode' string."),
        ({"mode": "ddr_authoring", "branch": "yes", "reason": "r"}, "ModeChangeTool requires a 'branch' boolean flag."),
        (
            {"mode": "ddr_authoring", "branch": True, "reason": " "},
            "ModeChangeTool requires a non-empty 'reason' string explaining why the mode change is needed.",
        ),
        ("   ", "ModeChangeTool requires a non-empty arguments object."),
    ],
    ids=["mode", "branch", "reason", "blank-arguments"],
)
def test_change_mode_validation_messages_reach_the_caller_and_nothing_changes(
    alice_client, alice_session, arguments, message
):
    response = invoke(alice_client, "agent_change_mode", {"arguments": arguments, "sessionId": str(alice_session.pk)})
    assert response.status_code == 400
    assert envelope(response)["errorMessage"] == message
    assert AgentSession.objects.get(pk=alice_session.pk).mode_id == GENERAL_ID
    assert ModeChange.objects.count() == 0
    assert AgentSession.objects.count() == 1


def test_change_mode_to_an_unknown_key_is_400_naming_it_and_listing_valid_keys(alice_client, alice_session):
    response = invoke_in(alice_session, alice_client, "agent_change_mode", mode="poetry", branch=False, reason="r")
    assert response.status_code == 400
    message = envelope(response)["errorMessage"]
    assert "'poetry'" in message and "general" in message and "ddr_authoring" in message
    assert ModeChange.objects.count() == 0


# --- 400: the request itself is malformed -------------------------------------------------------------------


@pytest.mark.parametrize(
    "arguments",
    [[1, 2], 5, True, "not json", "[1, 2]", '"a string"', "42"],
    ids=["list", "number", "bool", "not-json-string", "string-of-list", "string-of-string", "string-of-number"],
)
def test_arguments_that_are_neither_an_object_nor_a_json_object_string_are_400(alice_client, arguments):
    response = invoke(alice_client, "agent_hello_world", {"arguments": arguments})
    assert response.status_code == 400
    assert envelope(response) == tool_error("arguments: Must be a JSON object, or a string holding a JSON object.")


@pytest.mark.parametrize("field", ["user", "org", "owner", "session"])
def test_identity_fields_in_the_body_are_refused_as_unknown(alice_client, bob, field):
    response = invoke(alice_client, "agent_hello_world", {"arguments": {"name": "Ada"}, field: bob.pk})
    assert response.status_code == 400
    assert envelope(response) == tool_error(
        f"{field}: Unknown field; accepted fields are arguments, sessionId, conversationId."
    )


def test_a_body_that_is_not_a_json_object_is_400(alice_client):
    response = alice_client.post("/api/tools/agent_hello_world/invoke/", "[1]", content_type="application/json")
    assert response.status_code == 400
    response = alice_client.post("/api/tools/agent_hello_world/invoke/", "{", content_type="application/json")
    assert response.status_code == 400


def test_a_session_id_that_is_not_a_uuid_is_400(alice_client):
    response = invoke(alice_client, "agent_hello_world", {"arguments": {"name": "Ada"}, "sessionId": "abc"})
    assert response.status_code == 400
    assert envelope(response) == tool_error("sessionId: 'abc' is not a session id; session ids are UUIDs.")


# --- 404 --------------------------------------------------------------------------------------------------


def test_an_unknown_tool_is_404(alice_client):
    response = invoke(alice_client, "agent_time_travel", {"arguments": {}})
    assert response.status_code == 404
    assert envelope(response) == tool_error("No tool is registered or declared under the name 'agent_time_travel'.")


def test_a_nonexistent_session_is_404(alice_client):
    session_id = uuid.uuid4()
    response = invoke(alice_client, "agent_hello_world", {"arguments": {"name": "Ada"}, "sessionId": str(session_id)})
    assert response.status_code == 404
    assert envelope(response) == tool_error(f"No session {session_id} was found for you.")


# --- 403: the session's mode does not enable the tool ---------------------------------------------------------


@pytest.fixture
def restricted_session(alice, new_mode):
    new_mode(
        "restricted",
        when_to_use="Use this mode for tests of tool gating.",
        associated_tool_ids=["agent_list_modes"],
    )
    return create_session(
        release=published_release(), owner=alice, org=alice.membership.organization, mode_key="restricted"
    )


def test_a_tool_the_sessions_mode_does_not_enable_is_403(alice_client, restricted_session):
    response = invoke_in(restricted_session, alice_client, "agent_hello_world", name="Ada")
    assert response.status_code == 403
    assert envelope(response) == tool_error(
        "Mode 'restricted' of this session does not enable the tool 'agent_hello_world'."
    )


def test_a_tool_the_sessions_mode_enables_is_allowed(alice_client, restricted_session):
    response = invoke(alice_client, "agent_list_modes", {"sessionId": str(restricted_session.pk)})
    assert response.status_code == 200


def test_the_same_tool_without_a_session_is_allowed(alice_client, restricted_session):
    assert invoke(alice_client, "agent_hello_world", {"arguments": {"name": "Ada"}}).status_code == 200


def test_agent_change_mode_is_allowed_even_when_the_mode_does_not_list_it(alice_client, restricted_session):
    arguments = {"mode": "general", "branch": False, "reason": "Out of the restricted mode."}
    response = invoke_in(restricted_session, alice_client, "agent_change_mode", **arguments)
    assert response.status_code == 200, response.json()
    assert AgentSession.objects.get(pk=restricted_session.pk).mode_id == GENERAL_ID


# --- 500: something unexpected failed -------------------------------------------------------------------------


def test_an_unexpected_failure_is_500_with_a_generic_message_and_is_logged(alice_client, caplog):
    # A real failure, no mocks: the catalog's head row, which every read of the published catalog reads first,
    # disappears inside the test's transaction.
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE modes_cataloghead RENAME TO modes_cataloghead_gone")

    with caplog.at_level(logging.ERROR):
        response = invoke(alice_client, "agent_list_modes", {"arguments": {"includeExamples": True}})

    assert response.status_code == 500
    body = envelope(response)
    assert body["successful"] is False
    assert body["result"] is None
    message = body["errorMessage"]
    assert message
    for leak in (
        "modes_agentmode", "modes_cataloghead", "no such table", "does not exist", "Traceback", "OperationalError",
        "ProgrammingError",
    ):
        assert leak not in message
    assert any(record.exc_info for record in caplog.records if record.levelno >= logging.ERROR)


# --- one envelope for every refusal -------------------------------------------------------------------------


def test_every_refusal_of_the_invoke_endpoint_is_the_envelope_a_401_too(
    alice, alice_client, anon_client, settings
):
    """One place that walks the statuses a client can meet; each is also tested where its cause is."""
    from rest_framework.test import APIClient

    url = "/api/tools/agent_hello_world/invoke/"
    hello = {"arguments": {"name": "Ada"}}
    cookie_client = APIClient(enforce_csrf_checks=True)
    cookie_client.force_login(alice)
    answers = {
        400: alice_client.post(url, {**hello, "extra": 1}, format="json"),
        403: cookie_client.post(url, hello, format="json"),  # a login cookie without its CSRF token
        405: alice_client.get(url),
        411: alice_client.generic("POST", url, b"{}", content_type="application/json", HTTP_TRANSFER_ENCODING="chunked"),
        413: alice_client.generic("POST", url, b"{" + b" " * 70000 + b"}", content_type="application/json"),
        415: alice_client.generic("POST", url, b"name=Ada", content_type="text/plain"),
    }
    settings.REST_FRAMEWORK = {  # one a day: the next call passes, the one after it is refused
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "tool-invoke": "1/day"},
    }
    assert alice_client.post(url, hello, format="json").status_code == 200
    answers[429] = alice_client.post(url, hello, format="json")
    for code, response in answers.items():
        assert response.status_code == code, (code, response.content)
        body = envelope(response)
        assert (body["successful"], body["result"]) == (False, None), code
        assert isinstance(body["errorMessage"], str) and body["errorMessage"], code
    assert answers[403].json()["errorMessage"] == "CSRF Failed: CSRF cookie not set."
    assert answers[405].json()["errorMessage"] == 'Method "GET" not allowed.'
    assert answers[415].json()["errorMessage"] == 'Unsupported media type "text/plain" in request.'

    unauthenticated = anon_client.post(url, hello, format="json")
    assert unauthenticated.status_code == 401
    assert unauthenticated.json() == tool_error("Authentication credentials were not provided.")
    assert unauthenticated["WWW-Authenticate"] == "Token"


def test_a_failure_outside_the_view_is_the_envelope_on_the_invoke_url_too(rf):
    # Django's own 500 page, for an error raised before DRF's handler could answer (in a middleware, say).
    from aptix_site.errors import server_error

    response = server_error(rf.post("/api/tools/agent_list_modes/invoke/"))
    assert response.status_code == 500
    assert json.loads(response.content) == tool_error("The server failed to handle this request.")
    elsewhere = server_error(rf.get("/api/modes/"))
    assert json.loads(elsewhere.content) == {"detail": "The server failed to handle this request."}
