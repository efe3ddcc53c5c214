"""
Password guessing (django-axes): failed logins at the admin and at POST /api/token/ are logged with the user
name and the address, never the password, and after LOGIN_FAILURE_LIMIT failures one user name from one
address is locked out with a clear message, until the cool-off passes or an admin unlocks it. In-process, and
against a live `make serve`, where the address is the one nginx saw, whatever X-Forwarded-For a client sends.
"""

import io
import logging

import pytest
import requests
from axes.models import AccessAttempt
from django.core.management import call_command
from django.urls import reverse

from accounts.models import ApiToken

from .servers import make_users, production_env, run_manage, scratch_database, serving

pytestmark = pytest.mark.django_db

LOCKED_OUT = (
    "Too many failed logins for this user name from your address. Try again in 15 minutes, "
    "or ask an administrator to unlock it."
)
LOGIN = reverse("admin:login")


@pytest.fixture(autouse=True)
def generous_token_rate(settings):
    # The token endpoint's own throttle (10/min) would answer 429 before the lockout could be seen.
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "token": "1000/min"},
    }


@pytest.fixture
def root(django_user_model, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return django_user_model.objects.create_superuser("root", "root@localhost", "root-password-123")


def token_login(client, password, address="203.0.113.7", username="root", **headers):
    body = {"username": username, "password": password}
    return client.post("/api/token/", body, content_type="application/json", REMOTE_ADDR=address, **headers)


def admin_login(client, password, address="203.0.113.7"):
    return client.post(LOGIN, {"username": "root", "password": password}, REMOTE_ADDR=address)


def test_the_token_endpoint_locks_a_user_name_and_address_out_at_the_fifth_failure(client, root):
    answers = [token_login(client, f"wrong-{attempt}") for attempt in range(5)]
    assert [answer.status_code for answer in answers] == [400, 400, 400, 400, 429]
    assert answers[0].json() == {"non_field_errors": ["Unable to log in with provided credentials."]}
    locked = token_login(client, "root-password-123")  # even the right password, while locked out
    assert locked.status_code == 429
    assert locked.json() == {"detail": f"{LOCKED_OUT} Expected available in 900 seconds."}
    assert locked["Retry-After"] == "900"
    assert not ApiToken.objects.filter(user=root).exists()


def test_the_lockout_is_per_address_and_per_user_name(client, root, django_user_model):
    for attempt in range(5):
        token_login(client, f"wrong-{attempt}")
    assert token_login(client, "root-password-123", address="198.51.100.2").status_code == 200
    django_user_model.objects.create_user("other", password="other-password-123")
    assert token_login(client, "other-password-123", username="other").status_code == 200


def test_the_admin_login_locks_out_with_a_readable_page(client, root):
    answers = [admin_login(client, f"wrong-{attempt}") for attempt in range(5)]
    assert [answer.status_code for answer in answers] == [200, 200, 200, 200, 429]  # the form again, then locked
    locked = admin_login(client, "root-password-123")
    assert locked.status_code == 429
    assert LOCKED_OUT in locked.content.decode()
    assert "_auth_user_id" not in client.session


def test_failed_logins_are_logged_with_user_name_and_address_never_the_password(client, root, caplog):
    with caplog.at_level(logging.WARNING, logger="axes"):
        token_login(client, "hunter2-secret")
        admin_login(client, "hunter3-secret")
    failures = [record.getMessage() for record in caplog.records if "login failure" in record.getMessage()]
    assert len(failures) == 2
    for message in failures:
        assert "root" in message and "203.0.113.7" in message
    assert "hunter" not in caplog.text


def test_a_success_resets_the_count(client, root):
    for attempt in range(4):
        token_login(client, f"wrong-{attempt}")
    assert token_login(client, "root-password-123").status_code == 200
    for attempt in range(4):
        token_login(client, f"wrong-{attempt}")
    assert token_login(client, "root-password-123").status_code == 200


def test_the_unlock_command_lets_the_user_in_again(client, root):
    for attempt in range(5):
        token_login(client, f"wrong-{attempt}")
    assert token_login(client, "root-password-123").status_code == 429
    call_command("axes_reset_username", "root", stdout=io.StringIO())
    assert token_login(client, "root-password-123").status_code == 200


def test_an_admin_unlocks_by_deleting_the_attempt_in_the_admin(client, admin_client, root):
    for attempt in range(5):
        token_login(client, f"wrong-{attempt}")
    attempt = AccessAttempt.objects.get(username="root")
    changelist = reverse("admin:axes_accessattempt_changelist")
    assert "root" in admin_client.get(changelist).content.decode()
    admin_client.post(
        changelist, {"action": "delete_selected", "_selected_action": [attempt.pk], "post": "yes"}
    )
    assert not AccessAttempt.objects.exists()
    assert token_login(client, "root-password-123").status_code == 200


def test_the_address_is_the_one_the_throttles_trust(client, root, settings):
    # X-Forwarded-For counts only from API_NUM_PROXIES proxies: by default a client cannot pick an address.
    for attempt in range(5):
        token_login(client, f"wrong-{attempt}", HTTP_X_FORWARDED_FOR=f"10.0.0.{attempt}")
    assert token_login(client, "root-password-123").status_code == 429


def test_a_live_server_locks_out_guessing_from_a_real_address_logs_it_and_the_command_unlocks(tmp_path):
    with scratch_database(tmp_path) as env:
        make_users(env, "root")
        with serving("make-serve", production_env(env, TOKEN_RATE="1000/min"), "WORKERS=1") as server:

            def token_login(password, spoofed):
                # A client cannot pick its address: nginx adds the real one, and only that entry is trusted.
                return requests.post(
                    f"{server.base}/api/token/", json={"username": "root", "password": password},
                    headers={"X-Forwarded-For": spoofed}, timeout=30,
                )

            answers = [token_login(f"hunter-{attempt}", f"10.0.0.{attempt}") for attempt in range(5)]
            assert [answer.status_code for answer in answers] == [400, 400, 400, 400, 429]
            locked = token_login("root-password-123", "10.0.0.9")
            assert (locked.status_code, locked.headers["Retry-After"]) == (429, "900")
            assert locked.json() == {"detail": f"{LOCKED_OUT} Expected available in 900 seconds."}
            assert admin_login_over_http(server.base, "root-password-123").status_code == 429

            log = server.output()
            axes_lines = [line for line in log.splitlines() if line.startswith("AXES: ")]
            assert sum("login failure by {" in line for line in axes_lines) >= 5
            assert any(line.startswith("AXES: Locking out {") for line in axes_lines)
            assert all('{username: "root", ip_address: "127.0.0.1",' in line for line in axes_lines)
            assert "hunter-" not in log and "10.0.0." not in log

            run_manage(env, "axes_reset_username", "root")
            assert token_login("root-password-123", "10.0.0.9").status_code == 200


def admin_login_over_http(base, password):
    """The admin's login form posted as a browser would (its CSRF cookie is Secure, so it is sent by hand)."""
    form = requests.get(f"{base}/admin/login/", timeout=30)
    csrf = form.cookies["csrftoken"]
    return requests.post(
        f"{base}/admin/login/", data={"username": "root", "password": password, "csrfmiddlewaretoken": csrf},
        headers={"Cookie": f"csrftoken={csrf}"}, allow_redirects=False, timeout=30,
    )
