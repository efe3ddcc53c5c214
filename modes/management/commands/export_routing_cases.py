"""Writes the routing cases as JSON Lines or CSV, which import_routing_cases reads back."""

from aptix_site.commands import ServiceCommand
from modes.routing.files import FILE_FORMATS, export_cases


class Command(ServiceCommand):
    help = "Print the routing cases as JSON Lines (the default) or CSV."

    def add_arguments(self, parser):
        parser.add_argument("--format", choices=FILE_FORMATS, default="jsonl")

    def handle(self, *args, format, **options):
        self.stdout.write(export_cases(file_format=format), ending="")
