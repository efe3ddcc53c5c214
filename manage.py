#!/usr/bin/env python
"""Django's command-line utility for administrative tasks; configuration errors end in one line (aptix_site.command_line)."""
import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aptix_site.settings")
    from aptix_site.command_line import main as run

    run(sys.argv)


if __name__ == "__main__":
    main()
