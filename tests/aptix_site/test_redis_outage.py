"""
With REDIS_URL set and Redis gone, logins and throttled writes keep working: the throttles count per process,
one warning is logged for the outage (not one per request), and shared counting in Redis resumes when Redis
is back, with no restart: in-process, and against a live `make serve`. Redis here is a server of the test's
own, on a port of its own.
"""

import logging
import threading
import time

import pytest
import redis
import requests
from django.core.cache import caches
from rest_framework.test import APIClient

from aptix_site.cache import FailoverRedisCache

from ..servers import free_port, make_users, production_env, redis_server, scratch_database, serving


@pytest.fixture
def own_redis(settings, monkeypatch):
    """The default cache pointed at a Redis of our own; yields (port, start) where start() runs it again."""
    monkeypatch.setattr(FailoverRedisCache, "retry_seconds", 0.3)
    port = free_port()
    settings.CACHES = {
        "default": {
            "BACKEND": "aptix_site.cache.FailoverRedisCache",
            "LOCATION": f"redis://127.0.0.1:{port}/0",
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    }
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"tool-invoke": "5/day", "session-create": "1000/min", "token": "1000/min"},
    }
    yield port
    caches["default"].close()


def hello(client):
    return client.post("/api/tools/agent_hello_world/invoke/", {"arguments": {"name": "Ada"}}, format="json")


def redis_keys(port):
    return [key.decode() for key in redis.Redis(port=port).keys("*")]


@pytest.mark.django_db
def test_throttled_requests_and_logins_keep_working_while_redis_is_down_and_count_in_redis_again_after(
    own_redis, alice, alice_client, caplog
):
    port = own_redis
    with redis_server(port):
        assert [hello(alice_client).status_code for _ in range(2)] == [200, 200]
        assert any("tool-invoke" in key for key in redis_keys(port)), "the count is in Redis"

    with caplog.at_level(logging.WARNING, logger="aptix_site.cache"):
        during = [hello(alice_client).status_code for _ in range(6)]
        token = APIClient().post(
            "/api/token/", {"username": "alice", "password": "alice-password-123"}, format="json"
        )
        session = alice_client.post("/api/sessions/", {}, format="json")
    # Counted in this process alone from the outage on: five calls, then the sixth is throttled.
    assert during == [200, 200, 200, 200, 200, 429]
    assert (token.status_code, session.status_code) == (200, 201)
    outage_warnings = [record.getMessage() for record in caplog.records if record.name == "aptix_site.cache"]
    assert len(outage_warnings) == 1
    assert outage_warnings[0].startswith("Redis cannot be reached (")

    caplog.clear()
    with redis_server(port), caplog.at_level(logging.WARNING, logger="aptix_site.cache"):
        time.sleep(0.4)  # past the retry interval
        assert hello(alice_client).status_code == 200  # a fresh count in the fresh Redis
        assert any("tool-invoke" in key for key in redis_keys(port)), "counting is shared again"
        assert [record.getMessage() for record in caplog.records if record.name == "aptix_site.cache"] == [
            "Redis answers again; throttles count in Redis, shared by every worker."
        ]


def test_the_threads_of_a_process_share_one_count_and_one_warning_while_redis_is_down(own_redis, caplog):
    """Django gives each thread its own cache object; a worker's threads must still count as one process."""
    main_thread_cache = caches["default"]
    other_thread_caches = []

    def count_one_call():
        cache = caches["default"]
        other_thread_caches.append(cache)
        cache.incr("calls")

    with caplog.at_level(logging.WARNING, logger="aptix_site.cache"):
        main_thread_cache.set("calls", 1)
        for _ in range(2):
            thread = threading.Thread(target=count_one_call)
            thread.start()
            thread.join()

    assert all(cache is not main_thread_cache for cache in other_thread_caches)
    assert main_thread_cache.get("calls") == 3
    assert [record.getMessage().split(" (")[0] for record in caplog.records if record.name == "aptix_site.cache"] == [
        "Redis cannot be reached"
    ]


@pytest.mark.either_database(reason="a live server's counting in Redis is the same on either database")
def test_a_live_server_keeps_serving_through_a_redis_outage_and_counts_in_redis_again_after():
    port = free_port()
    with scratch_database() as env:
        token = make_users(env, "alice")["alice"]
        env = production_env(env, REDIS_URL=f"redis://127.0.0.1:{port}/0", TOOL_INVOKE_RATE="5/day")
        with redis_server(port) as first_redis, serving("make-serve", env, "WORKERS=1") as server:
            auth = {"Authorization": f"Token {token}"}

            def hello():
                return requests.post(
                    f"{server.base}/api/tools/agent_hello_world/invoke/", json={"arguments": {"name": "Ada"}},
                    headers=auth, timeout=30,
                ).status_code

            assert [hello(), hello()] == [200, 200]
            assert any("tool-invoke" in key for key in redis_keys(port)), "the count is in Redis"

            first_redis.terminate()
            first_redis.wait(timeout=10)
            during = [hello() for _ in range(6)]
            login = requests.post(
                f"{server.base}/api/token/", json={"username": "alice", "password": "alice-password-123"}, timeout=30
            )
            session = requests.post(f"{server.base}/api/sessions/", json={}, headers=auth, timeout=30)
            # The worker counts on its own from the outage on: five calls, then the sixth is throttled.
            assert during == [200, 200, 200, 200, 200, 429]
            assert (login.status_code, session.status_code) == (200, 201)
            assert server.output().count("Redis cannot be reached (") == 1

            with redis_server(port):
                # The worker tries Redis again 5 s into the outage. Until then it counts on its own, at the limit
                # already (429); its first call counted in the new Redis, which has no count yet, is let through.
                deadline = time.monotonic() + 15
                answers = []
                while not any("tool-invoke" in key for key in redis_keys(port)):
                    assert time.monotonic() < deadline, f"counting did not move back to Redis: {answers}"
                    answers.append(hello())
                    time.sleep(0.5)
                assert answers == [429] * (len(answers) - 1) + [200]
                assert "Redis answers again; throttles count in Redis, shared by every worker." in server.output()


@pytest.mark.django_db
def test_a_redis_outage_between_a_windows_first_add_and_its_increment_is_counted_not_a_500(
    own_redis, alice_client, monkeypatch
):
    """The count is started (add) and then incremented: an outage that begins between the two (Redis restarting,
    or another thread of the worker meeting the outage first) moves the increment to the process's own count,
    which has no such key yet."""
    with redis_server(own_redis) as server:
        added = FailoverRedisCache.add

        def add_then_redis_stops(cache, *args, **kwargs):
            result = added(cache, *args, **kwargs)
            if server.poll() is None:
                server.terminate()
                server.wait(timeout=10)
            return result

        monkeypatch.setattr(FailoverRedisCache, "add", add_then_redis_stops)
        assert hello(alice_client).status_code == 200
    assert [hello(alice_client).status_code for _ in range(5)] == [200, 200, 200, 200, 429]


@pytest.mark.django_db
def test_a_redis_that_answers_but_refuses_writes_counts_per_process_too(own_redis, alice_client, caplog):
    """A full Redis (maxmemory reached, no eviction) answers every write with an error: as an outage, not a 500."""
    with redis_server(own_redis):
        assert hello(alice_client).status_code == 200
        redis.Redis(port=own_redis).config_set("maxmemory", "1")  # the default policy, noeviction: writes refused
        with caplog.at_level(logging.WARNING, logger="aptix_site.cache"):
            assert [hello(alice_client).status_code for _ in range(6)] == [200, 200, 200, 200, 200, 429]
        assert [record.getMessage().split(" (")[0] for record in caplog.records if record.name == "aptix_site.cache"] == [
            "Redis cannot be reached"
        ]
        # Redis answers a ping, but the counts cannot be kept there: the readiness probe says so.
        assert APIClient().get("/readyz").json() == {
            "status": "degraded", "checks": {"database": "ok", "catalog": "ok", "cache": "unavailable"}
        }
