"""Prints the Mode Catalog system-prompt block of AGN-014 §6.2, as it is now or as an earlier revision had it."""

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import CommandError

from aptix_site.commands import ServiceCommand
from modes.management.revisions import add_revision_argument, catalog_at


class Command(ServiceCommand):
    help = "Print the Mode Catalog system-prompt block for a current mode (the default mode if omitted)."

    def add_arguments(self, parser):
        parser.add_argument("--current", default="", help="Key of the current mode.")
        add_revision_argument(parser, what="build the block from")

    def handle(self, *args, current, revision, **options):
        catalog = catalog_at(revision)
        if current and current not in catalog.by_key:
            self.stderr.write(f"No mode has the key {current!r}; showing the default mode instead.")
        try:
            self.stdout.write(catalog.system_prompt(current))
        except ImproperlyConfigured as error:  # a catalog without a default mode
            raise CommandError(f"{error} Run 'manage.py check --database default' for details.") from None
