"""Refusals about sessions, raised by the services and answered by each way of serving (aptix_site.service_errors)."""

from aptix_site.service_errors import NotFound


class SessionNotFound(NotFound):
    """Also the answer for another user's session: the two must be indistinguishable."""

    def __init__(self, session_id):
        super().__init__(f"No session {session_id} was found for you.")
