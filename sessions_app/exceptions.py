"""API errors about sessions."""

from rest_framework import exceptions


class SessionNotFound(exceptions.NotFound):
    """Also the answer for another user's session: the two must be indistinguishable."""

    default_detail = "No such session."
    default_code = "unknown_session"
