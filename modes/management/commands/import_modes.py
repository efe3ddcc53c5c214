"""Reads a portable mode file and applies all of it, or nothing if any entry is wrong."""

from collections import Counter
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from modes.checks import unresolved_tools_message
from modes.portable import PortableFileError, read_document
from modes.services import PlannedEntry, import_modes


def describe_action(entry: PlannedEntry, *, dry_run: bool) -> str:
    fields = f" ({', '.join(entry.fields)})" if entry.fields else ""
    if entry.action == "unchanged":
        return "would be left unchanged" if dry_run else "unchanged"
    return f"would be {entry.action}{fields}" if dry_run else f"{entry.action}{fields}"


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
        for entry in result.entries:
            self.stdout.write(f"{entry.kind} {entry.name}: {describe_action(entry, dry_run=dry_run)}")
        if result.default:
            self.stdout.write(f"default: {result.default}")
        tally = Counter(entry.action for entry in result.entries)
        counts = f"{tally['created']}, updated {tally['updated']}, left {tally['unchanged']} unchanged"
        if dry_run:
            self.stdout.write(f"Dry run, nothing changed: would have created {counts}.")
        else:
            self.stdout.write(f"Created {counts}. Catalog revision: {result.revision}.")
        for key, unresolved in result.unresolved_tool_ids.items():
            self.stderr.write(f"Warning (modes.W001): {unresolved_tools_message(key, unresolved)}", self.style.WARNING)
