"""Organizations (a user belongs to at most one) and API tokens (several per user, each named, kept as a digest)."""

from django.conf import settings
from django.db import models
from knox.models import AbstractAuthToken
from knox.settings import CONSTANTS


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
    """The user's organization, or None for a user outside any organization: one query."""
    membership = Membership.objects.filter(user_id=user.pk).select_related("organization").first()
    return membership.organization if membership else None


class ApiToken(AbstractAuthToken):
    """
    An API key, stored as knox stores it: the sha512 digest of the key and the key's first 15 characters (token_key,
    to tell tokens apart), never the key itself; one per agent back-end, told apart by name.
    """

    # knox makes the digest the primary key; a number is, here, so that the admin's links and forms (which
    # carry the primary key) never show the digest. Tokens are still found by digest, through its unique index.
    id = models.BigAutoField(primary_key=True)
    digest = models.CharField(max_length=CONSTANTS.DIGEST_LENGTH, unique=True)
    name = models.CharField(max_length=100, help_text="What the token is for, such as the agent back-end using it.")
    last_used_at = models.DateTimeField(
        null=True, blank=True, help_text="Written at most once a minute, so up to a minute behind."
    )

    class Meta:
        verbose_name = "API token"
        ordering = ["-created"]
        # The admin lists tokens newest first: with 100,000 of them, from an index.
        indexes = [models.Index(fields=["created"], name="apitoken_created")]

    def __str__(self):
        # knox's own names the digest; this names what a person can match against the key they hold.
        return f"{self.name} ({self.token_key}…)"
