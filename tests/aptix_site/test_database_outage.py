"""
While the database cannot be reached, requests are answered 503 with Retry-After and the usual error body,
never 500, and the service recovers by itself once the database is back. The outage is a TCP proxy of the
test's own, cut and restored in front of the shared PostgreSQL server, which is never stopped; the app is
served as in production (`make serve`) from a scratch database.
"""

import time
from urllib.parse import urlsplit

import pytest
import requests

from ..servers import TcpProxy, make_users, production_env, scratch_database, serving

pytestmark = pytest.mark.postgres(reason="cuts a PostgreSQL connection")
RECOVERY_SECONDS = 15


@pytest.fixture(scope="module")
def outage():
    """(server, proxy, token): the app on a scratch database reached through a proxy that the test can cut."""
    with scratch_database() as env:
        token = make_users(env, "alice")["alice"]
        address = urlsplit(env["DATABASE_URL"])
        proxy = TcpProxy(address.hostname, address.port)
        through_proxy = env["DATABASE_URL"].replace(address.netloc.split("@")[-1], f"127.0.0.1:{proxy.port}")
        try:
            with serving("make-serve", production_env(env, DATABASE_URL=through_proxy), "WORKERS=1") as server:
                yield server, proxy, token
        finally:
            proxy.close()


def requests_of_every_kind(base, token):
    rest = {"Authorization": f"Token {token}"}
    return {
        "list": requests.get(f"{base}/api/modes/", headers=rest, timeout=30),
        "invoke": requests.post(
            f"{base}/api/tools/agent_hello_world/invoke/", json={"arguments": {"name": "Ada"}}, headers=rest, timeout=30
        ),
        "mcp": requests.post(
            f"{base}/mcp/", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Authorization": f"Bearer {token}"}, timeout=30,
        ),
        # A login cookie: the admin reads its session from the database.
        "admin": requests.get(f"{base}/admin/", cookies={"sessionid": "a" * 32}, allow_redirects=False, timeout=30),
    }


def test_an_outage_is_503_with_retry_after_and_the_service_recovers_by_itself(outage):
    server, proxy, token = outage
    assert requests.get(f"{server.base}/api/modes/", headers={"Authorization": f"Token {token}"}).status_code == 200

    proxy.cut()
    try:
        answers = requests_of_every_kind(server.base, token)
    finally:
        proxy.restore()
    detail = "The service's database cannot be reached just now; try again in a few seconds."
    assert {name: response.status_code for name, response in answers.items()} == {
        "list": 503, "invoke": 503, "mcp": 503, "admin": 503
    }
    assert all(response.headers["Retry-After"] == "5" for response in answers.values())
    assert answers["list"].json() == {"detail": detail}
    assert answers["invoke"].json() == {"successful": False, "result": None, "errorMessage": detail}
    assert answers["mcp"].json() == {"jsonrpc": "2.0", "id": None, "error": {"code": -32603, "message": detail}}
    assert answers["admin"].text == detail

    deadline = time.monotonic() + RECOVERY_SECONDS
    while True:
        answers = requests_of_every_kind(server.base, token)
        statuses = {name: response.status_code for name, response in answers.items()}
        if statuses == {"list": 200, "invoke": 200, "mcp": 200, "admin": 302}:  # to the login page
            break
        assert time.monotonic() < deadline, f"not recovered within {RECOVERY_SECONDS} s: {statuses}"
        time.sleep(0.5)
