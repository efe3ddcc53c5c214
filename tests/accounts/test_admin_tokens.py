"""
The admin's API tokens: listed by name, prefix, owner, created, last used and expiry, never with a key or a
digest; none added there; deleting one revokes it, for staff with the delete permission only.
"""

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client
from knox.models import AuthToken

from accounts.models import ApiToken

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/accounts/apitoken/"


def staff_with(*codenames) -> Client:
    user = get_user_model().objects.create_user(username="staffer", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    client = Client()
    client.force_login(user)
    return client


def test_the_changelist_shows_name_prefix_and_owner_never_the_key_or_the_digest(
    fast_password_hashing, alice, bob, admin_client
):
    token = ApiToken.objects.get(user=alice)

    page = admin_client.get(CHANGELIST).content.decode()

    for shown in (token.name, f"{token.token_key}…", "alice", "bob", "Last used at", "Expiry"):
        assert shown in page
    for key in (alice.api_key, bob.api_key):
        assert key not in page
    for digest in ApiToken.objects.values_list("digest", flat=True):
        assert digest not in page


def test_a_tokens_page_shows_neither_its_key_nor_its_digest(fast_password_hashing, alice, admin_client):
    token = ApiToken.objects.get(user=alice)
    page = admin_client.get(f"{CHANGELIST}{token.pk}/change/")
    assert page.status_code == 200
    assert alice.api_key not in page.content.decode()
    assert token.digest not in page.content.decode()


def test_no_token_is_added_in_the_admin_not_even_by_a_superuser(fast_password_hashing, admin_client):
    assert f'href="{CHANGELIST}add/"' not in admin_client.get(CHANGELIST).content.decode()
    assert admin_client.get(f"{CHANGELIST}add/").status_code == 403
    assert not ApiToken.objects.exists()


def test_knox_registers_no_admin_of_its_own():
    # knox registers its AuthToken; the admin skips a swapped-out model (KNOX_TOKEN_MODEL), which no table backs.
    assert not admin.site.is_registered(AuthToken)
    assert admin.site.is_registered(ApiToken)


def test_view_only_staff_see_the_tokens_and_cannot_revoke_one(alice, anon_client):
    client = staff_with("view_apitoken")
    token = ApiToken.objects.get(user=alice)
    page = client.get(CHANGELIST)
    assert page.status_code == 200
    assert "delete_selected" not in page.content.decode()

    assert client.post(f"{CHANGELIST}{token.pk}/delete/", {"post": "yes"}).status_code == 403
    response = client.post(CHANGELIST, {"action": "delete_selected", "_selected_action": [token.pk], "post": "yes"})

    assert response.status_code == 200  # the list again: the action is not one this user has
    assert ApiToken.objects.filter(pk=token.pk).exists()
    assert anon_client.get("/api/modes/", HTTP_AUTHORIZATION=f"Token {alice.api_key}").status_code == 200


def test_deleting_a_token_in_the_admin_revokes_it(alice, bob, anon_client):
    client = staff_with("view_apitoken", "delete_apitoken")
    token = ApiToken.objects.get(user=alice)

    response = client.post(f"{CHANGELIST}{token.pk}/delete/", {"post": "yes"})

    assert response.status_code == 302
    assert anon_client.get("/api/modes/", HTTP_AUTHORIZATION=f"Token {alice.api_key}").status_code == 401
    assert anon_client.get("/api/modes/", HTTP_AUTHORIZATION=f"Token {bob.api_key}").status_code == 200
