"""Organizations: a user belongs to at most one, and sessions and audit rows record it."""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import models


class Organization(models.Model):
    name = models.CharField(max_length=200)
    slug = models.SlugField(unique=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class Membership(models.Model):
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="membership")
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="memberships")

    def __str__(self):
        return f"{self.user} in {self.organization}"


def organization_of(user) -> Organization | None:
    """The user's organization, or None for a user outside any organization."""
    if get_user_model().membership.is_cached(user):
        try:
            return user.membership.organization
        except Membership.DoesNotExist:
            return None
    membership = Membership.objects.filter(user_id=user.pk).select_related("organization").first()
    return membership.organization if membership else None
