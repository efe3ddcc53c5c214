"""
Writes to accounts: an account for an agent back-end, which signs in with an API token only; deleting organizations,
and the refusal of a write naming one that a deletion removed meanwhile.
"""

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import ProtectedError

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
            if not organization_kept(organization=organization):
                raise AccountRefused(
                    f"The organization {organization_slug!r} was deleted while the account was being made; nothing "
                    "was created."
                )
            Membership.objects.create(user=user, organization=organization)
        _, key = create_token(user=user, name="agent")
        return user, key


class OrganizationInUse(Conflict):
    """An organization that a rollout or the mode-change audit names (PROTECT); nothing was deleted."""


class OrganizationRemoved(Conflict):
    """A write naming the user's organization, which a deletion removed while it was being made; nothing changed."""

    message = (
        "Your organization was deleted while this was being written, so nothing changed. Try again: it is then done "
        "outside any organization."
    )


def organization_kept(*, organization: Organization) -> bool:
    """
    Whether organization still exists, locked (FOR NO KEY UPDATE, as staging locks those it names) until the caller's
    transaction ends, for a row about to name it (a membership): a deletion under way is waited for, and then it is
    gone; one that starts later waits for that row and deletes it with the organization. Unlocked, a deletion that
    committed meanwhile broke the row's foreign key at commit: a 500 in the admin. A mode change, on the agents' hot
    path, takes no such lock: it answers the broken key instead (sessions_app.services), free when no deletion runs.
    """
    return Organization.objects.select_for_update(no_key=True).filter(pk=organization.pk).exists()


def organizations_to_delete(*, organizations) -> list[Organization]:
    """
    Those of organizations that still exist, locked (FOR UPDATE) until the caller's transaction ends: taken before
    anything naming them is looked for, so that what is found stays true until they are deleted. A rollout staged to
    one (modes.rollouts locks the organizations it names), or a mode change or session written in one (their foreign
    keys' checks lock it too), committed first is found: PROTECT refuses the deletion, SET_NULL empties the session's
    organization. One written after waits for the deletion, then finds the organization gone (InvalidStaging,
    OrganizationRemoved). Unlocked, such a write committed between the search and the DELETE failed the deletion at
    commit: a 500 in the admin.
    """
    pks = [organization.pk for organization in organizations]
    return list(Organization.objects.select_for_update().filter(pk__in=pks).order_by("pk"))


def delete_organizations(*, organizations) -> None:
    """
    All of organizations or none: their memberships go with them, sessions in them keep no organization.
    OrganizationInUse if a rollout or the mode-change audit names one.
    """
    with transaction.atomic():
        for organization in organizations_to_delete(organizations=organizations):
            try:
                organization.delete()
            except ProtectedError:
                raise OrganizationInUse(
                    f"The organization '{organization.slug}' is named by a catalog rollout or by the mode-change audit, "
                    "which keep whom they served: it cannot be deleted."
                ) from None
