#!/usr/bin/env python
"""Django's command line, but refused configuration, or a database out of reach or not migrated, ends the command in
one line saying what to set or run, not a traceback (unless --traceback)."""
import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aptix_site.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line
    from django.db import DatabaseError

    if "--traceback" in sys.argv:
        execute_from_command_line(sys.argv)
        return
    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as error:
        sys.exit(f"Configuration error: {error}")
    except DatabaseError as error:
        text = str(error)
        first_line = (text.strip().splitlines() or [type(error).__name__])[0]
        if "no such table" in text or ("relation" in text and "does not exist" in text):
            advice = "run 'manage.py migrate' first"
        else:
            advice = "check DATABASE_URL and that the database server is up"
        sys.exit(f"Database error: {first_line} ({advice})")


if __name__ == "__main__":
    main()
