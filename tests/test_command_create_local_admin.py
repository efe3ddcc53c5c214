"""manage.py create_local_admin: the local development login and API token, DEBUG only."""

import re
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from rest_framework.authtoken.models import Token

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
    assert not Token.objects.exists()


def test_creates_admin_and_token_once_and_shows_the_password_only_the_first_time(settings):
    settings.DEBUG = True
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

    first = create_local_admin()

    match = re.fullmatch(
        r"Local admin login: admin / (?P<password>\S+)  \(shown once; /admin/\)\n"
        r"API token: (?P<token>[0-9a-f]{40})  \(Authorization: Token (?P=token)\)\n",
        first,
    )
    assert match, first
    user = get_user_model().objects.get(username="admin")
    assert user.is_superuser and user.is_staff
    assert user.check_password(match["password"])
    assert Token.objects.get(user=user).key == match["token"]

    second = create_local_admin()

    assert second == (
        "Local admin login: admin (exists; password unchanged)\n"
        f"API token: {match['token']}  (Authorization: Token {match['token']})\n"
    )
    assert match["password"] not in second
    assert get_user_model().objects.filter(username="admin").count() == 1
    assert Token.objects.count() == 1
    user.refresh_from_db()
    assert user.check_password(match["password"])
