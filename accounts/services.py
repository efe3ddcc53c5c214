"""
Writes to accounts: an account for an agent back-end, which signs in with an API token only; the refusal of a write
naming an organization that a deletion removed meanwhile.
"""

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from aptix_site.service_errors import Conflict, ServiceError

from .models import Membership, Organization
from .tokens import create_token


class AccountRefused(ServiceError, ValueError):
    """An account that cannot be created as asked; the message says why and what to do instead."""


def create_agent_user(*, username: str, organization_slug: str | None):
    """
    A user nobody can log in as, in the organization of that slug if given, and its token's key; all or none. The
    name is taken as Django stores it (NFKC: "ﬁle" is "file"), so the user and the messages name the same user.
    """
    User = get_user_model()
    username = User.normalize_username(username)
    exists = AccountRefused(
        f"A user named {username!r} exists already; 'manage.py create_token {username} --name NAME' gives it a new "
        "token."
    )
    if User.objects.filter(**{User.USERNAME_FIELD: username}).exists():
        raise exists
    organization = None
    if organization_slug is not None:
        organization = Organization.objects.filter(slug=organization_slug).first()
        if organization is None:
            slugs = ", ".join(Organization.objects.values_list("slug", flat=True)) or "none yet"
            raise AccountRefused(
                f"No organization has the slug {organization_slug!r} (there are: {slugs}); add it in the admin first."
            )
    user = User(**{User.USERNAME_FIELD: username})
    user.set_unusable_password()
    try:
        user.full_clean(exclude=["password"])
    except ValidationError as error:
        raise AccountRefused(" ".join(error.messages)) from None
    with transaction.atomic():
        try:
            with transaction.atomic():
                user.save()
        except IntegrityError:  # created meanwhile, by a run beside this one
            raise exists from None
        if organization is not None:
            Membership.objects.create(user=user, organization=organization)
        _, key = create_token(user=user, name="agent")
        return user, key


class OrganizationRemoved(Conflict):
    """A write naming the user's organization, which a deletion removed while it was being made; nothing changed."""

    message = (
        "Your organization was deleted while this was being written, so nothing changed. Try again: it is then done "
        "outside any organization."
    )
