"""
The pages outside DRF (the front door, the health checks, the API's schema and docs, the admin) answer a method
they do not serve with DRF's JSON 405 and an Allow header, even a POST without a CSRF token; and the HTML pages
(the front door, the admin, the API docs) carry the Content-Security-Policy, which JSON answers go without.
Through the test client, against the real app.
"""

import json

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

READ_ONLY = "GET, HEAD"
ADMIN = "GET, HEAD, POST"
POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "object-src": "'none'",
    "base-uri": "'none'",
    "frame-ancestors": "'none'",
    "form-action": "'self'",
}


@pytest.mark.parametrize(
    "method, path, allowed",
    [
        ("POST", "/", READ_ONLY),
        ("PUT", "/", READ_ONLY),
        ("OPTIONS", "/", READ_ONLY),
        ("POST", "/healthz", READ_ONLY),
        ("DELETE", "/readyz", READ_ONLY),
        ("POST", "/api/docs/", READ_ONLY),
        ("PUT", "/api/schema/", READ_ONLY),
        ("PUT", "/admin/", ADMIN),
        ("DELETE", "/admin/login/", ADMIN),
        ("POST", "/static/admin/css/base.css", READ_ONLY),
        ("DELETE", "/static/no-such-file.css", READ_ONLY),
        ("PATCH", "/admin/modes/agentmode/", ADMIN),
        ("TRACE", "/admin/modes/agentmode/1/change/", ADMIN),
        ("BREW", "/admin/auth/user/", ADMIN),
    ],
)
def test_a_method_a_page_does_not_serve_gets_a_json_405_naming_the_methods_it_does(method, path, allowed):
    response = Client(enforce_csrf_checks=True).generic(method, path)
    assert (response.status_code, response["Content-Type"], response["Allow"]) == (405, "application/json", allowed)
    assert json.loads(response.content) == {"detail": f'Method "{method}" not allowed.'}


@pytest.mark.parametrize(
    "method, path, allowed",
    [
        ("GET", "/admin/logout/", "POST"),
        ("GET", "/admin/modes/agentmode/3F8E4F377F7A4C189C7F6A8B9F945C11/history/1/revert/", "POST"),
        ("POST", "/admin/sessions_app/modechange/graph/", "GET, HEAD"),
        ("POST", "/admin/modes/agentmode/export/", "GET, HEAD"),
    ],
)
def test_an_admin_page_that_takes_fewer_methods_says_which_in_the_same_json(admin_client, method, path, allowed):
    # Django's own 405 was an empty HTML page, its Allow naming OPTIONS, which the admin refuses.
    response = admin_client.generic(method, path)
    assert (response.status_code, response["Content-Type"], response["Allow"]) == (405, "application/json", allowed)
    assert json.loads(response.content) == {"detail": f'Method "{method}" not allowed.'}


def test_the_admin_still_takes_its_forms_by_post(admin_client):
    response = admin_client.post("/admin/logout/")
    assert response.status_code == 200
    assert b"Logged out" in response.content


def policy_of(response) -> dict:
    directives = (part.strip().split(" ", 1) for part in response["Content-Security-Policy"].split(";"))
    return {name: value for name, value in directives}


@pytest.mark.parametrize("path", ["/", "/api/docs/", "/admin/login/"])
def test_each_html_page_carries_the_content_security_policy(path):
    assert policy_of(Client().get(path, HTTP_ACCEPT="text/html")) == POLICY


def test_the_admin_pages_of_a_signed_in_admin_carry_the_content_security_policy(admin_client):
    for path in ("/admin/", "/admin/modes/agentmode/", "/admin/modes/declaredtool/add/"):
        assert policy_of(admin_client.get(path)) == POLICY, path


def test_json_answers_go_without_the_policy(alice_client):
    for response in (alice_client.get("/api/modes/"), Client().get("/", HTTP_ACCEPT="application/json")):
        assert response["Content-Type"] == "application/json"
        assert "Content-Security-Policy" not in response


def test_a_form_refused_for_its_csrf_token_gets_a_page_the_policy_lets_render(admin_user):
    """Django's own CSRF failure page has an inline style, which the policy refuses (a violation in the console)."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)

    response = client.post("/admin/modes/routingcase/add/", {"utterance": "hello", "expected": "general"})

    assert response.status_code == 403
    assert policy_of(response) == POLICY
    page = response.content.decode()
    assert "CSRF verification failed" in page
    # Why, in the words of the page and of Django, which tells a misconfigured origin, say, from a stale page.
    assert "This site needs its CSRF cookie to take a form." in page
    assert "Django's reason: CSRF cookie not set." in page
    assert "<style" not in page and "style=" not in page and "<script" not in page
