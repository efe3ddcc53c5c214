"""
Production posture: the settings with nothing but a SECRET_KEY pass Django's deployment checklist, DEBUG is
off, cookies are Secure, plain HTTP is redirected; and no API response ever carries a stack trace, SQL or
file paths, even when the database really fails under it.
"""

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection, transaction
from django.urls import get_resolver
from rest_framework.test import APIClient

from ..expected import tool_error
from ..servers import run_django

pytestmark = pytest.mark.django_db

PROJECT_DIR = Path(__file__).resolve().parents[2]
PRODUCTION_UNSET = (
    "DEBUG",
    "SECURE_SSL_REDIRECT",
    "DATABASE_URL",
    "REDIS_URL",
    "ALLOWED_HOSTS",
    "CSRF_TRUSTED_ORIGINS",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD",
    "SECURE_PROXY_SSL_HEADER",
)


def production_env(tmp_path, **extra):
    """The environment of a production process: a real secret key and nothing else configured."""
    env = {name: value for name, value in os.environ.items() if name not in PRODUCTION_UNSET}
    env.update(
        SECRET_KEY=secrets.token_urlsafe(45),  # 60 characters
        DJANGO_SETTINGS_MODULE="aptix_site.settings",
        DATABASE_URL=f"sqlite:///{tmp_path / 'production.sqlite3'}",
        **extra,
    )
    assert len(env["SECRET_KEY"]) == 60
    return env


def test_the_deployment_checklist_passes_with_production_settings(tmp_path):
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=PROJECT_DIR,
        env=production_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_the_deployment_checklist_would_catch_debug_left_on(tmp_path):
    # The check above is not vacuous: the same command fails for a development configuration.
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=PROJECT_DIR,
        env=production_env(tmp_path, DEBUG="1"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "security.W018" in result.stderr  # DEBUG on


def test_debug_is_off_and_cookies_are_secure_by_default(tmp_path):
    output = run_django(
        production_env(tmp_path),
        "from django.conf import settings as s; import json; print(json.dumps({"
        "'DEBUG': s.DEBUG, 'SESSION_COOKIE_SECURE': s.SESSION_COOKIE_SECURE, "
        "'CSRF_COOKIE_SECURE': s.CSRF_COOKIE_SECURE, 'SECURE_SSL_REDIRECT': s.SECURE_SSL_REDIRECT, "
        "'SECURE_HSTS_SECONDS': s.SECURE_HSTS_SECONDS, 'SESSION_COOKIE_HTTPONLY': s.SESSION_COOKIE_HTTPONLY}))",
    )
    assert json.loads(output) == {
        "DEBUG": False,
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SECURE_SSL_REDIRECT": True,
        "SECURE_HSTS_SECONDS": 31536000,
        "SESSION_COOKIE_HTTPONLY": True,
    }


def test_production_responses_redirect_http_send_hsts_and_set_secure_cookies(tmp_path):
    output = run_django(
        production_env(tmp_path),
        "from django.test import Client; import json\n"
        "client = Client(HTTP_HOST='localhost')\n"
        "plain = client.get('/api/schema/')\n"
        "secure = client.get('/api/schema/', secure=True)\n"
        "login = client.get('/admin/login/', secure=True)\n"
        "print(json.dumps({'plain': [plain.status_code, plain.get('Location')],"
        " 'hsts': secure.get('Strict-Transport-Security'),"
        " 'csrf_cookie_secure': bool(login.cookies['csrftoken']['secure'])}))",
    )
    assert json.loads(output) == {
        "plain": [301, "https://localhost/api/schema/"],
        "hsts": "max-age=31536000; includeSubDomains; preload",
        "csrf_cookie_secure": True,
    }


# --- No stack traces ------------------------------------------------------------------------------------

GENERIC_500 = {"detail": "The server failed to handle this request."}  # the tool envelope's is tool_error()


@pytest.fixture
def broken_catalog_tables(alice_client, alice_session):
    """The catalog's tables really gone (renamed inside the test's transaction, which rolls it back).

    Each request runs in a savepoint that is rolled back afterwards, because on PostgreSQL a failed query
    aborts the whole transaction.
    """
    with connection.cursor() as cursor:
        for table in ("modes_agentmode", "modes_cataloghead"):
            cursor.execute(f"ALTER TABLE {table} RENAME TO {table}_gone")

    def call(send):
        savepoint = transaction.savepoint()
        try:
            return send()
        finally:
            transaction.savepoint_rollback(savepoint)

    return call


def assert_reveals_nothing(response):
    text = response.content.decode()
    for leak in ("Traceback", "File \"", ".py", "/work/", "modes_agentmode", "modes_cataloghead", "SELECT",
                 "no such table", "does not exist", "OperationalError", "ProgrammingError"):
        assert leak not in text, f"the response reveals {leak!r}: {text}"


@pytest.mark.parametrize(
    "url",
    ["/api/modes/", "/api/modes/general/", "/api/modes/general/tools/", "/api/system-prompt/", "/api/sessions/{sid}/context/"],
)
def test_a_real_database_failure_is_a_generic_500_without_internals(broken_catalog_tables, alice_client, alice_session, url):
    response = broken_catalog_tables(lambda: alice_client.get(url.replace("{sid}", str(alice_session.pk))))
    assert response.status_code == 500
    assert response.json() == GENERIC_500
    assert_reveals_nothing(response)


# agent_list_modes reads the catalog itself and reports TUL-010's failure; agent_change_mode's session is checked
# against the catalog (its head row first) before the tool runs, so the request fails with the generic message.
@pytest.mark.parametrize(
    "name, arguments, message",
    [
        ("agent_list_modes", {}, "ListModesTool could not read the mode catalog."),
        (
            "agent_change_mode",
            {"mode": "ddr_authoring", "branch": False, "reason": "x"},
            "The server failed to handle this request.",
        ),
    ],
    ids=["list-modes", "change-mode"],
)
def test_a_tool_call_on_a_real_database_failure_answers_a_500_that_reveals_nothing(
    broken_catalog_tables, alice_client, alice_session, name, arguments, message
):
    body = {"arguments": arguments, "sessionId": str(alice_session.pk) if name == "agent_change_mode" else None}
    response = broken_catalog_tables(lambda: alice_client.post(f"/api/tools/{name}/invoke/", body, format="json"))
    assert response.status_code == 500
    assert response.json() == tool_error(message)
    assert_reveals_nothing(response)


def test_an_mcp_tool_call_on_a_real_database_failure_is_a_json_rpc_internal_error(broken_catalog_tables, alice):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {alice.api_key}")
    body = {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "agent_list_modes"}}
    response = broken_catalog_tables(lambda: client.post("/mcp/", body, format="json"))
    assert response.status_code == 500
    assert response.json() == {
        "jsonrpc": "2.0", "id": None, "error": {"code": -32603, "message": "The server failed to handle this request."}
    }
    assert_reveals_nothing(response)


@pytest.mark.parametrize("url", ["/api/no-such-endpoint/", "/api/modes/general/nope/", "/api/tools/agent_hello_world/"])
def test_an_unknown_url_under_the_api_is_a_json_404_that_reveals_nothing(alice_client, url):
    response = alice_client.get(url)
    assert response.status_code == 404
    assert response.json() == {"detail": "No API endpoint has this URL; /api/docs/ lists them."}
    assert_reveals_nothing(response)


def test_an_unknown_url_outside_the_api_keeps_the_html_404(client):
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


@pytest.mark.parametrize("path, content_type", [("/api/sessions/", "application/json"), ("/admin/", "text/html")])
def test_a_failure_outside_the_rest_framework_gets_the_generic_500_page(rf, path, content_type):
    # Django calls this handler for an exception no view handled (in a middleware, say).
    response = get_resolver().resolve_error_handler(500)(rf.get(path))
    assert response.status_code == 500
    assert response["Content-Type"].startswith(content_type)
    if content_type == "application/json":
        assert json.loads(response.content) == GENERIC_500
    assert_reveals_nothing(response)
