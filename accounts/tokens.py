"""
API tokens: created for an active user only, with a key shown once, at most API_MAX_TOKENS_PER_USER live ones per
user, found by the key's digest in one query per request, marked as used at most once a minute, and revoked one name
at a time, all at once, or when the user's password changes.
"""

import re
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import is_password_usable
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from knox.crypto import hash_token

from aptix_site.service_errors import Conflict

from .models import ApiToken

# knox's keys are 64 hexadecimal digits; the keys of DRF's tokens, migrated, 40.
KEY_FORMAT = re.compile(r"[0-9a-f]{64}|[0-9a-f]{40}")
LAST_USED_PRECISION = timedelta(minutes=1)


class TooManyTokens(Conflict):
    def __init__(self, user, limit: int):
        username = user.get_username()
        super().__init__(
            f"{username!r} already holds {limit} live API tokens, the most API_MAX_TOKENS_PER_USER allows; revoke "
            f"some first ('manage.py revoke_tokens {username} --name NAME', or in the admin)."
        )


class InactiveUser(Conflict):
    def __init__(self, user):
        super().__init__(
            f"User {user.get_username()!r} is inactive, so a token of theirs would be refused (401); make them active "
            "first (in the admin: Users, then Active)."
        )


def create_token(*, user, name: str, expires_in_days: int | None = None) -> tuple[ApiToken, str]:
    """
    A new token of the user, and its key: the only time the key is known, as only its digest is stored.
    InactiveUser for a user made inactive: authentication refuses their tokens, so a key printed for them would
    only ever answer 401. TooManyTokens if the user holds API_MAX_TOKENS_PER_USER unexpired tokens already.
    """
    if not user.is_active:
        raise InactiveUser(user)
    days = expires_in_days or settings.API_TOKEN_TTL_DAYS
    with transaction.atomic():
        if limit := settings.API_MAX_TOKENS_PER_USER:
            # The user's row locked: two creations at once for one user queue, so neither passes the bound.
            get_user_model()._default_manager.select_for_update().filter(pk=user.pk).values_list("pk").get()
            live = ApiToken.objects.filter(Q(expiry__isnull=True) | Q(expiry__gt=timezone.now()), user=user)
            if live.count() >= limit:
                raise TooManyTokens(user, limit)
        return ApiToken.objects.create(user=user, name=name, expiry=timedelta(days=days) if days else None)


def replace_token(*, user, name: str) -> tuple[ApiToken, str]:
    """create_token, ending the user's tokens of that name first: a client that asks for its token at each start
    keeps one, not one more per start."""
    with transaction.atomic():
        revoke_tokens(user=user, name=name)
        return create_token(user=user, name=name)


def revoke_tokens(*, user, name: str | None = None) -> int:
    """Deletes the user's tokens, or only those of that name; how many there were."""
    tokens = ApiToken.objects.filter(user=user)
    if name is not None:
        tokens = tokens.filter(name=name)
    return tokens.delete()[0]


def revoke_tokens_when_the_password_changes(sender, instance, raw=False, update_fields=None, **kwargs):
    """
    A pre_save receiver on the user model: a new password, or a password disabled, ends every token of the user.
    AbstractBaseUser.set_password keeps the new password in _password until save() has called
    password_changed; a login that only re-hashes the same password (a newer hasher) clears _password before
    it saves, so that keeps the tokens, as it should. set_unusable_password (the admin's "disable
    password-based authentication") leaves _password alone: the stored password is read, only then, to tell
    whether it was usable. Revoked before the save, in its transaction where it has one: a save that fails
    after it has lost the tokens, never kept them past a new password.
    """
    if raw or instance.pk is None or (update_fields is not None and "password" not in update_fields):
        return
    if getattr(instance, "_password", None) is not None or (
        not instance.has_usable_password() and _stored_password_is_usable(instance)
    ):
        revoke_tokens(user=instance)


def _stored_password_is_usable(user) -> bool:
    stored = type(user)._default_manager.filter(pk=user.pk).values_list("password", flat=True).first()
    return stored is not None and is_password_usable(stored)


def token_of_key(*, key: str) -> ApiToken | None:
    """The unexpired token of that key, with its user, in one query (every API request makes it); or None."""
    if not KEY_FORMAT.fullmatch(key):
        return None
    try:  # by the unique digest alone, the expiry checked here: the query every request makes compiles fastest so
        token = ApiToken.objects.select_related("user").get(digest=hash_token(key))
    except ApiToken.DoesNotExist:
        return None
    return None if token.expiry is not None and token.expiry <= timezone.now() else token


def mark_used(*, token: ApiToken) -> None:
    """Records that the token was used now, if last_used_at is more than a minute old: one UPDATE a minute at most."""
    now = timezone.now()
    if token.last_used_at is not None and token.last_used_at >= now - LAST_USED_PRECISION:
        return
    # The condition again, in the UPDATE: requests of other workers may have written it since the lookup.
    ApiToken.objects.filter(
        Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - LAST_USED_PRECISION), digest=token.digest
    ).update(last_used_at=now)

