"""A session that is not yours is not found: the one place that says so, for every way of serving."""

from aptix_site.service_errors import NotFound

from .models import AgentSession
from .selectors import InvalidSessionId, get_owned_session


class SessionNotFound(NotFound):
    """Also the answer for another user's session: the two must be indistinguishable."""

    def __init__(self, session_id):
        super().__init__(f"No session {session_id} was found for you.")


def owned_session(*, session_id, user, with_mode: bool = False) -> AgentSession:
    """The user's session; SessionNotFound alike for a missing one, anyone else's, and an id that is no UUID."""
    try:
        return get_owned_session(session_id=session_id, user=user, with_mode=with_mode)
    except (InvalidSessionId, AgentSession.DoesNotExist):
        raise SessionNotFound(session_id) from None
