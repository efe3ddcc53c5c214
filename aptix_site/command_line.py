"""
manage.py's entry point: Django's command line, except that configuration the settings refuse, and a
database that cannot be reached or is not migrated, end the command with one line that says what to
set or run, and a non-zero exit code, rather than a traceback. --traceback shows the traceback.
"""

import sys

from django.core.exceptions import ImproperlyConfigured
from django.core.management import execute_from_command_line
from django.db import DatabaseError


def main(argv: list[str]) -> None:
    if "--traceback" in argv:
        execute_from_command_line(argv)
        return
    try:
        execute_from_command_line(argv)
    except ImproperlyConfigured as error:
        sys.exit(f"Configuration error: {error}")
    except DatabaseError as error:
        sys.exit(f"Database error: {_first_line(error)} ({database_advice(error)})")


def database_advice(error: DatabaseError) -> str:
    """What a person can do about a database error met outside a request."""
    text = str(error)
    if "no such table" in text or ("relation" in text and "does not exist" in text):
        return "run 'manage.py migrate' first"
    return "check DATABASE_URL and that the database server is up"


def _first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]
