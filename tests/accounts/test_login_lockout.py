"""
Password guessing (django-axes): failed logins at the admin and at POST /api/token/ are logged with the user
name and the address, never the password, and after LOGIN_FAILURE_LIMIT failures one user name from one
address is locked out with a clear message, until the cool-off passes or an admin unlocks it. In-process, and
against a live `make serve`, where the address is the one nginx saw, whatever X-Forwarded-For a client sends.
Beyond the pair: an address that fails LOGIN_FAILURES_PER_ADDRESS logins across user names, and a user name
that fails LOGIN_FAILURES_PER_USERNAME across addresses (password spraying), are locked out too.
"""

import io
import logging

import pytest
import requests
from axes.models import AccessAttempt
from django.core.management import call_command
from django.urls import reverse

from accounts.models import ApiToken

from ..servers import make_users, production_env, run_manage, scratch_database, serving

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


def admin_login(client, password, address="203.0.113.7", username="root"):
    return client.post(LOGIN, {"username": username, "password": password}, REMOTE_ADDR=address)


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


def test_a_live_server_locks_out_guessing_from_a_real_address_logs_it_and_the_command_unlocks():
    with scratch_database() as env:
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


# --- Many user names from one address, one user name from many addresses ------------------------------------
# Small limits keep these cheap: 3 for one user name from one address, 4 for an address, 6 for a user name.

FROM_YOUR_ADDRESS = (
    "Too many failed logins from your address. Try again in 15 minutes, or ask an administrator to unlock it."
)
FOR_THIS_USER_NAME = (
    "Too many failed logins for this user name. Try again in 15 minutes, or ask an administrator to unlock it."
)
ADDRESSES = [f"198.51.100.{number}" for number in range(1, 8)]


@pytest.fixture
def small_limits(settings, fast_password_hashing):
    settings.AXES_FAILURE_LIMIT = 3
    settings.LOGIN_FAILURES_PER_ADDRESS = 4
    settings.LOGIN_FAILURES_PER_USERNAME = 6


def lockout_lines(caplog):
    return [record.getMessage() for record in caplog.records if record.getMessage().startswith("Login lockout")]


def test_many_user_names_from_one_address_lock_that_address_out_for_every_name(
    client, small_limits, root, alice, caplog
):
    with caplog.at_level(logging.WARNING, logger="accounts.lockout"):
        answers = [token_login(client, "guess", username=f"user-{number}") for number in range(4)]
    assert [answer.status_code for answer in answers] == [400, 400, 400, 429]
    assert answers[-1].json() == {"detail": f"{FROM_YOUR_ADDRESS} Expected available in 900 seconds."}
    assert lockout_lines(caplog) == [
        "Login lockout by the address rule: address 203.0.113.7 (4 failed logins across user names within "
        "15 minutes; this one for user name 'user-3')"
    ]
    # A user name never tried from there, with its right password, is refused too; other addresses are not.
    locked = token_login(client, "alice-password-123", username="alice")
    assert (locked.status_code, locked["Retry-After"]) == (429, "900")
    assert locked.json()["detail"].startswith(FROM_YOUR_ADDRESS)
    assert token_login(client, "alice-password-123", address=ADDRESSES[0], username="alice").status_code == 200
    assert admin_login(client, "root-password-123").status_code == 429
    assert admin_login(client, "root-password-123", address=ADDRESSES[0]).status_code == 302


def test_the_admin_login_refuses_an_address_that_guessed_many_user_names_with_a_readable_page(
    client, small_limits, root
):
    answers = [admin_login(client, "guess", username=f"user-{number}") for number in range(4)]
    assert [answer.status_code for answer in answers] == [200, 200, 200, 429]
    locked = admin_login(client, "root-password-123")
    assert (locked.status_code, locked["Retry-After"]) == (429, "900")
    assert FROM_YOUR_ADDRESS in locked.content.decode()
    assert "_auth_user_id" not in client.session


def test_one_user_name_guessed_from_many_addresses_is_locked_out_from_everywhere(
    client, small_limits, root, alice, caplog
):
    with caplog.at_level(logging.WARNING, logger="accounts.lockout"):
        answers = [token_login(client, "guess", address=address) for address in ADDRESSES[:6]]
    assert [answer.status_code for answer in answers] == [400] * 5 + [429]
    assert answers[-1].json() == {"detail": f"{FOR_THIS_USER_NAME} Expected available in 900 seconds."}
    assert lockout_lines(caplog) == [
        "Login lockout by the username rule: user name 'root' (6 failed logins across addresses within "
        "15 minutes; this one from 198.51.100.6)"
    ]
    # Even from an address never seen, with the right password; other user names, even from those addresses, pass.
    locked = token_login(client, "root-password-123", address=ADDRESSES[6])
    assert (locked.status_code, locked["Retry-After"]) == (429, "900")
    assert locked.json()["detail"].startswith(FOR_THIS_USER_NAME)
    assert token_login(client, "alice-password-123", address=ADDRESSES[0], username="alice").status_code == 200


def test_logins_refused_while_locked_out_do_not_count_so_one_address_cannot_lock_a_name_out_everywhere(
    client, small_limits, root
):
    # From one address the pair rule stops the guessing at 3; what is refused after that is not counted again,
    # or one address alone would reach the user name's limit and lock its owner out from everywhere.
    answers = [admin_login(client, "guess") for _ in range(20)]
    assert [answer.status_code for answer in answers] == [200] * 2 + [429] * 18
    assert admin_login(client, "root-password-123", address=ADDRESSES[0]).status_code == 302
    assert token_login(client, "root-password-123", address=ADDRESSES[1]).status_code == 200


def test_the_admin_login_refuses_a_user_name_guessed_from_many_addresses_with_a_readable_page(
    client, small_limits, root
):
    answers = [admin_login(client, "guess", address=address) for address in ADDRESSES[:6]]
    assert [answer.status_code for answer in answers] == [200] * 5 + [429]
    locked = admin_login(client, "root-password-123", address=ADDRESSES[6])
    assert (locked.status_code, locked["Retry-After"]) == (429, "900")
    assert FOR_THIS_USER_NAME in locked.content.decode()
    assert "_auth_user_id" not in client.session


def test_one_user_name_from_one_address_still_locks_at_its_own_smaller_limit(client, small_limits, root, caplog):
    with caplog.at_level(logging.WARNING, logger="accounts.lockout"):
        answers = [token_login(client, f"wrong-{attempt}") for attempt in range(3)]
    assert [answer.status_code for answer in answers] == [400, 400, 429]
    assert answers[-1].json()["detail"].startswith(LOCKED_OUT.split(".")[0])
    assert lockout_lines(caplog) == [
        "Login lockout by the username and address rule: user name 'root' from address 203.0.113.7 "
        "(3 failed logins within 15 minutes)"
    ]


def test_a_success_forgives_only_its_own_failures_not_those_of_other_names_or_other_addresses(
    client, small_limits, root, alice
):
    # From one address: two other names and one of alice's typos, then alice logs in.
    for username in ("user-1", "user-2", "alice"):
        token_login(client, "guess", username=username)
    assert token_login(client, "alice-password-123", username="alice").status_code == 200
    # Her typo is forgiven (the address is at 2 of 4), the other names' failures are not.
    assert token_login(client, "guess", username="user-3").status_code == 400
    assert token_login(client, "guess", username="user-4").status_code == 429
    # One name from many addresses: root logging in from his own address does not forgive the others.
    for address in ADDRESSES[:5]:
        token_login(client, "guess", address=address)
    assert token_login(client, "root-password-123", address=ADDRESSES[5]).status_code == 200
    assert token_login(client, "guess", address=ADDRESSES[6]).status_code == 429


def test_the_address_and_user_name_rules_are_off_at_zero(client, small_limits, settings, root):
    settings.LOGIN_FAILURES_PER_ADDRESS = settings.LOGIN_FAILURES_PER_USERNAME = 0
    for number in range(6):
        assert token_login(client, "guess", username=f"user-{number}").status_code == 400
        assert token_login(client, "guess", address=ADDRESSES[number]).status_code == 400
    assert token_login(client, "root-password-123", address=ADDRESSES[6]).status_code == 200


def test_an_admin_lifts_an_address_lockout_by_deleting_its_attempts_in_the_admin(
    client, admin_client, small_limits, alice
):
    for number in range(4):
        token_login(client, "guess", username=f"user-{number}")
    changelist = reverse("admin:axes_accessattempt_changelist")
    listed = admin_client.get(changelist, {"q": "203.0.113.7"}).content.decode()
    attempts = list(AccessAttempt.objects.filter(ip_address="203.0.113.7").values_list("pk", flat=True))
    assert len(attempts) == 4 and all(f"user-{number}" in listed for number in range(4))
    admin_client.post(changelist, {"action": "delete_selected", "_selected_action": attempts, "post": "yes"})
    assert token_login(client, "alice-password-123", username="alice").status_code == 200


def test_axes_reset_ip_lifts_an_address_lockout(client, small_limits, alice):
    for number in range(4):
        token_login(client, "guess", username=f"user-{number}")
    assert token_login(client, "alice-password-123", username="alice").status_code == 429
    call_command("axes_reset_ip", "203.0.113.7", stdout=io.StringIO())
    assert token_login(client, "alice-password-123", username="alice").status_code == 200


def test_axes_reset_username_lifts_a_user_name_lockout(client, small_limits, root):
    for address in ADDRESSES[:6]:
        token_login(client, "guess", address=address)
    assert token_login(client, "root-password-123", address=ADDRESSES[6]).status_code == 429
    call_command("axes_reset_username", "root", stdout=io.StringIO())
    assert token_login(client, "root-password-123", address=ADDRESSES[6]).status_code == 200


def admin_login_over_http(base, password):
    """The admin's login form posted as a browser would (its CSRF cookie is Secure, so it is sent by hand)."""
    form = requests.get(f"{base}/admin/login/", timeout=30)
    csrf = form.cookies["csrftoken"]
    return requests.post(
        f"{base}/admin/login/", data={"username": "root", "password": password, "csrfmiddlewaretoken": csrf},
        headers={"Cookie": f"csrftoken={csrf}"}, allow_redirects=False, timeout=30,
    )


@pytest.mark.parametrize(
    "forwarded",
    ["unknown", "", "fe80::1%eth0", "[fe80::1%eth0]:443", "[203.0.113.7]:443", "2001:db8::7]:443", "203.0.113.7:http",
     "1.2.3.4, garbage"],
)
def test_a_forwarded_entry_that_is_no_address_is_counted_as_an_unknown_address_not_a_500(
    client, root, settings, forwarded
):
    # A client's own text where API_NUM_PROXIES counts one proxy too many: PostgreSQL stores no such address (axes'
    # column is inet), so every login, good or bad, was a 500 there.
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    assert token_login(client, "root-password-123", HTTP_X_FORWARDED_FOR=forwarded).status_code == 200
    assert client.post(
        LOGIN, {"username": "root", "password": "root-password-123"}, HTTP_X_FORWARDED_FOR=forwarded
    ).status_code == 302
    answers = [token_login(client, f"wrong-{attempt}", HTTP_X_FORWARDED_FOR=forwarded) for attempt in range(5)]
    assert [answer.status_code for answer in answers] == [400, 400, 400, 400, 429]
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"0.0.0.0"}
    # Real addresses are still told apart.
    assert token_login(client, "root-password-123", HTTP_X_FORWARDED_FOR="198.51.100.1").status_code == 200


@pytest.mark.parametrize("address, forwarded", [("203.0.113.7", "203.0.113.7:{port}"), ("2001:db8::7", "[2001:db8::7]:{port}")])
def test_behind_a_proxy_that_adds_the_port_an_address_that_guesses_locks_out_only_itself_not_everyone(
    client, small_limits, root, alice, settings, address, forwarded
):
    # The port left out: counted as one unknown address, 30 failures by anyone locked every login out.
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    answers = [
        token_login(client, "guess", username=f"user-{number}", HTTP_X_FORWARDED_FOR=forwarded.format(port=51230 + number))
        for number in range(4)
    ]
    assert [answer.status_code for answer in answers] == [400, 400, 400, 429]  # each from a new port: one address
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {address}
    elsewhere = token_login(client, "alice-password-123", username="alice", HTTP_X_FORWARDED_FOR="198.51.100.1:40000")
    assert elsewhere.status_code == 200


def test_an_ipv6_address_without_brackets_is_taken_whole_not_cut_at_a_colon_as_if_a_port(client, root, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    token_login(client, "guess", HTTP_X_FORWARDED_FOR="2001:db8::7:443")
    assert list(AccessAttempt.objects.values_list("ip_address", flat=True)) == ["2001:db8::7:443"]
