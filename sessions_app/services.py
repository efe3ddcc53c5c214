"""Writes to agent sessions: creating them and changing their mode (the only way a mode changes)."""

from django.db import connection, transaction

from modes.catalog import get_default_mode, get_mode
from modes.models import AgentMode

from .models import AgentSession, ModeChange
from .selectors import get_owned_session, parse_session_id

# agent_change_mode's hot path on PostgreSQL: one statement locks the user's session row, moves it, and writes
# the audit row from the mode the locked row had. A single statement is atomic by itself, so it needs no
# BEGIN and COMMIT, and it makes one round trip where the ORM makes five (benchmarks/RESULTS.md). The FOR UPDATE
# in the subquery makes a concurrent change wait and then read the row the first one wrote, as the ORM path's
# lock does. The time is read once the lock is held (clock_timestamp(), not the statement's start), and never
# before the session's last change, so a session's audit rows are in time order and updated_at only moves on.
MOVE_SESSION_SQL = f"""
WITH moved AS (
    UPDATE {AgentSession._meta.db_table} AS session
    SET mode_id = %(mode)s, updated_at = GREATEST(clock_timestamp(), before.updated_at)
    FROM (
        SELECT id, mode_id, updated_at FROM {AgentSession._meta.db_table}
        WHERE id = %(session)s AND owner_id = %(user)s FOR UPDATE
    ) AS before
    WHERE session.id = before.id
    RETURNING before.mode_id, session.updated_at
)
INSERT INTO {ModeChange._meta.db_table}
    (session_id, from_mode_id, to_mode_id, reason, branch, branch_session_id, changed_by_id, org_id, changed_at)
SELECT %(session)s, mode_id, %(mode)s, %(reason)s, false, NULL, %(user)s, %(org)s, updated_at FROM moved
RETURNING {", ".join(field.column for field in ModeChange._meta.concrete_fields)}
"""
MOVE_SESSION_RETURNS = [field.attname for field in ModeChange._meta.concrete_fields]


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
    if not branch and connection.vendor == "postgresql":
        return _move_session_in_one_statement(session_id=session_id, mode=mode, reason=reason, org=org, user=user)
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


def _move_session_in_one_statement(*, session_id, mode: AgentMode, reason: str, org, user) -> ModeChange:
    if org is not None and org.pk is None:  # as the ORM refuses to save a reference to an unsaved row
        raise ValueError("set_session_mode() needs a saved organization; this one has no id.")
    parameters = {
        "session": parse_session_id(session_id),
        "user": user.pk,
        "mode": mode.pk,
        "reason": reason,
        "org": org.pk if org is not None else None,
    }
    with connection.cursor() as cursor:
        cursor.execute(MOVE_SESSION_SQL, parameters)
        row = cursor.fetchone()
    if row is None:
        raise AgentSession.DoesNotExist(f"No session {session_id} of this user.")
    # On PostgreSQL, psycopg already gives these columns' Python types: Django applies no converters to them either.
    return ModeChange.from_db(connection.alias, MOVE_SESSION_RETURNS, row)
