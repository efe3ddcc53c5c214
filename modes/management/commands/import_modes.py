"""
Imports modes, all of them or nothing: from a portable file written by export_modes, or from coding agents' mode
files (Roo Code, Kilo, OpenCode, Claude Code), one file or a repository's folder, with a fidelity report.
"""

from collections import Counter
from pathlib import Path

from django.core.management.base import CommandError

from aptix_site.commands import ServiceCommand

from modes.checks import unresolved_tools_message
from modes.coding_agents.base import fidelity_text
from modes.coding_agents.formats import FORMATS
from modes.coding_agents.importing import (
    agent_file_name, files_in_folder, files_of_one_file, import_agent_files, read_file
)
from modes.portable import PortableFileError, read_document
from modes.services import ImportResult, PlannedEntry, import_modes


def describe_action(entry: PlannedEntry, *, dry_run: bool) -> str:
    fields = f" ({', '.join(entry.fields)})" if entry.fields else ""
    if entry.action == "unchanged":
        return "would be left unchanged" if dry_run else "unchanged"
    return f"would be {entry.action}{fields}" if dry_run else f"{entry.action}{fields}"


class Command(ServiceCommand):  # a refusal at the end, such as the release gate's, is one line
    help = (
        "Import agent modes from a YAML or JSON file written by export_modes, or from coding agents' mode files: "
        "one file, or a repository's folder (each file's format known by its path, or as --from says)."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", metavar="PATH")
        parser.add_argument(
            "--from", dest="from_format", choices=list(FORMATS), help="Read PATH as this coding agent's files."
        )
        parser.add_argument("--dry-run", action="store_true", help="Validate and report; change nothing.")
        parser.add_argument("--update", action="store_true", help="Update modes whose key already exists.")

    def handle(self, *args, path, from_format, dry_run, update, **options):
        path = Path(path)
        name = None if path.is_dir() else agent_file_name(path, from_format=from_format)
        try:
            if path.is_dir() or name:
                files, unread = (
                    files_in_folder(path, from_format=from_format) if path.is_dir()
                    else files_of_one_file(path, name, from_format=from_format)
                )
                imported = import_agent_files(
                    files=files, from_format=from_format, update=update, dry_run=dry_run, unread=unread
                )
                result, report = imported.result, imported.report
            else:
                result, report = import_modes(mode_file=read_document(read(path)), update=update, dry_run=dry_run), []
        except PortableFileError as error:
            problems = "\n".join(f"  {problem}" for problem in error.problems)
            raise CommandError(f"{path} was not imported; nothing changed:\n{problems}") from error
        self.write_result(result, dry_run=dry_run)
        if report:
            self.stdout.write("Fidelity report:")
            for line in report:
                self.stdout.write(f"  {fidelity_text(line)}")

    def write_result(self, result: ImportResult, *, dry_run: bool) -> None:
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


def read(path: Path) -> str:
    """The text of the file at path, read as a folder's files are: a FIFO, a device or a file larger than an import
    takes is refused before it is read, in one line."""
    file = read_file(path, str(path))
    if isinstance(file, str):
        raise CommandError(file)
    return file.content
