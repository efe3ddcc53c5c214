"""Token authentication that refuses a malformed token (401) before looking it up.

Kept apart from aptix_site.api: DRF imports authentication classes while
rest_framework.views is still loading, so this module must not import views.
"""

from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication


class StrictTokenAuthentication(TokenAuthentication):
    """A malformed token is refused as invalid (401) before it is looked up."""

    def authenticate_credentials(self, key):
        if len(key) != 40 or not (key.isascii() and key.isalnum()):
            raise exceptions.AuthenticationFailed("Invalid token.")
        return super().authenticate_credentials(key)
