"""Reads a portable mode file and applies all of it, or nothing if any entry is wrong."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from modes.checks import unresolved_tools_message
from modes.portable import PortableFileError, read_document
from modes.services import import_modes


class Command(BaseCommand):
    help = "Import agent modes from a YAML or JSON file written by export_modes."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--dry-run", action="store_true", help="Validate and report; change nothing.")
        parser.add_argument("--update", action="store_true", help="Update modes whose key already exists.")

    def handle(self, *args, file, dry_run, update, **options):
        try:
            text = Path(file).read_text(encoding="utf-8-sig")  # a byte-order mark is not part of the text
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"Cannot read {file}: {getattr(error, 'strerror', None) or error}.") from error
        try:
            result = import_modes(mode_file=read_document(text), update=update, dry_run=dry_run)
        except PortableFileError as error:
            problems = "\n".join(f"  {problem}" for problem in error.problems)
            raise CommandError(f"{file} was not imported; nothing changed:\n{problems}") from error
        prefix = "Dry run, nothing changed: would have " if dry_run else ""
        summary = (
            f"{prefix}created {len(result.created)}, updated {len(result.updated)}, "
            f"left {len(result.unchanged)} unchanged."
        )
        for label, keys in (("created", result.created), ("updated", result.updated)):
            if keys:
                self.stdout.write(f"{label}: {', '.join(keys)}")
        if result.default:
            self.stdout.write(f"default: {result.default}")
        self.stdout.write(summary[0].upper() + summary[1:])
        for key, unresolved in result.unresolved_tool_ids.items():
            self.stderr.write(
                f"Warning (modes.W001): {unresolved_tools_message(key, unresolved)}",
                self.style.WARNING,
            )
