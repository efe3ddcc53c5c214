"""Reads of agent sessions, always scoped to their owner."""

import uuid

from modes.catalog import get_mode_by_id

from .models import AgentSession, ModeChange


class InvalidSessionId(ValueError):
    def __init__(self, value):
        super().__init__(f"{value!r} is not a session id; session ids are UUIDs.")


def get_owned_session(*, session_id, user) -> AgentSession:
    """The user's session; AgentSession.DoesNotExist for anyone else's, exactly as for a missing one."""
    try:
        pk = uuid.UUID(str(session_id))
    except ValueError:
        raise InvalidSessionId(session_id) from None
    session = AgentSession.objects.get(pk=pk, owner=user)
    session.mode = get_mode_by_id(session.mode_id)  # from the catalog snapshot, rather than a join
    return session


def sessions_of(*, user):
    return AgentSession.objects.filter(owner=user).select_related("mode", "org")


def mode_changes_of(*, session: AgentSession):
    return ModeChange.objects.filter(session=session).select_related("from_mode", "to_mode", "changed_by")
