"""Writes the catalog's modes and declared tools, or an earlier revision of them, to a file import_modes reads back."""

from pathlib import Path

from django.core.management.base import CommandError

from aptix_site.commands import ServiceCommand
from modes.management.revisions import add_revision_argument, catalog_at
from modes.models import AgentMode
from modes.portable import dump_document, export_document


class Command(ServiceCommand):
    help = "Export the agent modes and declared tools to YAML (default) or JSON."

    def add_arguments(self, parser):
        parser.add_argument("--custom-only", action="store_true", help="Leave out the built-in modes.")
        parser.add_argument("--format", choices=["yaml", "json"], default="yaml")
        parser.add_argument("--output", help="File to write; standard output if omitted.")
        add_revision_argument(parser, what="export")

    def handle(self, *args, custom_only, format, output, revision, **options):
        if custom_only and revision is not None:
            # A revision keeps the portable format, which does not say where a mode came from.
            raise CommandError("--custom-only cannot be combined with --revision: a revision is exported whole.")
        catalog = catalog_at(revision)
        modes = [mode for mode in catalog.modes if not custom_only or mode.source == AgentMode.Source.CUSTOM]
        document = export_document(modes=modes, declared_tools=list(catalog.declared_tools))
        text = dump_document(document, file_format=format)
        if not output:
            self.stdout.write(text, ending="")
            return
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as error:
            raise CommandError(f"Cannot write {output}: {error.strerror}.") from error
        self.stderr.write(f"Exported {len(modes)} modes and {len(catalog.declared_tools)} declared tools to {output}.")
