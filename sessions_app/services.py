"""Writes to agent sessions: creating them and changing their mode (the only way a mode changes)."""

from contextlib import nullcontext

from django.db import connection, transaction
from django.utils import timezone

from accounts.models import Membership
from aptix_site.database import bounds_per_transaction
from modes.catalog import STATE_TABLE, current_catalog, mode_for_session
from modes.models import AgentMode

from .models import AgentSession, ModeChange, ModeChangeRefusal
from .selectors import get_owned_session, parse_session_id

SESSIONS = AgentSession._meta.db_table
AUDIT_COLUMNS = ", ".join(field.column for field in ModeChange._meta.concrete_fields)
# The caller's organization as the audit row records it: the user's membership at the moment of the change.
CALLERS_ORGANIZATION = f"(SELECT organization_id FROM {Membership._meta.db_table} WHERE user_id = %(user)s)"
# The catalog revision in force: the one published to agents.
CATALOG_REVISION = f"(SELECT published FROM {STATE_TABLE} WHERE id = 1)"

# A mode change, on PostgreSQL: one statement locks the user's session row, moves it, and writes the audit row
# from the mode the locked row had: one statement where the ORM makes six (benchmarks/RESULTS.md). The FOR
# UPDATE in the subquery makes a concurrent change wait and then read the row the first one wrote. The time is
# read once the lock is held (clock_timestamp(), not the statement's start), and never before the session's last
# change, so a session's audit rows are in time order and updated_at only moves on. The mode graph is judged on
# the locked row too: it moves only from a mode the target may be entered from (CatalogSnapshot.entry_sources),
# so a concurrent change cannot slip a forbidden move past the check; a refused move writes nothing.
MOVE_SESSION_SQL = f"""
WITH moved AS (
    UPDATE {SESSIONS} AS session
    SET mode_id = %(mode)s, updated_at = GREATEST(clock_timestamp(), before.updated_at)
    FROM (SELECT id, mode_id, updated_at FROM {SESSIONS} WHERE id = %(session)s AND owner_id = %(user)s FOR UPDATE)
        AS before
    WHERE session.id = before.id
        AND (before.mode_id = ANY(%(entry_sources)s::text[])
             OR (%(enters_from_elsewhere)s AND NOT before.mode_id = ANY(%(catalog_ids)s::text[])))
    RETURNING before.mode_id, session.updated_at
)
INSERT INTO {ModeChange._meta.db_table}
    (session_id, from_mode_id, to_mode_id, reason, branch, branch_session_id, changed_by_id, org_id,
     catalog_revision, changed_at)
SELECT %(session)s, mode_id, %(mode)s, %(reason)s, false, NULL, %(user)s, {CALLERS_ORGANIZATION},
    {CATALOG_REVISION}, updated_at
FROM moved
RETURNING {AUDIT_COLUMNS}
"""

# Elsewhere (SQLite, and a branch on either database) a change is a transaction: the session row read under the
# transaction's lock (FOR UPDATE where the database has it; SQLite's transactions take the write lock as they
# begin) and judged by the mode graph, then the audit row written from it, then the move. Fixed SQL rather than the ORM:
# building the ORM's statements took longer than running them (benchmarks/RESULTS.md).
RECORD_CHANGE_SQL = f"""
INSERT INTO {ModeChange._meta.db_table}
    (session_id, from_mode_id, to_mode_id, reason, branch, branch_session_id, changed_by_id, org_id,
     catalog_revision, changed_at)
SELECT id, mode_id, %(mode)s, %(reason)s, %(branch)s, %(branch_session)s, %(user)s, {CALLERS_ORGANIZATION},
    {CATALOG_REVISION}, {{latest}}(%(now)s, updated_at)
FROM {SESSIONS} WHERE id = %(session)s AND owner_id = %(user)s {{lock}}
RETURNING {AUDIT_COLUMNS}
"""
MOVE_RECORDED_SQL = f"UPDATE {SESSIONS} SET mode_id = %(mode)s, updated_at = %(changed_at)s WHERE id = %(session)s"


def create_session(*, owner, org, mode_key: str | None = None, title: str = "") -> AgentSession:
    """A new session for owner, in mode_key or else the default mode. UnknownModeError for a bad key."""
    catalog = current_catalog()
    mode = mode_for_session(mode_key)
    return AgentSession.objects.create(owner=owner, org=org, mode=mode, title=title, catalog_revision=catalog.revision)


def set_session_mode(*, session_id, mode: AgentMode, reason: str, user, branch: bool = False) -> ModeChange:
    """
    Move the user's session to mode and record the change, atomically: who (the user, and the user's
    organization at that moment), when, from which mode, to which, and why.

    The session row is locked first, so concurrent changes queue: each audit row's
    from_mode is the mode the session really had, and the session ends in the
    mode of its last audit row. With branch=True a new session in the target mode
    is created as a child of this one. The published mode graph is judged on the
    mode the locked row has: ModeSwitchRefused, and nothing changes, for a move it
    forbids. Raises AgentSession.DoesNotExist for a session that is not the user's.
    """
    catalog = current_catalog()
    parameters = {
        "session": _stored_session_id(parse_session_id(session_id)),
        "user": user.pk,
        "mode": mode.pk,
        "reason": reason,
    }
    if not branch and connection.vendor == "postgresql":
        return _move_session(catalog, mode, parameters, session_id=session_id, user=user)
    with transaction.atomic():
        session = get_owned_session(session_id=session_id, user=user, for_update=True)
        refusal = catalog.switch_refusal(from_mode_id=session.mode_id, target=mode)
        if refusal is None:
            return _change_locked_session(session, catalog, mode, parameters, user=user, branch=branch)
    # Recorded once the transaction is over, so that raising the refusal does not roll the record back.
    _record_refusal(session_pk=session.pk, from_mode_id=session.mode_id, to_mode=mode)
    raise refusal


def _change_locked_session(session, catalog, mode, parameters, *, user, branch) -> ModeChange:
    """The change of a session whose row this transaction has locked: the audit row, then the move."""
    branch_session = None
    if branch:
        branch_session = AgentSession.objects.create(
            owner=user,
            org_id=session.org_id,
            mode=mode,
            parent=session,
            title=session.title,
            catalog_revision=catalog.revision,
        )
    record = RECORD_CHANGE_SQL.format(
        latest="GREATEST" if connection.vendor == "postgresql" else "MAX",
        lock="FOR UPDATE" if connection.features.has_select_for_update else "",
    )
    written = _written_changes(
        record,
        {
            **parameters,
            "branch": branch,
            "branch_session": branch_session and _stored_session_id(branch_session.pk),
            "now": connection.ops.adapt_datetimefield_value(timezone.now()),  # read once the lock is held
        },
    )
    change = _the_change(written, session.pk)
    changed_at = connection.ops.adapt_datetimefield_value(change.changed_at)
    with connection.cursor() as cursor:
        cursor.execute(MOVE_RECORDED_SQL, {**parameters, "changed_at": changed_at})
    return change


def _record_refusal(*, session_pk, from_mode_id: str, to_mode: AgentMode) -> None:
    """A switch the mode graph refused, for the transition counts; the session and its audit stay untouched."""
    ModeChangeRefusal.objects.create(session_id=session_pk, from_mode_id=from_mode_id, to_mode_id=to_mode.pk)


# How many times a refused move is tried again when the session, read after it, is in a mode the move is
# allowed from: only a concurrent change between the two statements does that, and it seldom happens twice.
MOVE_ATTEMPTS = 3


def _move_session(catalog, mode, parameters, *, session_id, user) -> ModeChange:
    """MOVE_SESSION_SQL; when it moves nothing, the session is not the user's or the mode graph refused the move."""
    sources, from_elsewhere = catalog.entry_sources(mode)
    parameters = {
        **parameters,
        "entry_sources": sources,
        "enters_from_elsewhere": from_elsewhere,
        "catalog_ids": list(catalog.by_id),
    }
    for _ in range(MOVE_ATTEMPTS):
        # One statement is atomic by itself, so it needs no BEGIN and COMMIT, and a change that times out writes
        # nothing. Behind a pooler in transaction mode it gets a transaction of its own all the same: there a
        # server bounds each transaction's wait for the session's lock (aptix_site.database). Inside another
        # transaction, no savepoint: a statement that fails leaves nothing of itself to roll back to.
        with transaction.atomic(savepoint=False) if bounds_per_transaction() else nullcontext():
            found = _written_changes(MOVE_SESSION_SQL, parameters)
        if found:
            return found[0]
        session = AgentSession.objects.filter(pk=parameters["session"], owner=user)
        mode_id = session.values_list("mode_id", flat=True).first()
        if mode_id is None:
            raise AgentSession.DoesNotExist(f"No session {session_id} of this user.")
        refusal = catalog.switch_refusal(from_mode_id=mode_id, target=mode)
        if refusal is not None:
            _record_refusal(session_pk=parameters["session"], from_mode_id=mode_id, to_mode=mode)
            raise refusal
    raise RuntimeError(f"Session {session_id} kept changing mode during {MOVE_ATTEMPTS} attempts to move it.")


def _stored_session_id(pk):
    """A session id as the database stores it (SQLite keeps UUIDs as hexadecimal text)."""
    return AgentSession._meta.pk.get_db_prep_value(pk, connection)


def _written_changes(sql, parameters) -> list[ModeChange]:
    """The ModeChanges an INSERT ... RETURNING wrote (one, or none), loaded as the ORM loads rows."""
    return list(ModeChange.objects.raw(sql, parameters))


def _the_change(written, session_id) -> ModeChange:
    """The one change written; DoesNotExist if none was (the session is not the user's)."""
    if not written:
        raise AgentSession.DoesNotExist(f"No session {session_id} of this user.")
    return written[0]
