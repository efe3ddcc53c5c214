"""What the accounts commands share: the user a command names, or a one-line error saying there is none."""

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError


def user_named(*, username: str):
    User = get_user_model()
    user = User.objects.filter(**{User.USERNAME_FIELD: username}).first()
    if user is None:
        raise CommandError(f"No user is named {username!r}.")
    return user
