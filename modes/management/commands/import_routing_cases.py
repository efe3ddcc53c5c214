"""Imports routing cases from a JSON Lines or CSV file (as export_routing_cases writes them), all of them or none."""

from pathlib import Path

from django.core.management.base import CommandError

from aptix_site.commands import ServiceCommand
from modes.management.commands.import_modes import read
from modes.routing.files import FILE_FORMATS, import_cases


class Command(ServiceCommand):
    help = "Import routing cases from a .jsonl or .csv file: every case, or none if any has a problem."

    def add_arguments(self, parser):
        parser.add_argument("path", metavar="PATH")
        parser.add_argument("--format", choices=FILE_FORMATS, help="Read PATH as this; by default, by its extension.")
        parser.add_argument("--update", action="store_true", help="Change the expected mode of cases that exist.")
        parser.add_argument("--dry-run", action="store_true", help="Validate and report; change nothing.")

    def handle(self, *args, path, format, update, dry_run, **options):
        path = Path(path)
        file_format = format or path.suffix.lstrip(".").lower()
        if file_format not in FILE_FORMATS:
            raise CommandError(f"Cannot tell the format of {path}: name it .jsonl or .csv, or pass --format.")
        counts = import_cases(text=read(path), file_format=file_format, update=update, dry_run=dry_run)
        done = "Dry run, nothing changed: would have created" if dry_run else "Created"
        self.stdout.write(f"{done} {counts['created']}, updated {counts['updated']}, left {counts['unchanged']} unchanged.")
