"""manage.py create_token and revoke_tokens: named API tokens for an existing user, and their revocation."""

import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from accounts.models import ApiToken

pytestmark = pytest.mark.django_db


def run(command, *args):
    out, err = StringIO(), StringIO()
    call_command(command, *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def refusal(command, *args):
    before = sorted(ApiToken.objects.values_list("digest", flat=True))
    with pytest.raises(CommandError) as caught:
        run(command, *args)
    assert sorted(ApiToken.objects.values_list("digest", flat=True)) == before
    return str(caught.value)


def test_create_token_prints_the_key_alone_on_stdout_and_the_api_accepts_it(alice, anon_client):
    out, err = run("create_token", "alice", "--name", "planner")

    assert re.fullmatch(r"[0-9a-f]{64}\n", out)
    token = ApiToken.objects.get(name="planner")
    assert err == f"Created token 'planner' ({token.token_key}…) of 'alice'; it never expires. Its key:\n"
    assert out.startswith(token.token_key)
    assert anon_client.get("/api/modes/", HTTP_AUTHORIZATION=f"Token {out.strip()}").status_code == 200
    assert anon_client.get("/api/modes/", HTTP_AUTHORIZATION=f"Token {alice.api_key}").status_code == 200


def test_create_token_says_when_the_token_expires(alice):
    _, err = run("create_token", "alice", "--name", "ci", "--expires-days", "7")
    expiry = ApiToken.objects.get(name="ci").expiry
    assert err.endswith(f"it expires {expiry:%Y-%m-%d %H:%M} UTC. Its key:\n")


@pytest.mark.parametrize(
    "args, message",
    [
        (["nobody", "--name", "x"], "No user is named 'nobody'."),
        *(
            (["alice", "--name", "x", "--expires-days", days],
             f"Error: argument --expires-days: must be a whole number from 1 to 36500; it is {days!r}.")
            for days in ("0", "-3", "+5", "36501", "3000000", "1" * 400)  # past 36,500 days: past datetime's end
        ),
        (["alice", "--name", " "], "--name must be 1 to 100 characters; it is ' '."),
        (["alice", "--name", "x" * 101], f"--name must be 1 to 100 characters; it is {'x' * 101!r}."),
    ],
    ids=["unknown-user", "zero-days", "negative-days", "plus-days", "too-many-days", "past-datetime", "huge-days",
         "blank-name", "long-name"],
)
def test_create_token_refuses_bad_input_in_one_line_and_creates_nothing(alice, args, message):
    assert refusal("create_token", *args) == message


def test_revoke_tokens_with_a_name_revokes_only_those_and_says_how_many(alice, anon_client):
    run("create_token", "alice", "--name", "planner")
    run("create_token", "alice", "--name", "planner")
    kept, _ = run("create_token", "alice", "--name", "writer")

    out, _ = run("revoke_tokens", "alice", "--name", "planner")

    assert out == "Revoked 2 tokens named 'planner' of 'alice'.\n"
    assert sorted(ApiToken.objects.values_list("name", flat=True)) == ["tests", "writer"]
    assert anon_client.get("/api/modes/", HTTP_AUTHORIZATION=f"Token {kept.strip()}").status_code == 200


def test_revoke_tokens_without_a_name_revokes_all_of_the_users_tokens(alice, bob):
    run("create_token", "alice", "--name", "planner")

    out, _ = run("revoke_tokens", "alice")

    assert out == "Revoked 2 tokens of 'alice'.\n"
    assert list(ApiToken.objects.values_list("user__username", flat=True)) == ["bob"]
    assert run("revoke_tokens", "alice") == ("Revoked 0 tokens of 'alice'.\n", "")


def test_revoke_tokens_refuses_an_unknown_user_or_name_in_one_line(alice):
    assert refusal("revoke_tokens", "nobody") == "No user is named 'nobody'."
    assert refusal("revoke_tokens", "alice", "--name", "plannr") == (
        "'alice' has no token named 'plannr' (its tokens: 'tests')."
    )


def test_the_commands_find_a_user_by_the_name_as_django_stores_it_and_name_the_stored_one(django_user_model):
    # The login form and create_agent_user take names NFKC-normalized, as Django stores them: 'ﬁle' is 'file'.
    django_user_model.objects.create_user(username="file")
    out, err = run("create_token", "\ufb01le", "--name", "ci")
    assert ApiToken.objects.get(name="ci").user.username == "file"
    assert err.endswith("of 'file'; it never expires. Its key:\n")
    assert run("revoke_tokens", "\ufb01le") == ("Revoked 1 token of 'file'.\n", "")


def test_create_token_refuses_an_inactive_user_in_one_line_saying_to_activate_them_and_creates_nothing(alice):
    # Their tokens answer 401 while they are inactive: a key printed for them would never work.
    alice.is_active = False
    alice.save()
    assert refusal("create_token", "alice", "--name", "planner") == (
        "User 'alice' is inactive, so a token of theirs would be refused (401); make them active first (in the admin: "
        "Users, then Active)."
    )


def test_revoke_tokens_revokes_the_tokens_of_an_inactive_user_too(alice):
    alice.is_active = False
    alice.save()
    assert run("revoke_tokens", "alice") == ("Revoked 1 token of 'alice'.\n", "")
    assert not ApiToken.objects.exists()
