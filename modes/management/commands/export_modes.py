"""Writes the mode catalog to a portable YAML or JSON file that import_modes reads back."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from modes.models import AgentMode
from modes.portable import dump_document, export_document


class Command(BaseCommand):
    help = "Export the agent modes to YAML (default) or JSON."

    def add_arguments(self, parser):
        parser.add_argument("--custom-only", action="store_true", help="Leave out the built-in modes.")
        parser.add_argument("--format", choices=["yaml", "json"], default="yaml")
        parser.add_argument("--output", help="File to write; standard output if omitted.")

    def handle(self, *args, custom_only, format, output, **options):
        modes = AgentMode.objects.all()
        if custom_only:
            modes = modes.filter(source=AgentMode.Source.CUSTOM)
        text = dump_document(export_document(list(modes)), file_format=format)
        if not output:
            self.stdout.write(text, ending="")
            return
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as error:
            raise CommandError(f"Cannot write {output}: {error.strerror}.") from error
        self.stderr.write(f"Exported {len(modes)} modes to {output}.")
