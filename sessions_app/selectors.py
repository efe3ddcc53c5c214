"""Reads of agent sessions, always scoped to their owner."""

import uuid

from django.db import connection
from django.db.transaction import TransactionManagementError

from aptix_site.service_errors import InvalidInput
from modes.catalog import get_mode_by_id

from .models import AgentSession, ModeChange

# Every session endpoint and tool call with a session starts here. Fixed SQL, its columns from the model: the ORM
# query cost about 1.2 M instructions more per request, 45 % of a session context (benchmarks/RESULTS.md);
# tests/test_fixed_sql.py checks that it reads what the ORM reads.
OWNED_SESSION_SQL = (
    f"SELECT {', '.join(field.column for field in AgentSession._meta.concrete_fields)} "
    f"FROM {AgentSession._meta.db_table} WHERE id = %s AND owner_id = %s"
)


class InvalidSessionId(InvalidInput, ValueError):
    field = "sessionId"

    def __init__(self, value):
        super().__init__(f"{value!r} is not a session id; session ids are UUIDs.")


def parse_session_id(session_id) -> uuid.UUID:
    """A session id, given as a UUID or as text; InvalidSessionId for anything else."""
    try:
        return uuid.UUID(str(session_id))
    except ValueError:
        raise InvalidSessionId(session_id) from None


def get_owned_session(*, session_id, user, for_update: bool = False) -> AgentSession:
    """
    The user's session; AgentSession.DoesNotExist for anyone else's, exactly as for a missing one.
    for_update locks its row until the surrounding transaction ends, as select_for_update() would.
    """
    pk = parse_session_id(session_id)
    sql = OWNED_SESSION_SQL
    if for_update:
        if connection.get_autocommit():  # a lock outside a transaction would end with the query
            raise TransactionManagementError("get_owned_session(for_update=True) needs a transaction.")
        if connection.features.has_select_for_update:  # SQLite locks the whole database instead
            sql += " FOR UPDATE"
    pk_param = AgentSession._meta.pk.get_db_prep_value(pk, connection)  # SQLite stores UUIDs as hex text
    found = list(AgentSession.objects.raw(sql, [pk_param, user.pk]))
    if not found:
        raise AgentSession.DoesNotExist(f"No session {pk} of this user.")
    session = found[0]
    session.mode = get_mode_by_id(session.mode_id)  # from the catalog snapshot, rather than a join
    return session


def sessions_of(*, user):
    return AgentSession.objects.filter(owner=user).select_related("mode", "org")


def mode_changes_of(*, session: AgentSession):
    return ModeChange.objects.filter(session=session).select_related("from_mode", "to_mode", "changed_by")


def mode_id_at_revision(*, session: AgentSession, revision: int) -> str | None:
    """
    The id of the mode the session was in while the catalog was at revision: after its last change made at
    that revision or before, else its mode before its first change; None if it was created after.
    """
    if session.catalog_revision is not None and session.catalog_revision > revision:
        return None
    changes = ModeChange.objects.filter(session_id=session.pk)
    then = changes.filter(catalog_revision__lte=revision).order_by("-id").values_list("to_mode_id", flat=True)
    first = changes.order_by("id").values_list("from_mode_id", flat=True)
    return then.first() or first.first() or session.mode_id
