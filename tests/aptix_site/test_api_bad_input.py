"""
Bad input never reaches a 500 and never changes anything.

Every kind of malformed request gets a 400 (413 for an oversized body) whose body says what is wrong in
words a person can act on, and the database is exactly as it was: no new session or mode change, no mode
switched. Odd but valid text (right-to-left marks, emoji, combining characters) is accepted and comes back
exactly as it was sent.
"""

import base64
import json
import logging
from contextlib import contextmanager
from urllib.parse import quote

import pytest
import yaml
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from accounts.models import ApiToken
from modes.models import AgentMode
from sessions_app.models import AgentSession, ModeChange

from ..expected import (
    CHANGE_MODE_SCHEMA,
    HELLO_WORLD_SCHEMA,
    LIST_MODES_SCHEMA,
    refusal_at,
    seed_prompt,
    tool_error,
)

pytestmark = pytest.mark.django_db

HELLO = "/api/tools/agent_hello_world/invoke/"
LIST_MODES = "/api/tools/agent_list_modes/invoke/"
CHANGE_MODE = "/api/tools/agent_change_mode/invoke/"
SESSIONS = "/api/sessions/"
TOKEN = "/api/token/"
INVALID_ARGUMENTS = "arguments: Must be a JSON object, or a string holding a JSON object."
NUL_IN_BODY = {"detail": "Text in the request body must not contain NUL characters."}
SURROGATE_IN_BODY = {"detail": "Text in the request body must not contain invalid Unicode (a lone surrogate)."}

# Odd but valid: a right-to-left mark and override, Arabic, emoji (astral, and a ZWJ sequence), a combining
# accent, an astral CJK character, a byte-order mark. No surrounding spaces (those are a separate question).
ODD = "Zoë\u200fمرحبا\u202e 🙂👩\u200d👩\u200d👧 e\u0301 𠜎\ufeff!"


@pytest.fixture(autouse=True)
def generous_throttles(settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"tool-invoke": "10000/min", "session-create": "10000/min", "token": "10000/min"},
    }


def database_state():
    return (
        sorted(AgentSession.objects.values_list("pk", "owner_id", "mode_id", "title", "parent_id", "updated_at")),
        sorted(ModeChange.objects.values_list("pk", "session_id", "from_mode_id", "to_mode_id", "reason")),
        sorted(AgentMode.objects.values_list("pk", "key", "is_default", "updated_at")),
        sorted(ApiToken.objects.values_list("digest", "user_id")),
    )


@pytest.fixture
def unchanged(alice_session, bob_session):
    """Asserts that the database is exactly as it was before the block (sessions, audit, catalog, tokens)."""

    @contextmanager
    def block():
        before = database_state()
        yield
        assert database_state() == before, "a refused request changed the database"

    return block


def send(client, url, body, content_type="application/json"):
    """POST a raw body (bytes or text) exactly as given."""
    return client.generic("POST", url, body, content_type=content_type)


def change_mode_body(session, **arguments):
    return {
        "arguments": {"mode": "ddr_authoring", "branch": False, "reason": "The user agreed.", **arguments},
        "sessionId": str(session.pk),
    }


# --- Malformed bodies -------------------------------------------------------------------------------------


BODY_ENDPOINTS = [HELLO, CHANGE_MODE, SESSIONS, TOKEN]


@pytest.mark.parametrize("url", BODY_ENDPOINTS)
@pytest.mark.parametrize(
    "body",
    [b'{"arguments": ', b"{'title': 'x'}", b'{"title": "x",}', b"nul", b'{"title": "\xff\xfe"}', b"\xef\xbb\xbf{}"],
    ids=["truncated", "single-quotes", "trailing-comma", "bare-word", "invalid-utf8", "utf8-bom"],
)
def test_malformed_json_is_a_400_that_says_it_is_not_json(alice_client, unchanged, url, body):
    with unchanged():
        response = send(alice_client, url, body)
    assert response.status_code == 400
    body = response.json()
    assert (body["errorMessage"] if "/invoke/" in url else body["detail"]).startswith("JSON parse error - ")


@pytest.mark.parametrize("url", BODY_ENDPOINTS)
@pytest.mark.parametrize(
    "body, kind",
    [(b"[]", "list"), (b'[{"title": "x"}]', "list"), (b'"text"', "str"), (b"5", "int"), (b"true", "bool")],
)
def test_a_body_that_is_not_an_object_is_a_400_naming_what_it_got(alice_client, unchanged, url, body, kind):
    with unchanged():
        response = send(alice_client, url, body)
    assert response.status_code == 400
    assert response.json() == refusal_at(url, {"non_field_errors": [f"Invalid data. Expected a dictionary, but got {kind}."]})


@pytest.mark.parametrize("url", BODY_ENDPOINTS)
def test_a_json_null_body_is_a_400(alice_client, unchanged, url):
    with unchanged():
        response = send(alice_client, url, b"null")
    assert response.status_code == 400
    assert response.json() == refusal_at(url, {"non_field_errors": ["No data provided"]})


@pytest.mark.parametrize("content_type", ["text/plain", "application/xml", "multipart/form-data; boundary=x"])
@pytest.mark.parametrize("url", [HELLO, SESSIONS, TOKEN])
def test_a_body_that_is_not_json_is_refused_as_an_unsupported_media_type(alice_client, unchanged, url, content_type):
    with unchanged():
        response = send(alice_client, url, b'{"title": "x"}', content_type=content_type)
    assert response.status_code == 415
    assert response.json() == refusal_at(url, {"detail": f'Unsupported media type "{content_type}" in request.'})


# A POST that takes no body still reads one sent: ignored, it approved or evaluated whatever the body said.
NO_BODY_POSTS = ["/api/catalog/revisions/2/approve/", "/api/catalog/revisions/2/evals/"]


@pytest.fixture
def reviewer(settings):
    """Revision 2 pending under review, and an API client of a staff user who may approve and evaluate it."""
    from django.contrib.auth.models import Permission

    from ..conftest import through_the_services, valid_mode

    settings.CATALOG_APPROVALS = 1
    through_the_services(lambda: valid_mode("scout").save(force_insert=True))
    user = get_user_model().objects.create_user(username="reviewer", is_staff=True)
    granted = ["view_catalogrevision", "approve_revision", "add_routingevaluation", "view_routingevaluation"]
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="modes", codename__in=granted))
    client = APIClient()
    client.force_login(user)
    return client


@pytest.mark.parametrize("url", NO_BODY_POSTS)
@pytest.mark.parametrize(
    "body, content_type, status, problem",
    [
        (b'{"reason": "LGTM"}', "application/json", 400, {"reason": ["Unknown field; this request takes none."]}),
        (b'{"reason": ', "application/json", 400, None),
        (b"[]", "application/json", 400, {"non_field_errors": ["Invalid data. Expected a dictionary, but got list."]}),
        (b"null", "application/json", 400, {"non_field_errors": ["No data provided"]}),
        (b"LGTM", "text/plain", 415, {"detail": 'Unsupported media type "text/plain" in request.'}),
    ],
    ids=["field", "malformed", "list", "null", "text"],
)
def test_a_post_that_takes_no_body_refuses_one_it_cannot_take_and_changes_nothing(
    reviewer, url, body, content_type, status, problem
):
    from modes.models import CatalogApproval, RoutingEvaluation

    response = send(reviewer, url, body, content_type=content_type)

    assert response.status_code == status, response.content
    if problem is None:
        assert response.json()["detail"].startswith("JSON parse error - ")
    else:
        assert response.json() == problem
    assert (CatalogApproval.objects.count(), RoutingEvaluation.objects.count()) == (0, 0)
    assert send(reviewer, url, b"{}").status_code in (200, 201)  # an empty object is no body
    assert reviewer.post(url).status_code in (200, 201)


# --- arguments --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "arguments",
    [5, True, ["name"], "not json", "[1, 2]", '"a string"', "null", "{broken"],
    ids=repr,
)
@pytest.mark.parametrize("url", [HELLO, LIST_MODES, CHANGE_MODE])
def test_arguments_that_are_neither_an_object_nor_a_string_holding_one_are_a_400(
    alice_client, alice_session, unchanged, url, arguments
):
    with unchanged():
        response = alice_client.post(url, {"arguments": arguments, "sessionId": str(alice_session.pk)}, format="json")
    assert response.status_code == 400
    assert response.json() == tool_error(INVALID_ARGUMENTS)


def test_arguments_may_be_a_string_holding_the_object(alice_client, alice_session):
    body = {"arguments": json.dumps({"mode": "ddr_authoring", "branch": False, "reason": "Agreed."})}
    response = alice_client.post(CHANGE_MODE, {**body, "sessionId": str(alice_session.pk)}, format="json")
    assert response.status_code == 200
    alice_session.refresh_from_db()
    assert alice_session.mode.key == "ddr_authoring"


# --- Wrong types ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"branch": "yes"}, "ModeChangeTool requires a 'branch' boolean flag."),
        ({"branch": 1}, "ModeChangeTool requires a 'branch' boolean flag."),
        ({"branch": None}, "ModeChangeTool requires a 'branch' boolean flag."),
        ({"mode": 5}, "ModeChangeTool requires a non-empty 'mode' string."),
        ({"mode": ["ddr_authoring"]}, "ModeChangeTool requires a non-empty 'mode' string."),
        ({"mode": {"key": "ddr_authoring"}}, "ModeChangeTool requires a non-empty 'mode' string."),
        ({"reason": 5}, "ModeChangeTool requires a non-empty 'reason' string explaining why the mode change is needed."),
        ({"reason": ["x"]}, "ModeChangeTool requires a non-empty 'reason' string explaining why the mode change is needed."),
    ],
    ids=repr,
)
def test_change_mode_arguments_of_the_wrong_type_are_refused_and_the_mode_stays(
    alice_client, alice_session, unchanged, arguments, message
):
    with unchanged():
        response = alice_client.post(CHANGE_MODE, change_mode_body(alice_session, **arguments), format="json")
    assert response.status_code == 400
    assert response.json() == {"successful": False, "result": None, "errorMessage": message}
    alice_session.refresh_from_db()
    assert alice_session.mode.key == "general"


@pytest.mark.parametrize(
    "url, arguments, message",
    [
        (HELLO, {"name": 5}, "HelloWorldTool requires a non-empty 'name' string."),
        (HELLO, {"name": ["Ada"]}, "HelloWorldTool requires a non-empty 'name' string."),
        (HELLO, {"name": True}, "HelloWorldTool requires a non-empty 'name' string."),
        (LIST_MODES, {"includeExamples": "yes"}, "ListModesTool expects 'includeExamples' to be true or false."),
        (LIST_MODES, {"includeExamples": 1}, "ListModesTool expects 'includeExamples' to be true or false."),
        (LIST_MODES, {"filter": 5}, "ListModesTool expects 'filter' to be a string of at most 200 characters."),
        (LIST_MODES, {"filter": ["general"]}, "ListModesTool expects 'filter' to be a string of at most 200 characters."),
    ],
    ids=repr,
)
def test_tool_arguments_of_the_wrong_type_are_a_400_naming_the_argument(alice_client, unchanged, url, arguments, message):
    with unchanged():
        response = alice_client.post(url, {"arguments": arguments}, format="json")
    assert response.status_code == 400
    assert response.json() == {"successful": False, "result": None, "errorMessage": message}


@pytest.mark.parametrize(
    "url, body, field",
    [
        (SESSIONS, {"title": 5}, "title"),
        (SESSIONS, {"title": 1.5}, "title"),
        (SESSIONS, {"title": True}, "title"),
        (SESSIONS, {"title": ["x"]}, "title"),
        (SESSIONS, {"mode": 5}, "mode"),
        (SESSIONS, {"mode": {"key": "general"}}, "mode"),
        (LIST_MODES, {"conversationId": 5}, "conversationId"),
        (LIST_MODES, {"conversationId": ["c"]}, "conversationId"),
        (LIST_MODES, {"sessionId": 5}, "sessionId"),
        (LIST_MODES, {"sessionId": {"id": "x"}}, "sessionId"),
    ],
    ids=repr,
)
def test_envelope_fields_of_the_wrong_type_are_a_400_naming_the_field(alice_client, unchanged, url, body, field):
    # A number is not text: it must not be turned into "5" and stored or passed on.
    with unchanged():
        response = alice_client.post(url, body, format="json")
    assert response.status_code == 400, response.content
    if "/invoke/" in url:
        assert response.json()["errorMessage"].startswith(f"{field}: ")
    else:
        assert list(response.json()) == [field]


@pytest.mark.parametrize(
    "url, parameter",
    [
        ("/api/modes/?includeExamples=maybe", "includeExamples"),
        ("/api/modes/?includeExamples=", "includeExamples"),
        ("/api/sessions/?pageSize=many", "pageSize"),
        ("/api/sessions/?pageSize=", "pageSize"),
        ("/api/sessions/?page=", "page"),
        ("/api/sessions/?page=%F0%9F%99%82", "page"),
        ("/api/sessions/?pageSize=%D9%A3", "pageSize"),  # an Arabic-Indic digit three: a digit, but not ASCII
        ("/api/sessions/?pageSize=0", "pageSize"),
        ("/api/modes/?includeExamples=%E2%9C%93", "includeExamples"),
    ],
)
def test_query_parameters_that_are_not_what_the_schema_says_are_a_400_naming_them(alice_client, url, parameter):
    # The schema says boolean and integer; a value that is none (not even empty) must not be silently ignored.
    response = alice_client.get(url)
    assert response.status_code == 400, response.content
    assert list(response.json()) == [parameter]


# --- Unknown fields ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url, body, unknown, accepted",
    [
        (HELLO, {"argumets": {"name": "Ada"}}, ["argumets"], "arguments, sessionId, conversationId"),
        (
            LIST_MODES,
            {"arguments": {}, "session_id": "x", "user": 1},
            ["session_id", "user"],
            "arguments, sessionId, conversationId",
        ),
        (SESSIONS, {"titel": "x"}, ["titel"], "mode, title"),
        (SESSIONS, {"title": "x", "owner": 2, "org": "globex"}, ["org", "owner"], "mode, title"),
    ],
    ids=["invoke-typo", "invoke-two", "session-typo", "session-owner"],
)
def test_unknown_body_fields_are_a_400_naming_each_of_them(alice_client, unchanged, url, body, unknown, accepted):
    with unchanged():
        response = alice_client.post(url, body, format="json")
    assert response.status_code == 400
    assert response.json() == refusal_at(url, {name: [f"Unknown field; accepted fields are {accepted}."] for name in unknown})


@pytest.mark.parametrize(
    "url, arguments, message",
    [
        (HELLO, {"name": "Ada", "nme": "x"}, "HelloWorldTool does not accept 'nme'; its arguments are name."),
        (
            LIST_MODES,
            {"filters": "x", "limit": 3},
            "ListModesTool does not accept 'filters', 'limit'; its arguments are filter, includeExamples.",
        ),
    ],
)
def test_unknown_tool_arguments_are_a_400_naming_them(alice_client, unchanged, url, arguments, message):
    with unchanged():
        response = alice_client.post(url, {"arguments": arguments}, format="json")
    assert response.status_code == 400
    assert response.json()["errorMessage"] == message


def test_an_unknown_change_mode_argument_is_refused_and_the_mode_stays(alice_client, alice_session, unchanged):
    with unchanged():
        response = alice_client.post(CHANGE_MODE, change_mode_body(alice_session, force=True), format="json")
    assert response.status_code == 400
    assert response.json()["errorMessage"] == (
        "ModeChangeTool does not accept 'force'; its arguments are branch, mode, reason."
    )


# --- Over-long strings ------------------------------------------------------------------------------------


def test_a_reason_over_1000_characters_is_refused_and_one_of_1000_is_recorded(alice_client, alice_session, unchanged):
    with unchanged():
        response = alice_client.post(CHANGE_MODE, change_mode_body(alice_session, reason="r" * 1001), format="json")
    assert response.status_code == 400
    assert response.json()["errorMessage"] == "ModeChangeTool accepts a 'reason' of at most 1000 characters."

    response = alice_client.post(CHANGE_MODE, change_mode_body(alice_session, reason="🙂" * 1000), format="json")
    assert response.status_code == 200
    assert ModeChange.objects.get(session=alice_session).reason == "🙂" * 1000


@pytest.mark.parametrize(
    "url, body, expected",
    [
        (
            LIST_MODES,
            {"arguments": {"filter": "f" * 201}},
            tool_error("ListModesTool expects 'filter' to be a string of at most 200 characters."),
        ),
        (
            HELLO,
            {"arguments": {"name": "n" * 201}},
            tool_error("HelloWorldTool accepts a 'name' of at most 200 characters."),
        ),
        (SESSIONS, {"title": "t" * 201}, {"title": ["Ensure this field has no more than 200 characters."]}),
        (SESSIONS, {"mode": "m" * 65}, {"mode": ["Ensure this field has no more than 64 characters."]}),
        (LIST_MODES, {"conversationId": "c" * 201}, tool_error("conversationId: Ensure this field has no more than 200 characters.")),
        (LIST_MODES, {"sessionId": "s" * 65}, tool_error("sessionId: Ensure this field has no more than 64 characters.")),
    ],
    ids=["tool-filter", "hello-name", "title", "session-mode", "conversation-id", "session-id"],
)
def test_over_long_strings_in_bodies_are_a_400_giving_the_limit(alice_client, unchanged, url, body, expected):
    with unchanged():
        response = alice_client.post(url, body, format="json")
    assert response.status_code == 400
    assert response.json() == expected


@pytest.mark.parametrize(
    "url, parameter, limit",
    [("/api/modes/", "filter", 200), ("/api/system-prompt/", "currentMode", 64)],
)
def test_over_long_query_strings_are_a_400_giving_the_limit(alice_client, url, parameter, limit):
    response = alice_client.get(url, {parameter: "q" * (limit + 1)})
    assert response.status_code == 400
    assert response.json() == {parameter: [f"Ensure this field has no more than {limit} characters."]}
    assert alice_client.get(url, {parameter: "q" * limit}).status_code == 200


@pytest.mark.parametrize("padding", [" ", "\u3000", "\n"], ids=["space", "ideographic-space", "newline"])
def test_a_string_over_its_limit_is_refused_whatever_its_last_character(alice_client, unchanged, padding):
    # The schema says maxLength 200 for what is sent; trimming first lets 201 characters through.
    with unchanged():
        response = alice_client.post(SESSIONS, {"title": "t" * 200 + padding}, format="json")
    assert response.status_code == 400, response.content
    response = alice_client.get("/api/modes/", {"filter": "f" * 200 + padding})
    assert response.status_code == 400, response.content


def test_limits_count_characters_not_bytes(alice_client):
    title = "🙂" * 200  # 800 bytes in UTF-8
    response = alice_client.post(SESSIONS, {"title": title}, format="json")
    assert response.status_code == 201
    assert AgentSession.objects.get(pk=response.json()["id"]).title == title


# --- Oversized bodies -------------------------------------------------------------------------------------


@pytest.mark.parametrize("url", [HELLO, CHANGE_MODE, SESSIONS, TOKEN])
def test_a_body_over_64_kib_is_a_413_giving_the_size_and_the_limit(alice_client, unchanged, url, settings):
    assert settings.API_MAX_BODY_BYTES == 64 * 1024
    body = json.dumps({"title": "x" * (64 * 1024)}).encode()
    with unchanged():
        response = send(alice_client, url, body)
    assert response.status_code == 413
    assert response.json() == refusal_at(url, {"detail": f"The request body is {len(body)} bytes; the limit is 65536."})


def test_a_body_of_exactly_the_limit_is_read(alice_client):
    payload = b'{"title": "x"}'
    body = payload + b" " * (64 * 1024 - len(payload))  # JSON may end in white space
    assert len(body) == 64 * 1024
    assert send(alice_client, SESSIONS, body).status_code == 201


def test_the_body_limit_comes_from_the_settings(alice_client, unchanged, settings):
    settings.API_MAX_BODY_BYTES = 100
    body = json.dumps({"title": "x" * 100}).encode()
    with unchanged():
        response = send(alice_client, SESSIONS, body)
    assert response.status_code == 413
    assert response.json() == {"detail": f"The request body is {len(body)} bytes; the limit is 100."}


@pytest.mark.parametrize("length", ["lots", "-5", "1e3", "٣"])
def test_a_content_length_that_is_not_a_number_is_a_400(alice_client, unchanged, length):
    with unchanged():
        response = alice_client.generic(
            "POST", SESSIONS, b'{"title": "x"}', content_type="application/json", CONTENT_LENGTH=length
        )
    assert response.status_code == 400
    assert response.json() == {"detail": f"Content-Length must be a number of bytes, not {length!r}."}


def test_a_content_length_of_thousands_of_digits_is_a_413_not_a_crash(alice_client, unchanged):
    with unchanged():
        response = alice_client.generic(
            "POST", SESSIONS, b'{"title": "x"}', content_type="application/json", CONTENT_LENGTH="9" * 5000
        )
    assert response.status_code == 413
    assert response.json() == {"detail": f"The request body is {'9' * 20}... (5000 digits) bytes; the limit is 65536."}


def test_a_disallowed_host_under_the_api_is_a_json_400_and_logged(alice_client, caplog):
    with caplog.at_level(logging.ERROR, logger="django.security"):
        response = alice_client.get("/api/modes/", HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert response.json() == {"detail": "The request was refused as malformed."}
    assert any(record.name == "django.security.DisallowedHost" for record in caplog.records)


def test_too_many_fields_is_logged_as_django_logs_it(alice_client, caplog):
    with caplog.at_level(logging.ERROR, logger="django.security"):
        alice_client.get("/api/modes/?" + "&".join(f"f{number}=1" for number in range(1001)))
    assert [record.name for record in caplog.records if record.name.startswith("django.security")] == [
        "django.security.TooManyFieldsSent"
    ]


@pytest.mark.parametrize("url", [SESSIONS, HELLO, TOKEN])
def test_a_chunked_body_is_refused_with_411_rather_than_read_as_empty(alice_client, unchanged, url):
    # Django reads a body only up to its Content-Length: without one, this POST would create a session in the
    # default mode from a body that asked for something else.
    with unchanged():
        response = alice_client.generic(
            "POST", url, b'{"title": 5, "mode": "nope"}', content_type="application/json",
            HTTP_TRANSFER_ENCODING="chunked", CONTENT_LENGTH="",
        )
    assert response.status_code == 411
    assert response.json() == refusal_at(
        url, {"detail": "Send the request body with a Content-Length header; chunked bodies are not accepted."}
    )


# --- Django's own request limits -------------------------------------------------------------------------

TOO_MANY_FIELDS = {"detail": "The request has too many query or form fields; at most 1000."}


@pytest.mark.parametrize("url", ["/api/modes/", "/api/sessions/", "/api/schema/"])
def test_more_query_fields_than_django_reads_is_a_400(alice_client, url):
    response = alice_client.get(url + "?" + "&".join(f"f{number}=1" for number in range(1001)))
    assert response.status_code == 400
    assert yaml.safe_load(response.content) == TOO_MANY_FIELDS  # the schema endpoint answers in YAML, its format


def test_more_form_fields_than_django_reads_is_a_400_and_issues_no_token(anon_client, alice, unchanged):
    fields = "&".join([f"f{number}=1" for number in range(1001)] + ["username=alice", "password=alice-password-123"])
    with unchanged():
        response = send(anon_client, TOKEN, fields, content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400
    assert response.json() == TOO_MANY_FIELDS


PAGED_BY_CURSOR = {"page": ["This list is paged by cursor: follow the answer's next and previous links."]}


@pytest.mark.parametrize("page", ["1", "2", "9" * 5000, "last"])
def test_a_page_number_is_a_400_that_says_to_follow_the_links(alice_client, alice_session, page):
    for url in ("/api/sessions/", f"/api/sessions/{alice_session.pk}/mode-changes/"):
        response = alice_client.get(url, {"page": page})
        assert response.status_code == 400
        assert response.json() == PAGED_BY_CURSOR


@pytest.mark.parametrize("cursor", ["", "bm90IGEgY3Vyc29y", "%%%", "9" * 5000])
def test_a_cursor_that_the_list_did_not_give_is_a_404_saying_what_to_use(alice_client, alice_session, cursor):
    response = alice_client.get("/api/sessions/", {"cursor": cursor})
    assert response.status_code == 404
    assert response.json() == {"detail": "No page has this cursor: use a next or previous link as the list gave it."}


# Cursors made by hand: base64 of a position that is no value of the list's ordering field (a created_at, an id,
# a revision number), or one that no column could hold: a time whose instant in UTC is outside years 1 to 9999
# (SQLite's adapter converts it to UTC, and overflowed: a 500).
FORGED_POSITIONS = {
    "/api/sessions/": [
        "p=1", "p=not-a-date", "p=2026-13-45", "p=9999-12-31+23%3A59%3A59-14%3A00", "p=0001-01-01+00%3A00%3A00%2B14%3A00",
    ],
    "/api/sessions/{session}/mode-changes/": ["p=not-a-date", "p=1.5", "p=" + "9" * 30],
    "/api/catalog/revisions/": ["p=not-a-date", "r=1&p=x", "p=" + "9" * 30],
}


@pytest.mark.parametrize(
    "url, position", [(url, position) for url, positions in FORGED_POSITIONS.items() for position in positions]
)
def test_a_forged_cursor_position_is_a_404_not_a_500(alice_client, admin_client, alice_session, url, position):
    client = admin_client if "revisions" in url else alice_client
    cursor = base64.b64encode(position.encode()).decode()
    response = client.get(url.format(session=alice_session.pk), {"cursor": cursor})
    assert response.status_code == 404
    assert response.json() == {"detail": "No page has this cursor: use a next or previous link as the list gave it."}


def test_a_page_size_with_thousands_of_digits_is_a_400(alice_client):
    response = alice_client.get(f"/api/sessions/?pageSize={'9' * 5000}")
    assert response.status_code == 400
    assert response.json() == {"pageSize": ["Must be a whole number from 1 to 200."]}


def test_a_number_with_too_many_digits_in_the_body_is_a_plain_400(alice_client, unchanged):
    with unchanged():
        response = send(alice_client, SESSIONS, '{"title": ' + "9" * 5000 + "}")
    assert response.status_code == 400
    assert response.json() == {"detail": "JSON parse error - a number in the body has too many digits."}


def test_a_nul_in_a_cookie_is_a_400_not_a_database_error(anon_client):
    # Django decodes the quoted octal escape, so this plain-ASCII header carries a NUL into the session lookup.
    response = anon_client.get("/api/modes/", HTTP_COOKIE='sessionid="abcdefgh\\000ijk"')
    assert response.status_code == 400
    assert response.json() == {"detail": "NUL characters are not allowed in URLs, cookies or form data."}


# --- Deep nesting -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("url", [HELLO, SESSIONS, TOKEN])
@pytest.mark.parametrize("depth", [100, 20000])  # in the body's object: 101 levels, one past the limit, or thousands
def test_deeply_nested_json_is_a_400_not_a_crash(alice_client, unchanged, url, depth):
    body = '{"arguments": ' + "[" * depth + "]" * depth + "}"
    with unchanged():
        response = send(alice_client, url, body)
    assert response.status_code == 400
    assert response.json() == refusal_at(url, {"detail": "JSON parse error - the body is nested too deeply."})


def nested_arguments(depth: int) -> str:
    return '{"arguments": {"name": "x", "deep": ' + "[" * depth + "]" * depth + "}}"


def test_the_deepest_body_the_parser_takes_is_answered_never_a_server_error(alice_client):
    # Nesting just short of what the parser refuses used to pass it and then overflow Python's recursion limit in the
    # serializer that re-encodes the arguments: a 500. Found by bisection, so it holds whatever the stack's depth.
    # The same call path for every depth: in this process, the test's own frames count against the limit too.
    answers = {}
    shallow, deep = 1, 5000
    while deep - shallow > 1:
        middle = (shallow + deep) // 2
        answers[middle] = send(alice_client, HELLO, nested_arguments(middle))
        taken = "nested too deeply" not in answers[middle].json()["errorMessage"]
        shallow, deep = (middle, deep) if taken else (shallow, middle)

    response = answers[shallow]
    assert response.status_code == 400, response.content
    assert response.json() == tool_error("HelloWorldTool does not accept 'deep'; its arguments are name.")


@pytest.mark.parametrize("url", [HELLO, LIST_MODES, CHANGE_MODE])
@pytest.mark.parametrize(
    "nested",
    ["[" * 5000 + "]" * 5000, '{"a":' * 5000 + "1" + "}" * 5000],
    ids=["arrays", "objects"],
)
def test_deeply_nested_arguments_inside_a_string_are_a_400_not_a_crash(alice_client, alice_session, unchanged, url, nested):
    with unchanged():
        response = alice_client.post(url, {"arguments": nested, "sessionId": str(alice_session.pk)}, format="json")
    assert response.status_code == 400, response.content
    assert response.json() == tool_error(INVALID_ARGUMENTS)


# --- Session ids ------------------------------------------------------------------------------------------

GARBAGE_IDS = ["garbage", "123", "00000000-0000-0000-0000", "a11ce000-0000-4000-8000-00000000000g", "' OR 1=1 --", ODD]


@pytest.mark.parametrize("session_id", GARBAGE_IDS, ids=repr)
def test_a_garbage_session_id_in_the_invoke_body_is_a_400_saying_ids_are_uuids(alice_client, unchanged, session_id):
    body = {"arguments": {"mode": "ddr_authoring", "branch": True, "reason": "x"}, "sessionId": session_id}
    with unchanged():
        response = alice_client.post(CHANGE_MODE, body, format="json")
    assert response.status_code == 400
    assert response.json() == tool_error(f"sessionId: {session_id!r} is not a session id; session ids are UUIDs.")


@pytest.mark.parametrize("session_id", GARBAGE_IDS, ids=repr)
@pytest.mark.parametrize("suffix", ["", "mode-changes/", "context/"])
def test_a_garbage_session_id_in_the_url_is_a_404(alice_client, session_id, suffix):
    response = alice_client.get(f"/api/sessions/{quote(session_id, safe='')}/{suffix}")
    assert response.status_code == 404
    assert response.json() == {"detail": f"No session {session_id} was found for you."}


# --- NUL characters and invalid Unicode, in every string of every endpoint ------------------------------

# Each slot puts one text value into one string of one endpoint: (name, method, url, body or None).
# Bodies are JSON text, so that lone surrogates can be written as the escapes a client would send.


def _body_slots(sid):
    return {
        "invoke.sessionId": (HELLO, lambda t: {"arguments": {"name": "Ada"}, "sessionId": t}),
        "invoke.conversationId": (HELLO, lambda t: {"arguments": {"name": "Ada"}, "conversationId": t}),
        "invoke.arguments (string)": (HELLO, lambda t: {"arguments": t}),
        "invoke.<field name>": (HELLO, lambda t: {"arguments": {"name": "Ada"}, t: "x"}),
        "hello.name": (HELLO, lambda t: {"arguments": {"name": t}}),
        "hello.<argument name>": (HELLO, lambda t: {"arguments": {"name": "Ada", t: "x"}}),
        "list_modes.filter": (LIST_MODES, lambda t: {"arguments": {"filter": t}}),
        "change_mode.mode": (CHANGE_MODE, lambda t: {"arguments": {"mode": t, "branch": True, "reason": "x"}, "sessionId": sid}),
        "change_mode.reason": (
            CHANGE_MODE,
            lambda t: {"arguments": {"mode": "ddr_authoring", "branch": True, "reason": t}, "sessionId": sid},
        ),
        "sessions.mode": (SESSIONS, lambda t: {"mode": t}),
        "sessions.title": (SESSIONS, lambda t: {"title": t}),
        "sessions.<field name>": (SESSIONS, lambda t: {t: "x"}),
        "token.username": (TOKEN, lambda t: {"username": t, "password": "alice-password-123"}),
        "token.password": (TOKEN, lambda t: {"username": "alice", "password": t}),
    }


BODY_SLOT_NAMES = list(_body_slots("session-id"))


@pytest.mark.parametrize("slot", BODY_SLOT_NAMES)
@pytest.mark.parametrize(
    "escape, expected",
    [("\\u0000", NUL_IN_BODY), ("\\ud800", SURROGATE_IN_BODY), ("\\udfff", SURROGATE_IN_BODY)],
    ids=["nul", "lone-high-surrogate", "lone-low-surrogate"],
)
def test_nul_and_lone_surrogates_in_any_body_string_are_a_400_saying_so(
    alice_client, alice_session, unchanged, slot, escape, expected
):
    url, build = _body_slots(str(alice_session.pk))[slot]
    marker = "MARKER"
    text = json.dumps(build(f"a{marker}b")).replace(marker, escape)  # "\u0000" as the client writes it
    with unchanged():
        response = send(alice_client, url, text)
    assert response.status_code == 400
    assert response.json() == refusal_at(url, expected)


@pytest.mark.parametrize(
    "url, arguments, label",
    [
        (HELLO, '{"name": "a\\u0000b"}', "HelloWorldTool"),
        (LIST_MODES, '{"filter": "\\ud800"}', "ListModesTool"),
    ],
)
def test_nul_and_lone_surrogates_inside_arguments_given_as_a_string_are_refused_by_the_tool(
    alice_client, unchanged, url, arguments, label
):
    with unchanged():
        response = alice_client.post(url, {"arguments": arguments}, format="json")
    assert response.status_code == 400
    problem = "NUL characters" if "0000" in arguments else "invalid Unicode (a lone surrogate)"
    assert response.json()["errorMessage"] == f"{label} arguments must not contain {problem}."


def test_nul_inside_change_mode_arguments_given_as_a_string_changes_nothing(alice_client, alice_session, unchanged):
    arguments = '{"mode": "ddr_authoring", "branch": true, "reason": "a\\u0000b"}'
    with unchanged():
        response = alice_client.post(CHANGE_MODE, {"arguments": arguments, "sessionId": str(alice_session.pk)}, format="json")
    assert response.status_code == 400
    assert response.json()["errorMessage"] == "ModeChangeTool arguments must not contain NUL characters."


URL_SLOTS = [
    "/api/modes/?filter={}",
    "/api/modes/?includeExamples={}",
    "/api/system-prompt/?currentMode={}",
    "/api/sessions/?page={}",
    "/api/sessions/?pageSize={}",
    "/api/sessions/{sid}/mode-changes/?page={}",
    "/api/modes/{}/",
    "/api/modes/{}/tools/",
    "/api/sessions/{}/",
    "/api/sessions/{}/mode-changes/",
    "/api/sessions/{}/context/",
    "/api/tools/{}/invoke/",
    "/api/tools/?unexpected={}",
]


def _url(template, value, session):
    return template.replace("{sid}", str(session.pk)).replace("{}", value)


@pytest.mark.parametrize("template", URL_SLOTS)
def test_nul_anywhere_in_an_api_url_is_a_json_400_saying_so(alice_client, alice_session, unchanged, template):
    url = _url(template, "a%00b", alice_session)
    with unchanged():
        response = alice_client.post(url, {}, format="json") if "invoke" in url else alice_client.get(url)
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json", "an API client expects JSON, not an HTML page"
    assert response.json() == refusal_at(url, {"detail": "NUL characters are not allowed in URLs, cookies or form data."})


NOT_UTF8 = "%ED%A0%80%FF"  # a surrogate's bytes, and a byte UTF-8 never uses
# A query parameter reads bytes that are not UTF-8 as U+FFFD: a filter then matches nothing, an unknown current
# mode means the default mode, and a flag or a number is refused. A path keeps them percent-encoded, and its 404
# names them so.
NOT_UTF8_ANSWERS = {
    "/api/modes/?filter={}": (200, {"modes": [], "catalogRevision": 1}),
    "/api/modes/?includeExamples={}": (
        400,
        {"includeExamples": ["Must be true or false; leave the parameter out for false."]},
    ),
    "/api/system-prompt/?currentMode={}": (200, seed_prompt("general")),
    "/api/sessions/?page={}": (400, PAGED_BY_CURSOR),
    "/api/sessions/?pageSize={}": (400, {"pageSize": ["Must be a whole number from 1 to 200."]}),
    "/api/sessions/{sid}/mode-changes/?page={}": (400, PAGED_BY_CURSOR),
    "/api/modes/{}/": (
        404,
        {"detail": f"Unknown mode key '{NOT_UTF8}'. Valid keys: general, ddr_authoring, workflow_authoring."},
    ),
    "/api/modes/{}/tools/": (
        404,
        {"detail": f"Unknown mode key '{NOT_UTF8}'. Valid keys: general, ddr_authoring, workflow_authoring."},
    ),
    "/api/sessions/{}/": (404, {"detail": f"No session {NOT_UTF8} was found for you."}),
    "/api/sessions/{}/mode-changes/": (404, {"detail": f"No session {NOT_UTF8} was found for you."}),
    "/api/sessions/{}/context/": (404, {"detail": f"No session {NOT_UTF8} was found for you."}),
    "/api/tools/{}/invoke/": (404, tool_error(f"No tool is registered or declared under the name '{NOT_UTF8}'.")),
    # An unknown parameter is ignored: the usual listing.
    "/api/tools/?unexpected={}": (
        200,
        {"tools": [CHANGE_MODE_SCHEMA, HELLO_WORLD_SCHEMA, LIST_MODES_SCHEMA], "clientTools": []},
    ),
}


@pytest.mark.parametrize("template", URL_SLOTS)
def test_invalid_utf8_anywhere_in_an_api_url_is_answered_as_its_slot_reads_it(
    alice_client, alice_session, unchanged, template
):
    url = _url(template, NOT_UTF8, alice_session)
    with unchanged():
        response = alice_client.post(url, {}, format="json") if "invoke" in url else alice_client.get(url)
    status, body = NOT_UTF8_ANSWERS[template]
    assert response.status_code == status
    if isinstance(body, str):
        assert (response["Content-Type"], response.content.decode()) == ("text/plain; charset=utf-8", body)
    else:
        assert (response["Content-Type"], response.json()) == ("application/json", body)


def test_nul_in_a_form_encoded_token_request_is_a_json_400(anon_client, alice):
    response = send(anon_client, TOKEN, b"username=alice%00&password=x", content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert "NUL" in response.json()["detail"]


# --- Odd but valid Unicode: accepted, and returned exactly ----------------------------------------------


def test_odd_unicode_in_a_session_title_is_stored_and_returned_exactly(alice_client):
    response = alice_client.post(SESSIONS, {"title": ODD}, format="json")
    assert response.status_code == 201
    assert response.json()["title"] == ODD
    session_id = response.json()["id"]
    assert AgentSession.objects.get(pk=session_id).title == ODD
    assert alice_client.get(f"/api/sessions/{session_id}/").json()["title"] == ODD
    assert [item["title"] for item in alice_client.get(SESSIONS).json()["results"]] == [ODD]


def test_odd_unicode_in_a_reason_is_recorded_and_returned_exactly(alice_client, alice_session):
    response = alice_client.post(CHANGE_MODE, change_mode_body(alice_session, reason=ODD), format="json")
    assert response.status_code == 200
    assert json.loads(response.json()["result"])["reason"] == ODD
    assert ModeChange.objects.get(session=alice_session).reason == ODD
    changes = alice_client.get(f"/api/sessions/{alice_session.pk}/mode-changes/").json()["results"]
    assert [change["reason"] for change in changes] == [ODD]


def test_odd_unicode_in_a_name_and_a_conversation_id_comes_back_exactly(alice_client):
    response = alice_client.post(HELLO, {"arguments": {"name": ODD}, "conversationId": ODD}, format="json")
    assert response.status_code == 200
    result = json.loads(response.json()["result"])
    assert result == {"message": f"Hello, {ODD}! Welcome to Aptix.", "conversationId": ODD, "sessionId": None}


def test_a_conversation_id_is_passed_to_the_tool_as_it_is(alice_client):
    # The schema promises "Passed to the tool as it is."
    for conversation_id in ["  padded  ", "\u3000", "tab\t"]:
        response = alice_client.post(HELLO, {"arguments": {"name": "Ada"}, "conversationId": conversation_id}, format="json")
        assert response.status_code == 200, response.content
        assert json.loads(response.json()["result"])["conversationId"] == conversation_id


@pytest.mark.parametrize("url", ["/api/modes/?filter={}", "/api/system-prompt/?currentMode={}"])
def test_odd_unicode_in_query_strings_is_answered_normally(alice_client, url):
    response = alice_client.get(url.format(quote(ODD)))
    assert response.status_code == 200
    if "filter" in url:
        assert response.json() == {"modes": [], "catalogRevision": 1}
    else:
        assert response.content.decode().startswith("Current Mode: general\n")


def test_odd_unicode_in_an_argument_filter_is_answered_normally(alice_client):
    response = alice_client.post(LIST_MODES, {"arguments": {"filter": ODD}}, format="json")
    assert response.status_code == 200
    assert json.loads(response.json()["result"]) == {"modes": [], "catalogRevision": 1}


@pytest.mark.parametrize(
    "request_kind, expected",
    [
        ("mode-url", "Unknown mode key {!r}. Valid keys: general, ddr_authoring, workflow_authoring."),
        ("session-url", "No session {} was found for you."),
        ("tool-url", "No tool is registered or declared under the name {!r}."),
    ],
)
def test_odd_unicode_in_a_url_is_named_exactly_in_the_404(alice_client, request_kind, expected):
    encoded = quote(ODD, safe="")
    if request_kind == "mode-url":
        response = alice_client.get(f"/api/modes/{encoded}/")
    elif request_kind == "session-url":
        response = alice_client.get(f"/api/sessions/{encoded}/")
    else:
        response = alice_client.post(f"/api/tools/{encoded}/invoke/", {}, format="json")
    assert response.status_code == 404
    assert response.json() == refusal_at(response.request["PATH_INFO"], {"detail": expected.format(ODD)})


def test_odd_unicode_as_a_mode_key_is_a_400_that_names_it(alice_client, alice_session, unchanged):
    with unchanged():
        created = alice_client.post(SESSIONS, {"mode": ODD}, format="json")
        changed = alice_client.post(CHANGE_MODE, change_mode_body(alice_session, mode=ODD), format="json")
    valid = "Valid keys: general, ddr_authoring, workflow_authoring."
    assert created.status_code == 400
    assert created.json() == {"mode": [f"Unknown mode key {ODD!r}. {valid}"]}
    assert changed.status_code == 400
    assert changed.json()["errorMessage"] == f"Unknown mode key {ODD!r}. {valid}"


def test_odd_unicode_as_an_unknown_field_name_is_named_exactly(alice_client, unchanged):
    with unchanged():
        response = alice_client.post(SESSIONS, {ODD: 1}, format="json")
    assert response.status_code == 400
    assert response.json() == {ODD: ["Unknown field; accepted fields are mode, title."]}


@pytest.fixture
def fast_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.mark.parametrize("content_type", ["json", "form"])
def test_a_user_with_an_odd_unicode_name_and_password_can_get_a_token(anon_client, fast_passwords, content_type):
    get_user_model().objects.create_user(username="zoë🙂", password=ODD)
    credentials = {"username": "zoë🙂", "password": ODD}
    if content_type == "json":
        response = anon_client.post(TOKEN, credentials, format="json")
    else:
        response = send(
            anon_client,
            TOKEN,
            f"username={quote(credentials['username'])}&password={quote(ODD)}",
            content_type="application/x-www-form-urlencoded",
        )
    assert response.status_code == 200, response.content
    assert list(response.json()) == ["token"]
    assert anon_client.get("/api/modes/", HTTP_AUTHORIZATION=f"Token {response.json()['token']}").status_code == 200


def test_wrong_credentials_are_a_400_that_gives_nothing_away(anon_client, alice, fast_passwords, unchanged):
    with unchanged():
        for credentials in ({"username": "alice", "password": ODD}, {"username": ODD, "password": "x"}):
            response = anon_client.post(TOKEN, credentials, format="json")
            assert response.status_code == 400
            assert response.json() == {"non_field_errors": ["Unable to log in with provided credentials."]}


# --- Broken Authorization headers -------------------------------------------------------------------------


def _broken_headers(token):
    return {
        "keyword-only": ("Token", "Invalid token header. No credentials provided."),
        "keyword-and-space": ("Token ", "Invalid token header. No credentials provided."),
        "two-parts": ("Token a b", "Invalid token header. Token string should not contain spaces."),
        "nul-key": ("Token " + "\x00" * 40, "Invalid token."),
        "nul-in-real-key": ("Token " + token[:20] + "\x00" + token[21:], "Invalid token."),
        "non-ascii": ("Token " + "é" * 40, "Invalid token header. Token string should not contain invalid characters."),
        "utf8-bytes": ("Token " + ("é" * 20).encode().decode("latin-1"), "Invalid token."),
        "basic": ("Basic YWxpY2U6YWxpY2UtcGFzc3dvcmQtMTIz", "Authentication credentials were not provided."),
        "bearer": ("Bearer " + token, "Authentication credentials were not provided."),
        "39-characters": ("Token " + token[:39], "Invalid token."),
        "41-characters": ("Token " + token + "0", "Invalid token."),
        "other-case": ("Token " + token.upper() if token.upper() != token else "Token " + token.lower(), "Invalid token."),
    }


BROKEN_HEADER_NAMES = list(_broken_headers("0" * 40))


@pytest.mark.parametrize("header", BROKEN_HEADER_NAMES)
@pytest.mark.parametrize(
    "method, url, body",
    [
        ("get", "/api/sessions/{sid}/", None),
        ("post", CHANGE_MODE, "change"),
    ],
    ids=["session", "change-mode"],
)
def test_a_broken_authorization_header_is_a_401_even_with_a_valid_request(
    alice, alice_session, unchanged, header, method, url, body
):
    value, message = _broken_headers(alice.api_key)[header]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=value)
    url = url.replace("{sid}", str(alice_session.pk))
    with unchanged():
        if method == "get":
            response = client.get(url)
        else:
            payload = change_mode_body(alice_session) if body == "change" else body
            response = client.post(url, payload, format="json")
    assert response.status_code == 401
    assert response.json() == refusal_at(url, {"detail": message})
    assert response["WWW-Authenticate"] == "Token"


# --- The token endpoint is as strict as the others -----------------------------------------------------


@pytest.mark.parametrize(
    "body, field",
    [
        ({"username": "alice", "password": "alice-password-123", "extra": 1}, "extra"),
        ({"username": 5, "password": "alice-password-123"}, "username"),
        ({"username": "alice", "password": ["alice-password-123"]}, "password"),
        ({"username": "a" * 151, "password": "alice-password-123"}, "username"),
    ],
    ids=["unknown-field", "number-username", "list-password", "long-username"],
)
def test_the_token_endpoint_refuses_what_it_does_not_read(anon_client, alice, body, field):
    ApiToken.objects.filter(user=alice).delete()
    response = anon_client.post(TOKEN, body, format="json")
    assert response.status_code == 400
    assert list(response.json()) == [field]
    assert not ApiToken.objects.filter(user=alice).exists()


# --- Accept headers --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url, headers, content_type",
    [
        ("/api/system-prompt/", {"HTTP_ACCEPT": "text/plain"}, "text/plain; charset=utf-8"),
        ("/api/modes/", {"HTTP_ACCEPT": "application/xml"}, "application/json"),
        ("/api/modes/?format=xml", {}, "application/json"),
        ("/api/sessions/", {"HTTP_ACCEPT": "text/html"}, "application/json"),
    ],
)
def test_an_accept_header_the_endpoint_cannot_meet_gets_its_one_format_not_406(alice_client, url, headers, content_type):
    response = alice_client.get(url, **headers)
    assert response.status_code == 200
    assert response["Content-Type"] == content_type


@pytest.mark.parametrize("url", BODY_ENDPOINTS)
@pytest.mark.parametrize(
    "body, key",
    [
        (b'{"title": "a", "title": "b"}', "title"),
        (b'{"arguments": {"name": "Ada", "name": "Eve"}}', "name"),
        (b'{"mode": "general", "x": [{"k": 1, "k": 2}]}', "k"),
    ],
    ids=["top-level", "nested", "in-a-list"],
)
def test_a_key_given_twice_in_one_object_is_a_400_naming_it(alice_client, unchanged, url, body, key):
    # json would keep the last value silently; a client that sends two means one of them is a mistake.
    with unchanged():
        response = send(alice_client, url, body)
    assert response.status_code == 400
    assert response.json() == refusal_at(url, {"detail": f"JSON parse error - the key {key!r} appears twice in one object"})


def test_a_key_given_twice_in_arguments_sent_as_a_string_is_refused_by_the_tool(alice_client, unchanged):
    with unchanged():
        response = alice_client.post(HELLO, {"arguments": '{"name": "Ada", "name": "Eve"}'}, format="json")
    assert response.status_code == 400
    assert response.json() == tool_error(
        "HelloWorldTool arguments must not give a key twice: the key 'name' appears twice in one object."
    )


@pytest.mark.parametrize(
    "url, parameter",
    [
        ("/api/catalog/transitions/?days=", "days"),
        ("/api/catalog/transitions/?revision=", "revision"),
        ("/api/catalog/transitions/?revision=2147483648", "revision"),  # past the column's range
        ("/api/catalog/revisions/1/diff/?against=", "against"),
        ("/api/catalog/revisions/1/diff/?after=", "after"),
        ("/api/catalog/revisions/1/diff/?pageSize=", "pageSize"),
        ("/api/catalog/revisions/1/evals/latest/?scorer=", "scorer"),
    ],
)
def test_a_catalog_query_parameter_present_but_empty_is_a_400_not_its_default(admin_client, url, parameter):
    # DRF's rules for HTML forms took an empty value for a missing one, and answered as if it had been left out.
    response = admin_client.get(url)
    assert response.status_code == 400, response.content
    assert list(response.json()) == [parameter]


@pytest.mark.parametrize("value", ["+1", " 1", "1.0", "١", "0", "01x"])
def test_a_revision_in_a_query_is_written_as_in_a_url_or_it_is_a_400(admin_client, value):
    # One rule for a revision number (modes.catalog.revision_number): ASCII digits, from 1.
    response = admin_client.get("/api/catalog/transitions/", {"revision": value})
    assert response.status_code == 400, response.content
    assert response.json() == {"revision": ["Must be a catalog revision number (1, 2, 3, ...)."]}


@pytest.mark.parametrize("value", ["+5", " 5", "5.0", "٥", "0"])
@pytest.mark.parametrize(
    "url, parameter, most",
    [("/api/sessions/", "pageSize", 200), ("/api/catalog/revisions/1/diff/", "pageSize", 500),
     ("/api/catalog/transitions/", "days", 365)],
)
def test_a_whole_number_in_a_query_is_ascii_digits_by_one_rule_or_it_is_a_400(admin_client, url, parameter, most, value):
    response = admin_client.get(url, {parameter: value})
    assert response.status_code == 400, response.content
    assert response.json() == {parameter: [f"Must be a whole number from 1 to {most}."]}


@pytest.mark.parametrize("value", ["030", "0030", "0" * 5000 + "30"])
def test_a_whole_number_may_start_with_zeros(admin_client, value):
    response = admin_client.get("/api/catalog/transitions/", {"days": value})
    assert response.status_code == 200, response.content
    assert response.json()["days"] == 30
