"""Why the app cannot start or run, for a person: configuration it refuses, or a database it cannot use, in one
line that says what to set or run. The one place that wording lives: manage.py ends a command with it, and
`python -m aptix_site.refusals MODULE` (deploy/serve's check before Granian starts) ends a start with it."""

import importlib
import sys

from django.core.exceptions import ImproperlyConfigured
from django.db import DatabaseError, InterfaceError, OperationalError, connection

# What the app refuses to start or run on; any other error is a defect, whose traceback is wanted.
REFUSED = (ImproperlyConfigured, DatabaseError)


def refusal(error: ImproperlyConfigured | DatabaseError) -> str:
    """The line saying why the app cannot go on (a refused catalog adds the rules it breaks, one a line)."""
    if isinstance(error, ImproperlyConfigured):
        return f"Configuration error: {error}"
    text = str(error)
    first_line = (text.strip().splitlines() or [type(error).__name__])[0]
    if "no such table" in text or ("relation" in text and "does not exist" in text):
        advice = " (run 'manage.py migrate' first)"
    elif isinstance(error, (OperationalError, InterfaceError)) and connection.connection is None:  # never opened
        advice = " (check DATABASE_URL and that the database server is up)"
    else:
        advice = ""
    return f"Database error: {first_line}{advice}"


def main(module: str):
    """Imports module (the app's WSGI module, which loads the settings and checks the catalog and database)."""
    try:
        importlib.import_module(module)
    except REFUSED as error:
        sys.exit(refusal(error))


if __name__ == "__main__":
    main(sys.argv[1])
