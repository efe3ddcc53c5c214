"""Token authentication for the API.

Kept apart from aptix_site.api: DRF imports authentication classes while
rest_framework.views is still loading, so this module must not import views.
"""

from functools import cache

from django.contrib.auth import get_user_model
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication


class StrictTokenAuthentication(TokenAuthentication):
    """
    DRF's token authentication, with two differences. A malformed token is refused (401) before any lookup.
    And the lookup, DRF's own (the token with its user), runs SQL written once: every API request makes it,
    and building it through the ORM each time took longer than the database took to run it
    (benchmarks/RESULTS.md).
    """

    def authenticate_credentials(self, key):
        if len(key) != 40 or not (key.isascii() and key.isalnum()):
            raise exceptions.AuthenticationFailed("Invalid token.")
        token_model = self.get_model()
        found = list(get_user_model().objects.raw(_token_user_sql(token_model), [key]))
        if not found:
            raise exceptions.AuthenticationFailed("Invalid token.")
        user = found[0]
        if not user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        # The token as the ORM would load it with only these fields; the others load if read.
        token = token_model.from_db(user._state.db, ["key", "user_id"], [key, user.pk])
        token.user = user
        return user, token


@cache
def _token_user_sql(token_model) -> str:
    """The token's user, found by the token's key."""
    user_model = get_user_model()
    token_to_user = token_model._meta.get_field("user")
    columns = ", ".join(f'u."{field.column}"' for field in user_model._meta.concrete_fields)
    return (
        f'SELECT {columns} FROM "{user_model._meta.db_table}" u JOIN "{token_model._meta.db_table}" t '
        f'ON t."{token_to_user.column}" = u."{token_to_user.target_field.column}" '
        f'WHERE t."{token_model._meta.pk.column}" = %s'
    )
