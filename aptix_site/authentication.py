"""Token authentication for the API.

Kept apart from aptix_site.api: DRF imports authentication classes while
rest_framework.views is still loading, so this module must not import views.
"""

from django.db.models.expressions import RawSQL
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from modes.catalog import VERSION_SQL, note_version


class StrictTokenAuthentication(TokenAuthentication):
    """
    Refuses a malformed token (401) before any lookup. The query that finds the
    token also loads the user's organization, which every tool call needs, and
    the catalog version, which most requests check: one round trip for all three.
    """

    def authenticate_credentials(self, key):
        if len(key) != 40 or not (key.isascii() and key.isalnum()):
            raise exceptions.AuthenticationFailed("Invalid token.")
        model = self.get_model()
        try:
            token = (
                model.objects.select_related("user__membership__organization")
                .annotate(catalog_version=RawSQL(VERSION_SQL, ()))
                .get(key=key)
            )
        except model.DoesNotExist:
            raise exceptions.AuthenticationFailed("Invalid token.") from None
        note_version(token.catalog_version)
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        return token.user, token
