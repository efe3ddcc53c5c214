"""Bounded waits on PostgreSQL for the requests a server answers (DATABASE_LOCK_TIMEOUT_MS and
DATABASE_STATEMENT_TIMEOUT_MS), set once per connection as it opens; commands and migrations do not install them.
Behind a pooler in transaction mode, which would lose a session's SET, they are set as each transaction's first
statement instead (SET LOCAL); writes that wait on locks run in transactions there. A statement stopped by either
limit raises OperationalError and its transaction is rolled back; `database_busy` tells it apart for the servers,
as it does SQLite's write lock held past the connection's timeout."""

import sqlite3

from django.conf import settings
from django.db import OperationalError, connection
from django.db.backends.signals import connection_created
from psycopg.pq import TransactionStatus

# set_config's third argument: true for the current transaction only (SET LOCAL), false for the session.
SET_BOUNDS_SQL = "SELECT set_config('lock_timeout', %s, %s), set_config('statement_timeout', %s, %s)"
# lock_not_available (lock_timeout), query_canceled (statement_timeout), deadlock_detected (two writers that each
# wait on the other: PostgreSQL stops one; tried again, it goes through)
BUSY_SQLSTATES = frozenset({"55P03", "57014", "40P01"})
# What Retry-After says to a request that met one of the limits.
BUSY_RETRY_SECONDS = 5


def bound_waits_in_requests() -> None:
    """From now on, every PostgreSQL connection this process opens bounds the waits of its transactions."""
    connection_created.connect(_install_bounds, dispatch_uid="aptix_site.database.bounds")


def _install_bounds(sender, connection, **kwargs) -> None:
    bounded = settings.DATABASE_LOCK_TIMEOUT_MS or settings.DATABASE_STATEMENT_TIMEOUT_MS
    if connection.vendor != "postgresql" or not bounded:
        return
    if settings.DATABASE_POOLER == "transaction":
        connection.execute_wrappers.append(bound_transaction)
    else:
        with connection.connection.cursor() as cursor:  # the driver's own: opening, in autocommit
            cursor.execute(SET_BOUNDS_SQL, _bounds(local=False))


def _bounds(*, local: bool) -> tuple:
    """SET_BOUNDS_SQL's parameters."""
    return str(settings.DATABASE_LOCK_TIMEOUT_MS), local, str(settings.DATABASE_STATEMENT_TIMEOUT_MS), local


def bound_transaction(execute, sql, params, many, context):
    """An execute wrapper: the first statement of each transaction is preceded by the transaction's limits."""
    connection = context["connection"]
    # psycopg opens the transaction (BEGIN) with its first statement, so IDLE here means none has run yet.
    if connection.in_atomic_block and connection.connection.info.transaction_status == TransactionStatus.IDLE:
        context["cursor"].cursor.execute(SET_BOUNDS_SQL, _bounds(local=True))  # the driver's cursor: not wrapped again
    return execute(sql, params, many, context)


def foreign_keys_checked_at_each_statement() -> None:
    """
    For the rest of the current transaction, PostgreSQL checks each foreign key as its row is written, not at commit.
    A row naming one that another transaction is deleting then waits for that transaction, and fails at its statement:
    an IntegrityError that its writer can answer, inside the writer's code, whatever transaction encloses it. SQLite,
    which lets one writer in at a time, needs nothing.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def database_busy(exception) -> bool:
    """Whether exception is a statement stopped by one of these limits (a lock held too long, a slow statement), or
    one that waited for SQLite's write lock past its timeout ("database is locked")."""
    if not isinstance(exception, OperationalError):
        return False
    cause = exception.__cause__
    sqlite_code = getattr(cause, "sqlite_errorcode", None)  # an extended code: its low byte is the primary one
    return getattr(cause, "sqlstate", None) in BUSY_SQLSTATES or (
        sqlite_code is not None and sqlite_code & 0xFF == sqlite3.SQLITE_BUSY
    )
