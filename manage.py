#!/usr/bin/env python
"""Django's command line, but refused configuration, an argument that is not UTF-8 text, or a database out of reach or
not migrated, ends the command in one line saying what to set or run, not a traceback (unless --traceback)."""
import io
import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aptix_site.settings")
    from django.core.management import execute_from_command_line

    from aptix_site.refusals import REFUSED, refusal

    # Python keeps the bytes of a name that is not UTF-8 as lone surrogates, which no database stores and no UTF-8
    # stream prints: such an argument is refused here, and such a file name (in a folder read) is printed as the
    # bytes it is (stderr escapes them already).
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(errors="surrogateescape")
    for argument in sys.argv[1:]:
        try:
            argument.encode()
        except UnicodeEncodeError:
            sys.exit(f"Arguments must be UTF-8 text; {os.fsencode(argument)!r} is not.")
    if "--traceback" in sys.argv:
        execute_from_command_line(sys.argv)
        return
    try:
        execute_from_command_line(sys.argv)
    except REFUSED as error:
        sys.exit(refusal(error))


if __name__ == "__main__":
    main()
