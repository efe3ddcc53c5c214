"""Lists the mode catalog as a table, the agent_list_modes JSON payload, or Markdown."""

import json

from django.core.management.base import BaseCommand, CommandError

from modes.catalog import published_catalog
from modes.listing import render_markdown, render_table


class Command(BaseCommand):
    help = "List the agent modes, optionally filtered."

    def add_arguments(self, parser):
        parser.add_argument(
            "--filter", default="", help="Case-insensitive text to find in key, name, description or when-to-use."
        )
        parser.add_argument("--include-examples", action="store_true", help="Include example utterances (json).")
        parser.add_argument("--format", choices=["table", "json", "markdown"], default="table")

    def handle(self, *args, filter, include_examples, format, **options):
        if include_examples and format != "json":
            raise CommandError("--include-examples is for --format json: the table and Markdown list no examples.")
        catalog = published_catalog()
        modes = catalog.find(filter)
        if format == "json":
            listing = catalog.listing(text=filter, include_examples=include_examples)
            output = json.dumps(listing, indent=2, ensure_ascii=False)
        elif format == "markdown":
            output = render_markdown(modes, catalog=catalog.find(), filter_text=filter)
        else:
            output = render_table(modes)
        self.stdout.write(output)
