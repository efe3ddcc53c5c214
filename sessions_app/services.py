"""Writes to agent sessions: creating them and changing their mode (the only way a mode changes)."""

from contextlib import nullcontext

from django.core.exceptions import ImproperlyConfigured
from django.db import connection, transaction
from django.utils import timezone

from accounts.models import Membership
from aptix_site.database import bounds_per_transaction
from modes.catalog import STATE_TABLE, current_catalog, mode_for_session
from modes.models import AgentMode, CatalogVersion

from .models import AgentSession, ModeChange, ModeChangeRefusal
from .selectors import get_owned_session, parse_session_id

def _columns(model, *names) -> list[str]:
    """The columns of model's fields names, as its _meta says (a renamed field or column follows)."""
    return [model._meta.get_field(name).column for name in names]


SESSIONS = AgentSession._meta.db_table
S_ID, S_OWNER, S_MODE, S_UPDATED = _columns(AgentSession, "id", "owner", "mode", "updated_at")
# The caller's organization as the audit row records it: the user's membership at the moment of the change.
CALLERS_ORGANIZATION = "(SELECT {} FROM {} WHERE {} = %(user)s)".format(
    *_columns(Membership, "organization"), Membership._meta.db_table, *_columns(Membership, "user")
)
# The catalog revision in force: the one published to agents.
CATALOG_REVISION = f"(SELECT {_columns(CatalogVersion, 'published')[0]} FROM {STATE_TABLE} WHERE id = 1)"


def audit_row_sql(*, source: str, changed_at: str) -> str:
    """
    INSERT ... SELECT of one audit row from source (a row with the session's S_MODE and S_UPDATED columns), and
    RETURNING it whole. Every field of ModeChange but its id is written, each from what AUDIT_VALUES says; a field
    added to the model without a value there stops the import here, rather than leaving the column to a
    database default the ORM would not have chosen.
    """
    values = {**AUDIT_VALUES, "changed_at": changed_at}
    fields = [field for field in ModeChange._meta.concrete_fields if not field.primary_key]
    unwritten = {field.name for field in fields} ^ set(values)
    if unwritten:
        raise ImproperlyConfigured(f"sessions_app.services writes no value for ModeChange fields {sorted(unwritten)}.")
    return (
        f"INSERT INTO {ModeChange._meta.db_table} ({', '.join(field.column for field in fields)}) "
        f"SELECT {', '.join(values[field.name] for field in fields)} FROM {source} "
        f"RETURNING {', '.join(field.column for field in ModeChange._meta.concrete_fields)}"
    )


# What each field of an audit row is written from (changed_at: per statement, below).
AUDIT_VALUES = {
    "session": "%(session)s",
    "from_mode": S_MODE,  # the mode the locked session row had
    "to_mode": "%(mode)s",
    "reason": "%(reason)s",
    "branch": "%(branch)s",
    "branch_session": "%(branch_session)s",
    "changed_by": "%(user)s",
    "org": CALLERS_ORGANIZATION,
    "catalog_revision": CATALOG_REVISION,
}

# A mode change, on PostgreSQL: one statement locks the user's session row, moves it, and writes the audit row
# from the mode the locked row had: one statement where the ORM makes six, and 36 to 45 % fewer instructions per
# request (benchmarks/RESULTS.md). The FOR UPDATE in the subquery makes a concurrent change wait and then
# read the row the first one wrote. The time is read once the lock is held (clock_timestamp(), not the
# statement's start), and never before the session's last change, so a session's audit rows are in time order
# and updated_at only moves on. The mode graph is judged on the locked row too: it moves only from a mode the
# target may be entered from (CatalogSnapshot.entry_sources), so a concurrent change cannot slip a forbidden
# move past the check; a refused move writes nothing.
MOVE_SESSION_SQL = f"""
WITH moved AS (
    UPDATE {SESSIONS} AS session
    SET {S_MODE} = %(mode)s, {S_UPDATED} = GREATEST(clock_timestamp(), before.{S_UPDATED})
    FROM (SELECT {S_ID}, {S_MODE}, {S_UPDATED} FROM {SESSIONS}
          WHERE {S_ID} = %(session)s AND {S_OWNER} = %(user)s FOR UPDATE) AS before
    WHERE session.{S_ID} = before.{S_ID}
        AND (before.{S_MODE} = ANY(%(entry_sources)s::text[])
             OR (%(enters_from_elsewhere)s AND NOT before.{S_MODE} = ANY(%(catalog_ids)s::text[])))
    RETURNING before.{S_MODE} AS {S_MODE}, session.{S_UPDATED} AS {S_UPDATED}
)
{audit_row_sql(source="moved", changed_at=S_UPDATED)}
"""

# Elsewhere (SQLite, and a branch on either database) a change is a transaction: the session row read under the
# transaction's lock (FOR UPDATE where the database has it; SQLite's transactions take the write lock as they
# begin) and judged by the mode graph, then the audit row written from it, then the move. Fixed SQL rather than
# the ORM: 23 % fewer instructions per request on SQLite (benchmarks/RESULTS.md). tests/test_mode_change_sql.py
# holds every statement here to the rows the ORM would write.
RECORD_CHANGE_SQL = audit_row_sql(
    source=f"{SESSIONS} WHERE {S_ID} = %(session)s AND {S_OWNER} = %(user)s {{lock}}",
    changed_at=f"{{latest}}(%(now)s, {S_UPDATED})",
)
MOVE_RECORDED_SQL = (
    f"UPDATE {SESSIONS} SET {S_MODE} = %(mode)s, {S_UPDATED} = %(changed_at)s WHERE {S_ID} = %(session)s"
)


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
        "branch": branch,
        "branch_session": None,
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
