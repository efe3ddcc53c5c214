"""Writes to agent sessions: creating them and changing their mode (the only way a mode changes)."""

from django.db import transaction

from modes.catalog import get_default_mode, get_mode
from modes.models import AgentMode

from .models import AgentSession, ModeChange
from .selectors import get_owned_session


def create_session(*, owner, org, mode_key: str | None = None, title: str = "") -> AgentSession:
    """A new session for owner, in mode_key or else the default mode. UnknownModeError for a bad key."""
    mode = get_mode(mode_key) if mode_key else get_default_mode()
    return AgentSession.objects.create(owner=owner, org=org, mode=mode, title=title)


def set_session_mode(*, session_id, mode: AgentMode, reason: str, org, user, branch: bool = False) -> ModeChange:
    """
    Move the user's session to mode and record the change, in one transaction.

    The session row is locked first, so concurrent changes queue: each audit row's
    from_mode is the mode the session really had, and the session ends in the
    mode of its last audit row. With branch=True a new session in the target mode
    is created as a child of this one. Raises AgentSession.DoesNotExist for a
    session that is not the user's.
    """
    with transaction.atomic():
        session = get_owned_session(session_id=session_id, user=user, for_update=True)
        branch_session = None
        if branch:
            branch_session = AgentSession.objects.create(
                owner=user, org_id=session.org_id, mode=mode, parent=session, title=session.title
            )
        change = ModeChange.objects.create(
            session=session,
            from_mode_id=session.mode_id,
            to_mode=mode,
            reason=reason,
            branch=branch,
            branch_session=branch_session,
            changed_by=user,
            org=org,
        )
        session.mode = mode
        session.save(update_fields=["mode", "updated_at"])
    return change
