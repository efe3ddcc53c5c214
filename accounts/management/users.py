"""What the accounts commands share: the user a command names, or a one-line error saying there is none."""

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError


def user_named(*, username: str):
    """The user of that name as Django stores names (NFKC: "ﬁle" is "file"), as its login form reads them."""
    User = get_user_model()
    user = User.objects.filter(**{User.USERNAME_FIELD: User.normalize_username(username)}).first()
    if user is None:
        raise CommandError(f"No user is named {username!r}.")
    return user


def acting_user(*, username: str):
    """The user a command acts as (--user): one who could sign in, as over the API, where an inactive one cannot."""
    user = user_named(username=username)
    if not user.is_active:
        raise CommandError(f"User {username!r} is inactive, so nothing is done as them; make them active first.")
    return user
