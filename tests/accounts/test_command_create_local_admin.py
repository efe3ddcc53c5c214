"""manage.py create_local_admin: the local development login, and a fresh API token at each run, DEBUG only."""

import re
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from accounts.models import ApiToken
from accounts.tokens import create_token

pytestmark = pytest.mark.django_db


def create_local_admin():
    out = StringIO()
    call_command("create_local_admin", stdout=out, stderr=StringIO())
    return out.getvalue()


def test_refuses_with_debug_off(settings):
    settings.DEBUG = False
    with pytest.raises(CommandError) as caught:
        create_local_admin()
    assert str(caught.value) == "create_local_admin is for local development; it refuses to run with DEBUG off."
    assert not get_user_model().objects.filter(username="admin").exists()
    assert not ApiToken.objects.exists()


def test_creates_the_admin_once_and_a_new_token_at_each_run_revoking_the_last(settings, anon_client):
    settings.DEBUG = True
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

    first = create_local_admin()

    match = re.fullmatch(
        r"Local admin login: admin / (?P<password>\S+)  \(shown once; /admin/\)\n"
        r"API token: (?P<token>[0-9a-f]{64})  \(Authorization: Token (?P=token); a new one at each start\)\n",
        first,
    )
    assert match, first
    user = get_user_model().objects.get(username="admin")
    assert user.is_superuser and user.is_staff
    assert user.check_password(match["password"])
    assert anon_client.get("/api/modes/", HTTP_AUTHORIZATION=f"Token {match['token']}").status_code == 200

    second = create_local_admin()

    again = re.fullmatch(
        r"Local admin login: admin \(exists; password unchanged\)\n"
        r"API token: (?P<token>[0-9a-f]{64})  \(Authorization: Token (?P=token); a new one at each start\)\n",
        second,
    )
    assert again, second
    assert match["password"] not in second
    assert anon_client.get("/api/modes/", HTTP_AUTHORIZATION=f"Token {match['token']}").status_code == 401
    assert anon_client.get("/api/modes/", HTTP_AUTHORIZATION=f"Token {again['token']}").status_code == 200
    assert get_user_model().objects.filter(username="admin").count() == 1
    assert list(ApiToken.objects.values_list("name", flat=True)) == ["local"]
    user.refresh_from_db()
    assert user.check_password(match["password"])


def test_keeps_the_admins_other_tokens(settings, anon_client):
    settings.DEBUG = True
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    create_local_admin()
    _, key = create_token(user=get_user_model().objects.get(username="admin"), name="script")

    create_local_admin()

    assert anon_client.get("/api/modes/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200
    assert sorted(ApiToken.objects.values_list("name", flat=True)) == ["local", "script"]


def test_refuses_in_one_line_when_the_admin_was_made_inactive_keeping_its_token(settings):
    settings.DEBUG = True
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    create_local_admin()
    kept = ApiToken.objects.get().digest
    get_user_model().objects.filter(username="admin").update(is_active=False)
    with pytest.raises(CommandError) as caught:
        create_local_admin()
    assert str(caught.value) == (
        "User 'admin' is inactive, so a token of theirs would be refused (401); make them active first (in the admin: "
        "Users, then Active)."
    )
    assert list(ApiToken.objects.values_list("digest", flat=True)) == [kept]
