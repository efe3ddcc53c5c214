"""
API tokens through the API: only a digest is stored, a user holds several named tokens, each can be revoked
alone or all at once, a new password revokes them all, they expire, a user holds a bounded number of live ones,
and their last use is written at most once a minute.
"""

import hashlib
from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone

from accounts.models import ApiToken
from accounts.tokens import TooManyTokens, create_token

pytestmark = pytest.mark.django_db

TOKEN = "/api/token/"
MODES = "/api/modes/"


def status_with(client, key):
    return client.get(MODES, HTTP_AUTHORIZATION=f"Token {key}").status_code


def new_token(client, **extra):
    response = client.post(TOKEN, {"username": "alice", "password": "alice-password-123", **extra}, format="json")
    assert response.status_code == 200, response.content
    return response.json()["token"]


def token_rows() -> list[tuple]:
    """Every column of every row of the token table, as the database holds them."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {connection.ops.quote_name(ApiToken._meta.db_table)}")
        return cursor.fetchall()


# --- Stored as a digest -----------------------------------------------------------------------------------


def test_no_key_is_stored_in_the_token_table_only_its_digest_and_prefix(fast_password_hashing, alice, anon_client):
    out = StringIO()
    call_command("create_token", "alice", "--name", "planner", stdout=out, stderr=StringIO())
    keys = [new_token(anon_client), out.getvalue().strip(), alice.api_key]

    rows = token_rows()

    assert len(rows) == 3
    stored = " ".join(str(value) for row in rows for value in row)
    for key in keys:
        assert len(key) == 64
        assert key not in stored
        assert hashlib.sha512(key.encode()).hexdigest() in stored
        assert key[:15] in stored  # the prefix, to tell tokens apart
        assert status_with(anon_client, key) == 200


# --- Several named tokens, each revoked alone or all at once ----------------------------------------------


def test_each_post_to_the_token_endpoint_makes_a_new_named_token_and_all_of_them_work(
    fast_password_hashing, alice, anon_client
):
    planner = new_token(anon_client, name="planner")
    default = new_token(anon_client)

    assert len({planner, default, alice.api_key}) == 3
    assert sorted(ApiToken.objects.filter(user=alice).values_list("name", flat=True)) == ["api", "planner", "tests"]
    for key in (planner, default, alice.api_key):
        assert status_with(anon_client, key) == 200


def test_logging_in_again_with_the_same_token_name_keeps_the_earlier_token_working(
    fast_password_hashing, alice, anon_client
):
    # Two hosts of one back-end, each logging in at its start: neither logs the other out.
    first_host = new_token(anon_client, name="planner")
    second_host = new_token(anon_client, name="planner")

    assert (status_with(anon_client, first_host), status_with(anon_client, second_host)) == (200, 200)
    assert ApiToken.objects.filter(user=alice, name="planner").count() == 2
    assert status_with(anon_client, alice.api_key) == 200


@pytest.mark.parametrize("name", ["", "x" * 101, 5], ids=["empty", "too-long", "number"])
def test_a_bad_token_name_is_a_400_and_makes_no_token(fast_password_hashing, alice, anon_client, name):
    body = {"username": "alice", "password": "alice-password-123", "name": name}
    response = anon_client.post(TOKEN, body, format="json")
    assert response.status_code == 400
    assert list(response.json()) == ["name"]
    assert ApiToken.objects.filter(user=alice).count() == 1


def test_an_html_login_form_with_its_name_left_empty_gets_a_token_named_api(fast_password_hashing, alice, anon_client):
    # A form sends its empty inputs; DRF reads an empty form field as one left out, as the docs promise here.
    response = anon_client.post(TOKEN, "username=alice&password=alice-password-123&name=",
                                content_type="application/x-www-form-urlencoded")
    assert response.status_code == 200, response.content
    assert sorted(ApiToken.objects.filter(user=alice).values_list("name", flat=True)) == ["api", "tests"]


def test_revoking_one_token_leaves_the_others_working(fast_password_hashing, alice, anon_client):
    planner = new_token(anon_client, name="planner")
    writer = new_token(anon_client, name="writer")

    call_command("revoke_tokens", "alice", "--name", "planner", stdout=StringIO())

    assert status_with(anon_client, planner) == 401
    assert status_with(anon_client, writer) == 200
    assert status_with(anon_client, alice.api_key) == 200


def test_revoking_all_of_a_users_tokens_leaves_other_users_tokens_working(
    fast_password_hashing, alice, bob, anon_client
):
    planner = new_token(anon_client, name="planner")

    call_command("revoke_tokens", "alice", stdout=StringIO())

    assert status_with(anon_client, planner) == 401
    assert status_with(anon_client, alice.api_key) == 401
    assert status_with(anon_client, bob.api_key) == 200


# --- A new password revokes every token; a re-hash of the same one does not -----------------------------


def test_a_new_password_set_in_the_admin_revokes_all_of_the_users_tokens(
    fast_password_hashing, alice, bob, admin_client, anon_client
):
    planner = new_token(anon_client, name="planner")
    response = admin_client.post(
        f"/admin/auth/user/{alice.pk}/password/",
        {"password1": "a-new-password-456", "password2": "a-new-password-456", "usable_password": "true"},
    )
    assert response.status_code == 302, response.content

    assert status_with(anon_client, planner) == 401
    assert status_with(anon_client, alice.api_key) == 401
    assert status_with(anon_client, bob.api_key) == 200
    assert not ApiToken.objects.filter(user=alice).exists()


def test_a_new_password_set_as_changepassword_sets_it_revokes_all_of_the_users_tokens(
    fast_password_hashing, alice, anon_client
):
    # changepassword (and Django's PasswordChangeForm) do exactly this.
    alice.set_password("a-new-password-456")
    alice.save()

    assert status_with(anon_client, alice.api_key) == 401


def test_disabling_the_password_in_the_admin_revokes_all_of_the_users_tokens(
    fast_password_hashing, alice, bob, admin_client, anon_client
):
    response = admin_client.post(
        f"/admin/auth/user/{alice.pk}/password/", {"usable_password": "false", "unset-password": "Disable"}
    )
    assert response.status_code == 302, response.content

    alice.refresh_from_db()
    assert not alice.has_usable_password()
    assert status_with(anon_client, alice.api_key) == 401
    assert status_with(anon_client, bob.api_key) == 200


def test_saving_an_agent_user_whose_password_was_never_usable_keeps_its_tokens(anon_client):
    call_command("create_agent_user", "planner", stdout=StringIO(), stderr=StringIO())
    agent = get_user_model().objects.get(username="planner")
    key = create_token(user=agent, name="spare")[1]
    agent.first_name = "Planner"
    agent.set_unusable_password()
    agent.save()
    assert status_with(anon_client, key) == 200


def test_django_rehashing_the_same_password_at_a_login_keeps_the_tokens(fast_password_hashing, alice, anon_client):
    # A salt shorter than the hasher asks for: the next login re-hashes the same password and saves it.
    weak = make_password("alice-password-123", salt="short", hasher="md5")
    type(alice).objects.filter(pk=alice.pk).update(password=weak)

    new_token(anon_client)

    alice.refresh_from_db()
    assert alice.password != weak  # re-hashed
    assert status_with(anon_client, alice.api_key) == 200


def test_saving_a_user_without_a_new_password_keeps_the_tokens(alice, anon_client):
    alice.first_name = "Alice"
    alice.save()
    assert status_with(anon_client, alice.api_key) == 200


# --- Expiry ---------------------------------------------------------------------------------------------


def test_with_api_token_ttl_days_a_token_answers_401_once_it_has_expired_and_stays_listed(
    fast_password_hashing, alice, anon_client, settings, clock
):
    settings.API_TOKEN_TTL_DAYS = 2
    key = new_token(anon_client, name="short-lived")
    token = ApiToken.objects.get(name="short-lived")
    assert abs(token.expiry - token.created - timedelta(days=2)) < timedelta(seconds=1)

    clock.advance(days=2, seconds=-1)
    assert status_with(anon_client, key) == 200
    clock.advance(seconds=2)
    response = anon_client.get(MODES, HTTP_AUTHORIZATION=f"Token {key}")

    assert response.status_code == 401
    assert response.json()["detail"] == "Invalid token."
    assert ApiToken.objects.filter(name="short-lived").exists()  # not deleted as it was read
    assert status_with(anon_client, alice.api_key) == 200  # made before the setting: never expires


def test_create_token_expires_days_overrides_the_setting(alice, anon_client, settings, clock):
    settings.API_TOKEN_TTL_DAYS = 30
    out = StringIO()
    call_command("create_token", "alice", "--name", "ci", "--expires-days", "1", stdout=out, stderr=StringIO())
    key = out.getvalue().strip()

    clock.advance(hours=23)
    assert status_with(anon_client, key) == 200
    clock.advance(hours=2)
    assert status_with(anon_client, key) == 401


def test_without_api_token_ttl_days_a_token_never_expires(alice, anon_client, clock):
    assert ApiToken.objects.get(user=alice).expiry is None
    clock.advance(days=3650)
    assert status_with(anon_client, alice.api_key) == 200


def test_without_api_token_ttl_days_a_token_from_the_endpoint_expires_after_30_days(
    fast_password_hashing, alice, anon_client, clock
):
    key = new_token(anon_client, name="login")

    clock.advance(days=30, seconds=-5)
    assert status_with(anon_client, key) == 200
    clock.advance(seconds=10)
    assert status_with(anon_client, key) == 401
    assert status_with(anon_client, alice.api_key) == 200  # create_token's: never expires


# --- At most API_MAX_TOKENS_PER_USER live tokens per user ------------------------------------------------


def test_past_the_bound_the_endpoint_answers_409_naming_revoke_tokens_and_makes_no_token(
    fast_password_hashing, alice, anon_client, settings
):
    settings.API_MAX_TOKENS_PER_USER = 3
    new_token(anon_client)
    new_token(anon_client)  # with the fixture's token, three

    response = anon_client.post(TOKEN, {"username": "alice", "password": "alice-password-123"}, format="json")

    assert response.status_code == 409
    assert response.json() == {
        "detail": "'alice' already holds 3 live API tokens, the most API_MAX_TOKENS_PER_USER allows; revoke some "
        "first ('manage.py revoke_tokens alice --name NAME', or in the admin)."
    }
    assert ApiToken.objects.filter(user=alice).count() == 3


def test_expired_tokens_do_not_count_against_the_bound(fast_password_hashing, alice, anon_client, settings, clock):
    settings.API_MAX_TOKENS_PER_USER = 2
    settings.API_TOKEN_TTL_DAYS = 1
    new_token(anon_client)
    clock.advance(days=2)

    assert status_with(anon_client, new_token(anon_client)) == 200
    assert ApiToken.objects.filter(user=alice).count() == 3


def test_the_bound_holds_for_create_token_with_a_one_line_error(alice, settings):
    settings.API_MAX_TOKENS_PER_USER = 1

    with pytest.raises(CommandError, match=r"^'alice' already holds 1 live API tokens.*revoke_tokens alice"):
        call_command("create_token", "alice", "--name", "ci", stdout=StringIO(), stderr=StringIO())
    assert list(ApiToken.objects.filter(user=alice).values_list("name", flat=True)) == ["tests"]


def test_a_bound_of_0_lets_a_user_hold_any_number_of_tokens(fast_password_hashing, alice, anon_client, settings):
    settings.API_MAX_TOKENS_PER_USER = 0
    keys = [new_token(anon_client) for _ in range(3)]
    assert [status_with(anon_client, key) for key in keys] == [200, 200, 200]


@pytest.mark.postgres(reason="concurrent transactions and a row lock")
@pytest.mark.usefixtures("modes_restored_after_flush")
class TestTokensMadeAtOnce:
    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_two_tokens_made_at_once_at_the_bounds_edge_leave_the_user_at_the_bound(self, settings, at_once):
        settings.API_MAX_TOKENS_PER_USER = 1
        user = get_user_model().objects.create_user(username="racer")
        refused = []

        def make(name):
            def run():
                try:
                    create_token(user=user, name=name)
                except TooManyTokens:
                    refused.append(name)

            return run

        at_once(make("one"), make("two"))

        assert len(refused) == 1
        assert ApiToken.objects.filter(user=user).count() == 1


# --- Last use, written at most once a minute ------------------------------------------------------------


def test_the_last_use_is_written_at_most_once_a_minute(alice, alice_client, clock, django_assert_num_queries):
    assert ApiToken.objects.get(user=alice).last_used_at is None
    alice_client.get(MODES)  # loads the published revision into this process
    first_use = ApiToken.objects.get(user=alice).last_used_at
    assert abs(first_use - timezone.now()) < timedelta(seconds=5)

    clock.advance(seconds=59)
    with django_assert_num_queries(2):  # the token with its user (one query), the catalog's head row: no write
        assert alice_client.get(MODES).status_code == 200
    assert ApiToken.objects.get(user=alice).last_used_at == first_use

    clock.advance(seconds=2)
    with django_assert_num_queries(3):  # the token with its user, one UPDATE of its last use, the head row
        assert alice_client.get(MODES).status_code == 200
    with django_assert_num_queries(2):
        assert alice_client.get(MODES).status_code == 200
    assert ApiToken.objects.get(user=alice).last_used_at - first_use >= timedelta(seconds=61)


def test_a_refused_token_is_not_marked_as_used(alice, anon_client, clock):
    clock.advance(days=1)
    ApiToken.objects.filter(user=alice).update(expiry=timezone.now() - timedelta(seconds=1))
    assert status_with(anon_client, alice.api_key) == 401
    assert ApiToken.objects.get(user=alice).last_used_at is None
