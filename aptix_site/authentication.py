"""Token authentication for the API.

Kept apart from aptix_site.api: DRF imports authentication classes while
rest_framework.views is still loading, so this module must not import views.
"""

from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication


class StrictTokenAuthentication(TokenAuthentication):
    """
    Refuses a malformed token (401) before any lookup, and loads the user's
    organization in the same query as the token, since every tool call needs it.
    """

    def authenticate_credentials(self, key):
        if len(key) != 40 or not (key.isascii() and key.isalnum()):
            raise exceptions.AuthenticationFailed("Invalid token.")
        model = self.get_model()
        try:
            token = model.objects.select_related("user__membership__organization").get(key=key)
        except model.DoesNotExist:
            raise exceptions.AuthenticationFailed("Invalid token.") from None
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        return token.user, token
