"""Prints the Mode Catalog system-prompt block of AGN-014 §6.2."""

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError

from modes.catalog import build_system_prompt, find_modes


class Command(BaseCommand):
    help = "Print the Mode Catalog system-prompt block for a current mode (the default mode if omitted)."

    def add_arguments(self, parser):
        parser.add_argument("--current", default="", help="Key of the current mode.")

    def handle(self, *args, current, **options):
        if current and current not in {mode.key for mode in find_modes()}:
            self.stderr.write(f"No mode has the key {current!r}; showing the default mode instead.")
        try:
            self.stdout.write(build_system_prompt(current))
        except ImproperlyConfigured as error:  # a catalog without a default mode
            raise CommandError(f"{error} Run 'manage.py check --database default' for details.") from None
