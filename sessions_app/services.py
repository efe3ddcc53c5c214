"""Writes to agent sessions: creating them and changing their mode (the only way a mode changes)."""

from contextlib import nullcontext

from django.db import connection, transaction
from django.utils import timezone

from accounts.models import Membership
from aptix_site import fixed_sql
from aptix_site.database import bounds_per_transaction
from modes.catalog import current_catalog, mode_for_session
from modes.models import AgentMode, CatalogVersion

from .models import AgentSession, ModeChange, ModeChangeRefusal
from .selectors import get_owned_session, parse_session_id


# The mode change in fixed SQL (aptix_site.fixed_sql), for the instructions it saves over the ORM: on PostgreSQL one
# statement where the ORM makes six, 36 to 45 % fewer instructions per request; elsewhere a transaction of two,
# 23 % fewer on SQLite (benchmarks/RESULTS.md).
MODE_CHANGE_SQL = fixed_sql.ModeChangeSql(
    sessions=AgentSession, changes=ModeChange, memberships=Membership, versions=CatalogVersion
)


def create_session(*, owner, org, mode_key: str | None = None, title: str = "") -> AgentSession:
    """A new session for owner, in mode_key or else the default mode. UnknownModeError for a bad key."""
    catalog = current_catalog()
    mode = mode_for_session(mode_key)
    return AgentSession.objects.create(owner=owner, org=org, mode=mode, title=title, catalog_revision=catalog.revision)


def set_session_mode(*, session_id, mode: AgentMode, reason: str, user, branch: bool = False) -> ModeChange:
    """
    Move the user's session to mode and record the change, atomically: who (the user, and the user's organization
    at that moment), when, from which mode, to which, and why.

    The session row is locked first, so concurrent changes queue: each audit row's from_mode is the mode the
    session really had, and the session ends in the mode of its last audit row. With branch=True a new session in
    the target mode is created as a child of this one. The published mode graph is judged on the mode the locked
    row has: ModeSwitchRefused, and nothing changes, for a move it forbids. AgentSession.DoesNotExist for a session
    that is not the user's.
    """
    catalog = current_catalog()
    session_pk = fixed_sql.stored_pk(AgentSession, parse_session_id(session_id))
    parameters = dict(session=session_pk, user=user.pk, mode=mode.pk, reason=reason, branch=branch, branch_session=None)
    if not branch and connection.vendor == "postgresql":
        return _move_session(catalog, mode, parameters, session_id=session_id, user=user)
    with transaction.atomic():
        session = get_owned_session(session_id=session_id, user=user, for_update=True)
        refusal = catalog.switch_refusal(from_mode_id=session.mode_id, target=mode)
        if refusal is None:
            return _change_locked_session(session, catalog, mode, parameters, user=user, branch=branch)
    # Recorded once the transaction is over, so that raising the refusal does not roll the record back.
    ModeChangeRefusal.objects.create(session_id=session.pk, from_mode_id=session.mode_id, to_mode_id=mode.pk)
    raise refusal


def _change_locked_session(session, catalog, mode, parameters, *, user, branch) -> ModeChange:
    """The change of a session whose row this transaction has locked: the audit row, then the move."""
    if branch:
        branch_session = AgentSession.objects.create(
            owner=user, org_id=session.org_id, mode=mode, parent=session, title=session.title,
            catalog_revision=catalog.revision,
        )
        parameters["branch_session"] = fixed_sql.stored_pk(AgentSession, branch_session.pk)
    adapt = connection.ops.adapt_datetimefield_value
    now = adapt(timezone.now())  # read once the lock is held
    written = fixed_sql.fetch(ModeChange, MODE_CHANGE_SQL.record_sql, {**parameters, "now": now})
    if not written:
        raise AgentSession.DoesNotExist(f"No session {session.pk} of this user.")
    fixed_sql.execute(MODE_CHANGE_SQL.move_recorded_sql, {**parameters, "changed_at": adapt(written[0].changed_at)})
    return written[0]


# How many times a refused move is tried again when the session, read after it, is in a mode the move is
# allowed from: only a concurrent change between the two statements does that, and it seldom happens twice.
MOVE_ATTEMPTS = 3


def _move_session(catalog, mode, parameters, *, session_id, user) -> ModeChange:
    """PostgreSQL's one statement; when it moves nothing, the session is not the user's or the mode graph refused."""
    sources, from_elsewhere = catalog.entry_sources(mode)
    parameters = dict(
        parameters, entry_sources=sources, enters_from_elsewhere=from_elsewhere, catalog_ids=list(catalog.by_id)
    )
    for _ in range(MOVE_ATTEMPTS):
        # One statement is atomic by itself, so it needs no BEGIN and COMMIT, and a change that times out writes
        # nothing. Behind a pooler in transaction mode it gets a transaction of its own all the same: there a
        # server bounds each transaction's wait for the session's lock (aptix_site.database). Inside another
        # transaction, no savepoint: a statement that fails leaves nothing of itself to roll back to.
        with transaction.atomic(savepoint=False) if bounds_per_transaction() else nullcontext():
            found = fixed_sql.fetch(ModeChange, MODE_CHANGE_SQL.move_sql, parameters)
        if found:
            return found[0]
        session = AgentSession.objects.filter(pk=parameters["session"], owner=user)
        mode_id = session.values_list("mode_id", flat=True).first()
        if mode_id is None:
            raise AgentSession.DoesNotExist(f"No session {session_id} of this user.")
        refusal = catalog.switch_refusal(from_mode_id=mode_id, target=mode)
        if refusal is not None:
            ModeChangeRefusal.objects.create(session_id=parameters["session"], from_mode_id=mode_id, to_mode_id=mode.pk)
            raise refusal
    raise RuntimeError(f"Session {session_id} kept changing mode during {MOVE_ATTEMPTS} attempts to move it.")
