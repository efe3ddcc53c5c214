"""
All the hand-written SQL that stays, each statement for its measured gain over the ORM (ARCHITECTURE.md). Built
from the models the apps pass in (this module imports no app), every column from their _meta, so a new field or
a renamed column follows; rows are loaded as the ORM loads them (load()).
"""

from functools import cache
from weakref import WeakKeyDictionary

from django.core.exceptions import ImproperlyConfigured
from django.db import connection

# The converters of each model's columns, per connection (they are bound to its operations).
_converters = WeakKeyDictionary()


def _column(model, name: str) -> str:
    return model._meta.get_field(name).column


def stored_pk(model, pk):
    """A primary key as the database stores it (SQLite keeps UUIDs as hexadecimal text)."""
    return model._meta.pk.get_db_prep_value(pk, connection)


def load(model, row):
    """
    A model instance from a row of every column of model, in its order, as the ORM loads one: each value through
    the converters the ORM applies (SQLite's dates come as text, for one), then Model.from_db.
    """
    values = list(row)
    for position, column, converters in _converters_of(model):
        for convert in converters:
            values[position] = convert(values[position], column, connection)
    return model.from_db(connection.alias, None, values)


def _converters_of(model) -> list:
    known = _converters.setdefault(connection.ops, {})
    if model not in known:
        columns = [field.get_col(model._meta.db_table) for field in model._meta.concrete_fields]
        known[model] = [
            (position, column, converters)
            for position, column in enumerate(columns)
            if (converters := connection.ops.get_db_converters(column) + column.get_db_converters(connection))
        ]
    return known[model]


def fetch(model, sql: str, parameters) -> list:
    """The rows sql reads or returns (every column of model, in its order), loaded as the ORM loads them."""
    with connection.cursor() as cursor:
        cursor.execute(sql, parameters)
        return [load(model, row) for row in cursor.fetchall()]


def fetch_one(sql: str, parameters=()) -> tuple | None:
    with connection.cursor() as cursor:
        cursor.execute(sql, parameters)
        return cursor.fetchone()


def execute(sql: str, parameters) -> None:
    # Apart from fetch_one(): psycopg refuses fetchone() after a statement that reads nothing, and asking its
    # cursor.description first cost the session context about 240 K instructions a request (benchmarks/RESULTS.md).
    with connection.cursor() as cursor:
        cursor.execute(sql, parameters)


@cache
def _token_user_sql(tokens, users) -> str:
    digest, expiry = _column(tokens, "digest"), _column(tokens, "expiry")
    to_user = tokens._meta.get_field("user")
    columns = [f't."{field.column}"' for field in tokens._meta.concrete_fields]
    columns += [f'u."{field.column}"' for field in users._meta.concrete_fields]
    return (
        f'SELECT {", ".join(columns)} FROM "{users._meta.db_table}" u JOIN "{tokens._meta.db_table}" t '
        f'ON t."{to_user.column}" = u."{to_user.target_field.column}" '
        f'WHERE t."{digest}" = %s AND (t."{expiry}" IS NULL OR t."{expiry}" > %s)'
    )


def token_with_user(tokens, users, *, digest: str, now):
    """
    The unexpired token (of the model tokens) of digest with its user, both loaded as the ORM loads them, or None.
    One query on a cursor: building it through the ORM on every request took longer than the database took to
    run it, and so did reading it through raw() (about 45 µs more per request on SQLite).
    """
    row = fetch_one(_token_user_sql(tokens, users), [digest, connection.ops.adapt_datetimefield_value(now)])
    if row is None:
        return None
    width = len(tokens._meta.concrete_fields)
    token = load(tokens, row[:width])
    token.user = load(users, row[width:])
    return token


@cache
def _owned_row_sql(model) -> str:
    columns = ", ".join(field.column for field in model._meta.concrete_fields)
    where = f"{model._meta.pk.column} = %s AND {_column(model, 'owner')} = %s"
    return f"SELECT {columns} FROM {model._meta.db_table} WHERE {where}"


def owned_row(model, *, pk, owner_pk, for_update: bool = False):
    """
    The row of model with this primary key and owner, loaded as the ORM loads it, or None. for_update locks it
    until the surrounding transaction ends, as select_for_update() would (the caller makes sure there is one).
    """
    sql = _owned_row_sql(model)
    if for_update and connection.features.has_select_for_update:  # SQLite locks the whole database instead
        sql += " FOR UPDATE"
    found = fetch(model, sql, [stored_pk(model, pk), owner_pk])
    return found[0] if found else None


@cache
def singleton_sql(model, *names: str) -> str:
    """The columns of the fields names (else every column but the primary key) of model's row 1."""
    fields = [model._meta.get_field(name) for name in names] or [
        field for field in model._meta.concrete_fields if not field.primary_key
    ]
    columns = ", ".join(field.column for field in fields)
    return f"SELECT {columns} FROM {model._meta.db_table} WHERE {model._meta.pk.column} = 1"


class ModeChangeSql:
    """
    The statements of a mode change (sessions_app.services): a session row moved to another mode, and its audit row
    written from the mode the locked row had, with the caller's organization and the catalog revision in force.
    Every field of the audit row but its id is written, each from audit_values: a field added to the model without
    a value there stops the import (audit_row_sql).
    """

    def __init__(self, *, sessions, changes, memberships, versions):
        self.changes = changes
        table = sessions._meta.db_table
        s_id, s_owner, s_mode, s_updated = (_column(sessions, name) for name in ("id", "owner", "mode", "updated_at"))
        self.audit_values = {
            "session": "%(session)s",
            "from_mode": s_mode,  # the mode the locked session row had
            "to_mode": "%(mode)s",
            "reason": "%(reason)s",
            "branch": "%(branch)s",
            "branch_session": "%(branch_session)s",
            "changed_by": "%(user)s",
            # The caller's organization: the user's membership at the moment of the change.
            "org": f"(SELECT {_column(memberships, 'organization')} FROM {memberships._meta.db_table} "
            f"WHERE {_column(memberships, 'user')} = %(user)s)",
            # The catalog revision in force: the one published to agents.
            "catalog_revision": f"({singleton_sql(versions, 'published')})",
        }
        # On PostgreSQL one statement locks the user's session row, moves it, and writes the audit row from the mode
        # the locked row had. The FOR UPDATE in the subquery makes a concurrent change wait and then read the row
        # the first one wrote. The time is read once the lock is held (clock_timestamp(), not the statement's
        # start), and never before the session's last change, so a session's audit rows are in time order and
        # updated_at only moves on. The mode graph is judged on the locked row too: it moves only from a mode the
        # target may be entered from (CatalogSnapshot.entry_sources), so a concurrent change cannot slip a
        # forbidden move past the check; a refused move writes nothing.
        self.move_sql = f"""
WITH moved AS (
    UPDATE {table} AS session
    SET {s_mode} = %(mode)s, {s_updated} = GREATEST(clock_timestamp(), before.{s_updated})
    FROM (SELECT {s_id}, {s_mode}, {s_updated} FROM {table}
          WHERE {s_id} = %(session)s AND {s_owner} = %(user)s FOR UPDATE) AS before
    WHERE session.{s_id} = before.{s_id}
        AND (before.{s_mode} = ANY(%(entry_sources)s::text[])
             OR (%(enters_from_elsewhere)s AND NOT before.{s_mode} = ANY(%(catalog_ids)s::text[])))
    RETURNING before.{s_mode} AS {s_mode}, session.{s_updated} AS {s_updated}
)
{self.audit_row_sql(source="moved", changed_at=s_updated)}
"""
        # Elsewhere (SQLite, and a branch on either database) the change is a transaction: the audit row written from
        # the session row read under the transaction's lock (FOR UPDATE where the database has it), then the move.
        lock = "FOR UPDATE" if connection.features.has_select_for_update else ""
        latest = "GREATEST" if connection.vendor == "postgresql" else "MAX"
        self.record_sql = self.audit_row_sql(
            source=f"{table} WHERE {s_id} = %(session)s AND {s_owner} = %(user)s {lock}",
            changed_at=f"{latest}(%(now)s, {s_updated})",
        )
        self.move_recorded_sql = (
            f"UPDATE {table} SET {s_mode} = %(mode)s, {s_updated} = %(changed_at)s WHERE {s_id} = %(session)s"
        )

    def audit_row_sql(self, *, source: str, changed_at: str) -> str:
        """INSERT ... SELECT of one audit row from source (a row with the session's mode, updated_at), RETURNING it."""
        values = {**self.audit_values, "changed_at": changed_at}
        fields = [field for field in self.changes._meta.concrete_fields if not field.primary_key]
        unwritten = {field.name for field in fields} ^ set(values)
        if unwritten:
            raise ImproperlyConfigured(
                f"{__name__} writes no value for {self.changes.__name__} fields {sorted(unwritten)}."
            )
        return (
            f"INSERT INTO {self.changes._meta.db_table} ({', '.join(field.column for field in fields)}) "
            f"SELECT {', '.join(values[field.name] for field in fields)} FROM {source} "
            f"RETURNING {', '.join(field.column for field in self.changes._meta.concrete_fields)}"
        )
