"""
Token authentication for the API, with the accounts' API tokens (accounts.tokens). It must not import views:
DRF imports authentication classes while rest_framework.views is still loading.
"""

from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from accounts.tokens import mark_used, token_of_key


class StrictTokenAuthentication(TokenAuthentication):
    """
    DRF's parsing of `Token <key>`, with our API tokens (knox's model): one query, an expired token refused, not
    deleted. knox's own TokenAuthentication makes a second query per request and deletes expired tokens as it
    reads (docs/security.md, "Why the lookup is our own", has the figures).
    """

    def authenticate_credentials(self, key):
        token = token_of_key(key=key)
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid token.")
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        mark_used(token=token)
        return token.user, token
