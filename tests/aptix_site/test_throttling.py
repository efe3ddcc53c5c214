"""
Abuse limits: DRF throttles on tool invocations ("tool-invoke"), session creation ("session-create", POST only)
and the token endpoint ("token"). Over the limit: 429, a Retry-After header and a JSON detail, and nothing
changes. Requests are counted per window of the rate's period (a clock minute for "N/min"): the tests that
count to a limit use per-day rates, so that no window ends while they run. With REDIS_URL set the counters live
in Redis, shared by every worker process, and concurrent requests never pass more than the limit.
"""

import os
import time
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest
from django.contrib.auth.models import User
from django.core.cache import caches
from rest_framework.test import APIClient

from aptix_site.cache import FailoverRedisCache
from aptix_site.throttling import WindowRateThrottle
from sessions_app.models import AgentSession, ModeChange

from ..servers import free_port, redis_server, run_django

pytestmark = pytest.mark.django_db

GENEROUS = {"tool-invoke": "1000/min", "session-create": "1000/min", "token": "1000/min"}
ALICE_LOGIN = {"username": "alice", "password": "alice-password-123"}


@pytest.fixture
def rates(settings):
    """Set some throttle rates (the others stay generous); WindowRateThrottle reads them per request."""

    def set_rates(**scopes):
        settings.REST_FRAMEWORK = {
            **settings.REST_FRAMEWORK,
            "DEFAULT_THROTTLE_RATES": {**GENEROUS, **{name.replace("_", "-"): rate for name, rate in scopes.items()}},
        }

    return set_rates


def assert_throttled(response):
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
    body = response.json()
    if "/invoke/" in response.request["PATH_INFO"]:  # the tool envelope, as every refusal there
        assert (body["successful"], body["result"]) == (False, None)
        detail = body["errorMessage"]
    else:
        detail = body["detail"]
    assert detail.startswith("Request was throttled. Expected available in ")
    assert detail.endswith(" seconds.")


def hello(client):
    return client.post("/api/tools/agent_hello_world/invoke/", {"arguments": {"name": "Ada"}}, format="json")


def test_tool_invocations_over_the_rate_get_429_with_retry_after(rates, alice_client):
    rates(tool_invoke="3/day")
    assert [hello(alice_client).status_code for _ in range(3)] == [200, 200, 200]
    assert_throttled(hello(alice_client))
    # Every tool counts against the same limit.
    assert_throttled(alice_client.post("/api/tools/agent_list_modes/invoke/", {}, format="json"))


def test_a_throttled_mode_change_changes_nothing(rates, alice_client, alice_session):
    rates(tool_invoke="1/day")
    assert hello(alice_client).status_code == 200
    body = {"arguments": {"mode": "ddr_authoring", "branch": True, "reason": "x"}, "sessionId": str(alice_session.pk)}
    sessions, changes = AgentSession.objects.count(), ModeChange.objects.count()
    assert_throttled(alice_client.post("/api/tools/agent_change_mode/invoke/", body, format="json"))
    alice_session.refresh_from_db()
    assert (alice_session.mode.key, AgentSession.objects.count(), ModeChange.objects.count()) == (
        "general",
        sessions,
        changes,
    )


def test_tool_limits_are_per_user(rates, alice_client, bob_client):
    rates(tool_invoke="2/day")
    assert [hello(alice_client).status_code for _ in range(2)] == [200, 200]
    assert_throttled(hello(alice_client))
    assert hello(bob_client).status_code == 200


def test_session_creation_over_the_rate_gets_429_and_creates_nothing(rates, alice_client):
    rates(session_create="2/day")
    assert [alice_client.post("/api/sessions/", {}, format="json").status_code for _ in range(2)] == [201, 201]
    response = alice_client.post("/api/sessions/", {"title": "One too many"}, format="json")
    assert_throttled(response)
    assert AgentSession.objects.count() == 2


def branch(client, session, *, mode="ddr_authoring"):
    body = {"arguments": {"mode": mode, "branch": True, "reason": "A new piece of work."}, "sessionId": str(session.pk)}
    return client.post("/api/tools/agent_change_mode/invoke/", body, format="json")


def test_a_branch_counts_against_the_session_create_limit_and_over_it_changes_nothing(rates, alice_client, alice_session):
    rates(session_create="2/day")
    assert alice_client.post("/api/sessions/", {}, format="json").status_code == 201
    assert branch(alice_client, alice_session).status_code == 200
    sessions, changes = AgentSession.objects.count(), ModeChange.objects.count()

    refused = branch(alice_client, alice_session, mode="workflow_authoring")
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0
    assert refused.json()["errorMessage"].startswith(
        "ModeChangeTool cannot start a new session now (branch=true): you have created as many sessions as "
        "2/day allows. Expected available in "
    )
    alice_session.refresh_from_db()
    assert (alice_session.mode.key, AgentSession.objects.count(), ModeChange.objects.count()) == (
        "ddr_authoring", sessions, changes
    )
    # And the branches spent the limit that POST /api/sessions/ counts on; a plain change still runs.
    assert_throttled(alice_client.post("/api/sessions/", {}, format="json"))
    plain = {"arguments": {"mode": "general", "branch": False, "reason": "Back."}, "sessionId": str(alice_session.pk)}
    assert alice_client.post("/api/tools/agent_change_mode/invoke/", plain, format="json").status_code == 200


def test_a_branch_of_another_users_session_is_a_404_and_spends_no_session(rates, alice_client, bob_session):
    rates(session_create="1/day")
    assert branch(alice_client, bob_session).status_code == 404
    assert alice_client.post("/api/sessions/", {}, format="json").status_code == 201


def test_over_mcp_a_branch_counts_against_the_same_limit(rates, alice, alice_client, alice_session):
    rates(session_create="1/day")
    assert alice_client.post("/api/sessions/", {}, format="json").status_code == 201
    mcp = APIClient()
    mcp.credentials(HTTP_AUTHORIZATION=f"Bearer {alice.api_key}")
    call = {
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "agent_change_mode", "arguments": {"mode": "ddr_authoring", "branch": True, "reason": "x"}},
    }
    response = mcp.post(f"/mcp/sessions/{alice_session.pk}/", call, format="json", HTTP_MCP_PROTOCOL_VERSION="2025-11-25")

    # HTTP 200 before protocol 2026-07-28, so that the client keeps its connection (429 in it: test_mcp_server.py).
    assert response.status_code == 200
    assert response.json()["error"]["data"]["retryAfter"] > 0
    assert response.json()["error"]["message"].startswith("ModeChangeTool cannot start a new session now")
    assert (AgentSession.objects.count(), ModeChange.objects.count()) == (2, 0)


def test_listing_sessions_is_not_throttled(rates, alice_client, alice_session):
    rates(session_create="1/day")
    assert alice_client.post("/api/sessions/", {}, format="json").status_code == 201
    assert_throttled(alice_client.post("/api/sessions/", {}, format="json"))
    # The limit is on creating; reading the list (and a session) goes on.
    for _ in range(10):
        assert alice_client.get("/api/sessions/").status_code == 200
    assert alice_client.get(f"/api/sessions/{alice_session.pk}/").status_code == 200


def test_token_requests_over_the_rate_get_429_even_with_the_right_password(rates, anon_client, alice):
    rates(token="2/day")
    assert anon_client.post("/api/token/", {"username": "alice", "password": "guess"}, format="json").status_code == 400
    assert anon_client.post("/api/token/", ALICE_LOGIN, format="json").status_code == 200
    assert_throttled(anon_client.post("/api/token/", ALICE_LOGIN, format="json"))


def test_token_limits_count_per_client_address(rates, alice):
    rates(token="1/day")
    first, second = APIClient(REMOTE_ADDR="203.0.113.1"), APIClient(REMOTE_ADDR="203.0.113.2")
    assert first.post("/api/token/", ALICE_LOGIN, format="json").status_code == 200
    assert_throttled(first.post("/api/token/", ALICE_LOGIN, format="json"))
    assert second.post("/api/token/", ALICE_LOGIN, format="json").status_code == 200


def test_a_forged_x_forwarded_for_header_does_not_reset_the_token_limit(rates, alice):
    # Password guessing must not get a fresh allowance by sending a made-up client address with each try.
    rates(token="2/day")
    client = APIClient(REMOTE_ADDR="203.0.113.9")
    statuses = [
        client.post(
            "/api/token/", {"username": "alice", "password": f"guess-{n}"}, format="json", HTTP_X_FORWARDED_FOR=f"198.51.100.{n}"
        ).status_code
        for n in range(4)
    ]
    assert statuses == [400, 400, 429, 429]


def test_behind_a_proxy_that_adds_the_port_a_new_port_is_no_fresh_token_allowance(rates, alice, settings):
    # The port kept, each connection through the proxy was a client of its own, with a limit of its own.
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    rates(token="1/day")
    client = APIClient(REMOTE_ADDR="10.0.0.2")
    assert client.post("/api/token/", ALICE_LOGIN, format="json", HTTP_X_FORWARDED_FOR="203.0.113.9:50001").status_code == 200
    assert_throttled(client.post("/api/token/", ALICE_LOGIN, format="json", HTTP_X_FORWARDED_FOR="203.0.113.9:50002"))
    assert client.post("/api/token/", ALICE_LOGIN, format="json", HTTP_X_FORWARDED_FOR="203.0.113.10:50003").status_code == 200


@pytest.mark.parametrize(("first", "then"), [
    ("2001:db8::9", "2001:0db8:0000:0000:0000:0000:0000:0009"),
    ("2001:db8::9", "2001:DB8::9"),
    ("2001:db8::9", "[2001:db8:0::9]:50002"),
    ("203.0.113.9", "::ffff:203.0.113.9"),
])
def test_one_address_spelled_another_way_is_the_same_client(rates, alice, settings, first, then):
    # A proxy that writes addresses in full, in capitals or IPv4 as IPv6 must not give each spelling an allowance.
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    rates(token="1/day")
    client = APIClient(REMOTE_ADDR="10.0.0.2")
    assert client.post("/api/token/", ALICE_LOGIN, format="json", HTTP_X_FORWARDED_FOR=first).status_code == 200
    assert_throttled(client.post("/api/token/", ALICE_LOGIN, format="json", HTTP_X_FORWARDED_FOR=then))


def window_of(timestamp, period):
    return int(timestamp // period)


@pytest.fixture
def throttle_clock(monkeypatch):
    """The throttles' clock, set by the test: a list holding the time, 45.25 s into a clock minute."""
    now = [1_800_000_000 + 45.25]  # 1_800_000_000 is a whole number of minutes since the epoch
    monkeypatch.setattr(WindowRateThrottle, "timer", staticmethod(lambda: now[0]))
    return now


def test_retry_after_is_the_time_left_in_the_window_and_the_next_window_lets_the_client_in(
    rates, alice_client, throttle_clock
):
    rates(tool_invoke="2/min")
    assert [hello(alice_client).status_code for _ in range(2)] == [200, 200]
    refused = hello(alice_client)
    assert_throttled(refused)
    assert refused["Retry-After"] == "15"  # 14.75 s to the end of the minute, rounded up
    assert refused.json()["errorMessage"] == "Request was throttled. Expected available in 15 seconds."
    throttle_clock[0] += 14.5
    assert hello(alice_client)["Retry-After"] == "1"
    throttle_clock[0] += 0.25
    assert [hello(alice_client).status_code for _ in range(3)] == [200, 200, 429]


# --- Redis ------------------------------------------------------------------------------------------------


def cache_backend_with(env_changes):
    env = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
    env.update(env_changes)
    env.setdefault("SECRET_KEY", "tests-only-not-a-secret")
    return run_django(env, "from django.conf import settings; print(settings.CACHES['default']['BACKEND'])")


def test_with_redis_url_the_cache_is_redis_with_a_per_process_fallback():
    assert cache_backend_with({"REDIS_URL": "redis://127.0.0.1:6379/15"}) == "aptix_site.cache.FailoverRedisCache"


def test_without_redis_url_the_cache_is_local_memory():
    assert cache_backend_with({}) == "django.core.cache.backends.locmem.LocMemCache"


@pytest.fixture
def redis_cache(settings):
    """The default cache as REDIS_URL makes it (Redis with its per-process fallback), on a Redis of the test's own:
    the shared one may serve another test run at the same time."""
    redis = pytest.importorskip("redis")
    port = free_port()
    with redis_server(port):
        url = f"redis://127.0.0.1:{port}/0"
        settings.CACHES = {"default": {"BACKEND": "aptix_site.cache.FailoverRedisCache", "LOCATION": url}}
        connection = redis.Redis.from_url(url)
        yield connection
        connection.close()


def test_with_redis_two_clients_of_one_user_share_the_throttle_count(redis_cache, rates, alice):
    rates(tool_invoke="3/day")
    assert isinstance(caches["default"], FailoverRedisCache)
    first, second = APIClient(), APIClient()
    for client in (first, second):
        client.credentials(HTTP_AUTHORIZATION=f"Token {alice.api_key}")
    assert [hello(first).status_code, hello(second).status_code, hello(first).status_code] == [200, 200, 200]
    assert_throttled(hello(second))
    # The count is in Redis, where every worker process reads it: the four requests of this window, the last refused.
    keys = [key.decode() for key in redis_cache.keys("*")]
    assert keys == [f":1:throttle_tool-invoke_{alice.pk}_{window_of(time.time(), 86400)}"]  # prefix, version, key
    assert redis_cache.get(keys[0]) == b"4"


def test_with_redis_concurrent_requests_of_one_user_never_pass_more_than_the_limit(redis_cache, rates):
    # Eight threads, as eight workers would, each with its own connection to Redis.
    rates(tool_invoke="50/day")
    request = SimpleNamespace(user=User(pk=4242))  # the throttle identifies a user by pk alone
    view = SimpleNamespace(throttle_scope="tool-invoke")
    with ThreadPoolExecutor(max_workers=8) as pool:
        allowed = list(pool.map(lambda _: WindowRateThrottle().allow_request(request, view), range(400)))
    assert allowed.count(True) == 50
