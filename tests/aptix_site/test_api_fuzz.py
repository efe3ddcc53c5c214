"""
Schemathesis fuzzes every operation of the published OpenAPI schema, in-process, as an authenticated user.

All of Schemathesis' default checks stay on: no server errors; documented status codes, content types,
headers and response bodies; schema-valid requests accepted and schema-violating ones rejected;
authentication enforced; undocumented methods answered 405; and object-level authorization, with a second
user (bob) whose objects alice must never get. Only the generation is tuned: the number of examples, and
hooks that put the ids of real sessions, tools and modes into part of the cases so that the happy paths
are exercised too.

The schema is drf-spectacular's, built without touching the database. Requests go through Django's WSGI
handler in this process and this test's database transaction. Run with another seed or more examples:
FUZZ_SEED=123 FUZZ_MAX_EXAMPLES=200 make test-sqlite PYTEST_ARGS="tests/aptix_site/test_api_fuzz.py".
"""

import itertools
import json
import os
import sys
import uuid

import pytest
import schemathesis
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from knox.crypto import hash_token
from schemathesis.core.parameters import ParameterLocation
from schemathesis.wfc.escalation import EscalatingAuthProvider

from accounts.models import ApiToken, Membership, Organization
from modes.catalog import get_mode
from sessions_app.models import AgentSession
from sessions_app.services import set_session_mode
from modes.catalog import published_catalog
from ..expected import refusal_at
from ..modes.coding_agents.conftest import REPOSITORY

# Tokens and ids are fixed, so that the hooks below can draw them while the cases are generated.
ALICE_TOKEN = "a11ce" * 8
BOB_TOKEN = "b0b00" * 8
CAROL_TOKEN = "ca401" * 8  # staff, holding every permission of the catalog
ALICE_SESSIONS = {
    uuid.UUID("a11ce000-0000-4000-8000-000000000001"): "general",
    uuid.UUID("a11ce000-0000-4000-8000-000000000002"): "ddr_authoring",
    uuid.UUID("a11ce000-0000-4000-8000-000000000003"): "workflow_authoring",
}
BOB_SESSION = uuid.UUID("b0b00000-0000-4000-8000-000000000001")
MISSING_SESSION = "00000000-0000-4000-8000-000000000000"  # no session has this id
MODE_KEYS = ["general", "ddr_authoring", "workflow_authoring"]
TOOL_NAMES = ["agent_change_mode", "agent_hello_world", "agent_list_modes"]
MINIMUM_REQUESTS = 1000

# Requests sent by the test function (not counting the checks' own probes), per operation.
REQUESTS: dict[str, int] = {}
# Every request that reached the app (the checks' own probes included), by whose token it carried.
SENT_AS: dict[str, int] = {}



def published_schema() -> dict:
    """The document /api/schema/ serves, from drf-spectacular's generator; no database query."""
    document = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(OpenApiJsonRenderer().render(document, renderer_context={}))


class InProcessDjango:
    """Django's WSGI handler, with the test's database connection (and transaction) kept across requests.

    Django closes unusable connections when a request starts and ends; a connection inside the test's
    transaction looks unusable (autocommit is off), so, as Django's test client does, that is switched off
    while a request runs.
    """

    def __init__(self):
        self.handler = get_wsgi_application()

    def __call__(self, environ, start_response):
        senders = {f"Token {ALICE_TOKEN}": "alice", f"Token {BOB_TOKEN}": "bob", f"Token {CAROL_TOKEN}": "carol"}
        sender = senders.get(environ.get("HTTP_AUTHORIZATION"))
        SENT_AS[sender or "other"] = SENT_AS.get(sender or "other", 0) + 1
        request_started.disconnect(close_old_connections)
        request_finished.disconnect(close_old_connections)
        try:
            response = self.handler(environ, start_response)
            try:
                body = b"".join(response)
            finally:
                response.close()
        finally:
            request_started.connect(close_old_connections)
            request_finished.connect(close_old_connections)
        return [body]


class TokenAuth:
    """Schemathesis auth provider sending one user's API token."""

    def __init__(self, key):
        self.key = key

    def get(self, case, context):
        return self.key

    def set(self, case, data, context):
        case.headers = {**(case.headers or {}), "Authorization": f"Token {data}"}


SETTINGS = {
    "seed": int(os.environ.get("FUZZ_SEED", "20260401")),
    "generation": {
        # 30 per operation send about 2,900 requests in all, past the floor of 1,000, in 61 s (60 sent 4,190, in 91 s).
        "max-examples": int(os.environ.get("FUZZ_MAX_EXAMPLES", "30")),
        "database": "none",
        # The API refuses NUL characters anywhere (400), which no schema type can say; test_api_bad_input
        # sends them to every string field of every endpoint instead.
        "allow-x00": False,
    },
    "checks": {
        # Schemathesis' own list, and 413: a body over the API's size limit (documented) is refused before it is
        # read, whatever else it gets wrong.
        "negative_data_rejection": {
            "expected-statuses": [400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 428, 429, "5xx"],
        },
    },
}
config = schemathesis.Config.from_dict(
    {
        **SETTINGS,
        "operations": [
            # A schema-valid username and password are rejected with 400 unless they happen to exist, so only
            # malformed token requests are generated here; test_api_bad_input fuzzes real credentials.
            {"include-operation-id": "obtainToken", "generation": {"mode": "negative"}},
        ],
    }
)
schema = schemathesis.openapi.from_dict(published_schema(), config=config)
schema.app = InProcessDjango()
# Every request is alice's; the object-level authorization check replays alice's successful reads as bob.
schema.auth.providers.append(
    EscalatingAuthProvider(
        [TokenAuth(ALICE_TOKEN), TokenAuth(BOB_TOKEN)], ["alice", "bob"], peers=("alice", "bob"), pinned="alice"
    )
)
# The catalog's operations once more, as carol: staff holding every permission of the catalog, so that bodies and
# parameters reach the services, where alice gets 403 before her body is read.
# (Its own configuration: a configuration naming operations would override the include.)
staff_schema = schemathesis.openapi.from_dict(published_schema(), config=schemathesis.Config.from_dict(SETTINGS))
staff_schema = staff_schema.include(path_regex="^/api/catalog/")
staff_schema.app = schema.app
staff_schema.auth.providers.append(TokenAuth(CAROL_TOKEN))


def _positive_at(case, location):
    return case.meta is None or not case.meta.is_negative_at(location)


def _storable_text(min_size=0, max_size=200):
    """Text the API stores as it is: any Unicode but NUL and lone surrogates."""
    return st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=min_size, max_size=max_size)


def _name_text():
    return _storable_text(1, 200).filter(str.strip)


SESSION_IDS = st.sampled_from([*map(str, ALICE_SESSIONS), str(BOB_SESSION), MISSING_SESSION])


def _valid_invocation(tool):
    """A body the tool accepts (200), or refuses only for the session (403 mode, 404 not alice's)."""
    conversation = st.one_of(st.none(), _storable_text(1, 200))
    if tool == "agent_hello_world":
        arguments = st.fixed_dictionaries({"name": _name_text()})
        session = st.one_of(st.none(), SESSION_IDS)
    elif tool == "agent_list_modes":
        arguments = st.fixed_dictionaries(
            {}, optional={"includeExamples": st.booleans(), "filter": _storable_text(0, 200)}
        )
        session = st.one_of(st.none(), SESSION_IDS)
    else:
        arguments = st.fixed_dictionaries(
            {"mode": st.sampled_from(MODE_KEYS), "branch": st.booleans(), "reason": _storable_text(1, 1000).filter(str.strip)}
        )
        session = SESSION_IDS
    arguments = st.one_of(arguments, arguments.map(json.dumps))  # an object, or a string holding one
    return st.fixed_dictionaries({"arguments": arguments, "sessionId": session, "conversationId": conversation})


@schema.hook
def flatmap_case(context, case):
    """For part of the cases, real session ids, mode keys and tool names instead of random text."""
    path = case.operation.path
    if "{session_id}" in path and _positive_at(case, ParameterLocation.PATH):
        return st.one_of(st.just(case), SESSION_IDS.map(
            lambda value: _with(case, path_parameters={**case.path_parameters, "session_id": value})
        ))
    if "{key}" in path and _positive_at(case, ParameterLocation.PATH):
        return st.one_of(st.just(case), st.sampled_from(MODE_KEYS).map(lambda key: _with(case, path_parameters={"key": key})))
    if path == "/api/system-prompt/" and _positive_at(case, ParameterLocation.QUERY):
        keys = st.sampled_from(MODE_KEYS)
        return st.one_of(st.just(case), keys.map(lambda key: _with(case, query={**case.query, "currentMode": key})))
    if path == "/api/tools/{name}/invoke/" and _positive_at(case, ParameterLocation.PATH):
        if _positive_at(case, ParameterLocation.BODY):
            real = st.sampled_from(TOOL_NAMES).flatmap(
                lambda tool: _valid_invocation(tool).map(
                    lambda body: _with(case, path_parameters={"name": tool}, body=body)
                )
            )
        else:  # the generated, invalid body goes to a real tool
            real = st.sampled_from(TOOL_NAMES).map(lambda tool: _with(case, path_parameters={"name": tool}))
        return st.one_of(st.just(case), real)
    return st.just(case)


# What a real tool accepts depends on the tool, which one path template cannot say; a schema-valid call of a
# real tool (its name drawn below, or learnt from earlier responses) gets one of these bodies.
DEFAULT_INVOCATIONS = {
    "agent_hello_world": {"arguments": {"name": "Ada 🙂"}},
    "agent_list_modes": {"arguments": {"includeExamples": True}},
    "agent_change_mode": {
        "arguments": {"mode": "ddr_authoring", "branch": False, "reason": "The user agreed to write a DDR."},
        "sessionId": str(next(iter(ALICE_SESSIONS))),
    },
}


@schema.hook
def map_case(context, case):
    """Schema-valid cases the schema cannot tell apart from invalid ones get values the server accepts.

    A new session names a mode of the catalog, or none for the default mode: the schema cannot list the keys
    (the catalog is data, not code), and an unknown key is a 400, which the invalid bodies still send.
    ?toolFormat= and its old name ?tool_format=, sent together, must agree, which no OpenAPI 3.0 parameter can
    say; test_formats sends them disagreeing.
    """
    query = case.query or {}
    if _positive_at(case, ParameterLocation.QUERY) and {"toolFormat", "tool_format"} <= query.keys():
        case.query = {**query, "tool_format": query["toolFormat"]}
    path, body = case.operation.path, case.body
    if not _positive_at(case, ParameterLocation.BODY) or not isinstance(body, dict):
        return case
    if path == "/api/sessions/" and case.method == "POST" and body.get("mode") not in ("", *MODE_KEYS):
        choices = ["", *MODE_KEYS]
        case.body = {**body, "mode": choices[len(str(body.get("mode"))) % len(choices)]}
    elif path == "/api/tools/{name}/invoke/" and case.path_parameters.get("name") in DEFAULT_INVOCATIONS:
        case.body = dict(DEFAULT_INVOCATIONS[case.path_parameters["name"]])
    return case


CASE_NUMBERS = itertools.count(1)
AGENT_FILES = {"roo": ".roomodes", "kilo": ".kilocodemodes", "opencode": ".opencode/agent/review.md",
               "claude-code": ".claude/agents/test-runner.md"}
REVISION_NUMBERS = st.sampled_from(["1", "2", "3"])  # in staff_world: published, pending, none


@staff_schema.hook("flatmap_case")
def real_revision_numbers(context, case):
    """For part of the cases, a revision that exists (or the next one, which does not) instead of random text."""
    if "{number}" in case.operation.path and _positive_at(case, ParameterLocation.PATH):
        return st.one_of(st.just(case), REVISION_NUMBERS.map(lambda number: _with(case, path_parameters={"number": number})))
    return st.just(case)


@staff_schema.hook("map_case")
def catalog_values(context, case):
    """Schema-valid bodies the schema cannot tell apart from invalid ones get values the server accepts.

    A share and a guard's ratio have two decimals at most, which an OpenAPI 3.0 number cannot say reliably; a
    staging names organizations that exist; a routing case names modes of the catalog (or stay) and says something new; an import sends a mode file. Other
    tests send the invalid ones (test_rollouts, test_routing_cases, test_hostile_input).
    """
    body = case.body
    if not _positive_at(case, ParameterLocation.BODY) or not isinstance(body, dict):
        return case
    if case.operation.path == "/api/catalog/revisions/{number}/publish/":
        if isinstance(body.get("share"), (int, float)):
            body = {**body, "share": round(body["share"], 2)}
        if isinstance(body.get("guard"), dict) and isinstance(body["guard"].get("ratio"), (int, float)):
            body = {**body, "guard": {**body["guard"], "ratio": max(round(body["guard"]["ratio"], 2), 0.01)}}
        if isinstance(body.get("organizations"), list):  # slugs of organizations that exist (fuzz_world's)
            slugs = ("fuzz-alice", "fuzz-bob")
            body = {**body, "organizations": [slugs[len(str(slug)) % 2] for slug in body["organizations"]]}
    elif case.operation.path == "/api/catalog/import/":
        # A file's text in an agent's format, which no schema can say (test_hostile_input sends malformed ones);
        # its mode may be there from an earlier case, which only an update may change (a 400 otherwise).
        path = AGENT_FILES.get(body.get("format"), ".roomodes")
        body = {**body, "files": [{"path": path, "content": REPOSITORY[path]}], "update": True}
    elif case.operation.path == "/api/catalog/routing-cases/" and case.method == "POST":
        current = MODE_KEYS[len(body["currentMode"]) % len(MODE_KEYS)] if body.get("currentMode") else ""
        others = ["stay", *(key for key in MODE_KEYS if key != (current or "general"))]  # staying is "stay"
        body = {**body, "currentMode": current, "expected": others[len(body.get("expected", "")) % len(others)]}
        # A case said already from that mode is a 400 (as DRF answers a unique field); each case says something new.
        body["utterance"] = f"{body.get('utterance', '')[:990]} #{next(CASE_NUMBERS)}"
    case.body = body
    return case


def _with(case, **changes):
    for name, value in changes.items():
        setattr(case, name, value)
    return case


@pytest.fixture
def fuzz_world(db, settings):
    """alice (who sends every request) with three sessions, two of them moved to another mode; bob with one."""
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"tool-invoke": "100000/min", "session-create": "100000/min", "token": "100000/min"},
    }
    users = {}
    for name, token in (("alice", ALICE_TOKEN), ("bob", BOB_TOKEN)):
        user = get_user_model().objects.create_user(username=f"fuzz-{name}")
        org = Organization.objects.create(name=f"Fuzz {name}", slug=f"fuzz-{name}")
        Membership.objects.create(user=user, organization=org)
        # A fixed key (the hooks draw it), stored as knox would store it; knox's create() would draw its own.
        ApiToken(digest=hash_token(token), token_key=token[:15], user=user, name="fuzz").save()
        users[name] = user
    alice, bob = users["alice"], users["bob"]
    for pk, key in ALICE_SESSIONS.items():
        AgentSession.objects.create(pk=pk, owner=alice, org=alice.membership.organization, mode=get_mode("general"))
        if key != "general":
            set_session_mode(
                catalog=published_catalog(),
                session_id=pk, mode=get_mode(key), reason="Set up for the fuzzer.", user=alice
            )
    AgentSession.objects.create(pk=BOB_SESSION, owner=bob, org=bob.membership.organization, mode=get_mode("general"))
    return users


@pytest.fixture
def staff_world(fuzz_world, scout_pending):
    """carol, staff with every permission of the catalog; revision 1 published and revision 2 pending review."""
    carol = get_user_model().objects.create_user(username="fuzz-carol", is_staff=True)
    carol.user_permissions.set(Permission.objects.filter(content_type__app_label__in=["modes", "sessions_app"]))
    ApiToken(digest=hash_token(CAROL_TOKEN), token_key=CAROL_TOKEN[:15], user=carol, name="fuzz").save()
    return carol


@schema.parametrize()
@hypothesis_settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_every_operation_answers_as_the_published_schema_says(case, fuzz_world):
    REQUESTS[case.operation.label] = REQUESTS.get(case.operation.label, 0) + 1
    response = case.call_and_validate()
    bobs = str(BOB_SESSION)
    if bobs in case.formatted_path:
        expected = refusal_at(case.formatted_path, {"detail": f"No session {bobs} was found for you."})
        assert (response.status_code, response.json()) == (404, expected)
    if bobs in case.formatted_path or (isinstance(case.body, dict) and case.body.get("sessionId") == bobs):
        # Whatever else the case gets right or wrong, alice learns no more than a session that does not exist tells.
        assert (response.status_code, response.text) == answer_for_a_missing_session(case)


@staff_schema.parametrize()
@hypothesis_settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_every_catalog_operation_answers_staff_as_the_published_schema_says(case, staff_world):
    REQUESTS[f"{case.operation.label} (staff)"] = REQUESTS.get(f"{case.operation.label} (staff)", 0) + 1
    case.call_and_validate()


def answer_for_a_missing_session(case):
    """The case sent again with bob's session id replaced by one no session has: its status and body, the id put
    back in the body so that the two answers can be compared."""
    bobs = str(BOB_SESSION)
    body = case.body
    if isinstance(body, dict) and body.get("sessionId") == bobs:
        body = {**body, "sessionId": MISSING_SESSION}
    replay = case.operation.Case(  # a new case: the one Hypothesis reports keeps bob's id
        method=case.method,
        path_parameters={
            name: MISSING_SESSION if value == bobs else value for name, value in (case.path_parameters or {}).items()
        },
        headers=case.headers,
        cookies=case.cookies,
        query=case.query,
        body=body,
        media_type=case.media_type,
    )
    response = replay.call()
    return response.status_code, response.text.replace(MISSING_SESSION, bobs)


def test_stateful_scenarios_never_let_bob_read_what_alice_created(fuzz_world):
    """Sequences of calls that follow the links Schemathesis infers (create a session, then read it, ...).

    These feed the object-level authorization check: each of alice's successful reads of something she
    created or listed is replayed with bob's token, which must not get it.
    """

    class Scenarios(schema.as_state_machine()):
        def before_call(self, case):
            label = f"{case.operation.label} (stateful)"
            REQUESTS[label] = REQUESTS.get(label, 0) + 1

    Scenarios.run(
        settings=hypothesis_settings(
            max_examples=int(os.environ.get("FUZZ_SCENARIOS", "25")),
            stateful_step_count=6,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
    )


@pytest.fixture(scope="session", autouse=True)
def the_fuzzer_sent_at_least_1000_requests_over_every_operation(request):
    """
    At the end of the run, when every test of this module ran (not a -k selection): every operation was fuzzed,
    statefully too, with at least MINIMUM_REQUESTS requests in all, and the checks did their own probing. Counted
    in this process; at the session's end, as the fuzz tests' order among the others is pytest-random-order's.
    """
    yield
    operations = {
        f"{method.upper()} {path}"
        for path, methods in published_schema()["paths"].items()
        for method in methods
    }
    ran = {item.name for item in request.session.items if item.module is sys.modules[__name__]}
    every_test = {f"{test_every_operation_answers_as_the_published_schema_says.__name__}[{label}]" for label in operations}
    if not every_test | {test_stateful_scenarios_never_let_bob_read_what_alice_created.__name__} <= ran:
        return  # a selection of this module's tests: they cannot have sent the volume
    if request.session.testsfailed:
        return
    print("\nschemathesis requests:", sum(REQUESTS.values()), REQUESTS, "sent as:", SENT_AS)
    fuzzed = {label.removesuffix(" (stateful)").removesuffix(" (staff)") for label in REQUESTS}
    assert fuzzed == operations, f"not fuzzed: {sorted(operations - fuzzed)}"
    assert any(label.endswith(" (stateful)") for label in REQUESTS), "no stateful scenario ran"
    assert sum(REQUESTS.values()) >= MINIMUM_REQUESTS, REQUESTS
    # Without credentials (authentication enforced) and as bob (object-level authorization): neither check idle.
    assert SENT_AS.get("other", 0) > 0 and SENT_AS.get("bob", 0) > 0, SENT_AS
    assert SENT_AS.get("carol", 0) > 0, SENT_AS  # the catalog's operations, as staff
