"""aptix_site.database: a database that is only busy is told apart from a fault, so that servers answer 503."""

import json
import sqlite3

import psycopg
import pytest
from django.db import OperationalError, connection
from django.db.utils import ConnectionHandler
from django.test import RequestFactory

from aptix_site.database import database_busy
from aptix_site.errors import database_unavailable_response


@pytest.fixture
def waiter(tmp_path, django_db_blocker):
    """A Django connection to a SQLite file whose write lock another connection holds; it waits 0.1 s for it."""
    path = tmp_path / "busy.sqlite3"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN IMMEDIATE")  # as a long write does, or a stuck script
    connections = ConnectionHandler(
        {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(path), "OPTIONS": {"timeout": 0.1}}}
    )
    with django_db_blocker.unblock():  # a file of its own, not the test database
        yield connections["default"]
        connections.close_all()
    holder.close()


def failure(connection, sql) -> OperationalError:
    with pytest.raises(OperationalError) as raised, connection.cursor() as cursor:
        cursor.execute(sql)
    return raised.value


def test_sqlites_write_lock_held_past_the_timeout_is_busy_and_answered_503_in_those_words(waiter):
    error = failure(waiter, "INSERT INTO t VALUES (1)")

    assert "database is locked" in str(error)
    assert database_busy(error)
    response = database_unavailable_response(RequestFactory().post("/api/sessions/"), error)
    assert (response.status_code, response["Retry-After"]) == (503, "5")
    assert json.loads(response.content) == {
        "detail": "The service's database is busy just now; try again in a few seconds."
    }


def test_a_faulty_statement_is_not_busy(waiter):
    assert not database_busy(failure(waiter, "SELECT * FROM no_such_table"))


@pytest.mark.postgres(reason="PostgreSQL's errors, as Django wraps them")
@pytest.mark.parametrize("error, busy", [
    (psycopg.errors.LockNotAvailable, True),  # lock_timeout
    (psycopg.errors.QueryCanceled, True),  # statement_timeout
    (psycopg.errors.DeadlockDetected, True),  # two writers waiting on each other: one is stopped, to be tried again
    (psycopg.errors.ForeignKeyViolation, False),
])
def test_postgresql_busy_errors_are_those_a_retry_gets_past(error, busy):
    with pytest.raises(Exception) as raised, connection.wrap_database_errors:
        raise error()
    assert database_busy(raised.value) is busy
