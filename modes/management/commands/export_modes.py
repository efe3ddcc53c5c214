"""
Writes the catalog's modes and declared tools, or an earlier revision of them, to a file import_modes reads back;
or, with --to, the published modes as a coding agent's files in a folder, with a fidelity report.
"""

import os
from pathlib import Path

from django.core.management.base import CommandError

from aptix_site.commands import ServiceCommand
from modes.coding_agents.base import AgentFile, fidelity_text
from modes.coding_agents.formats import FORMATS
from modes.management.revisions import add_revision_argument, catalog_at
from modes.portable import dump_document, export_document


class Command(ServiceCommand):
    help = "Export the agent modes and declared tools to YAML (default) or JSON, or as a coding agent's mode files."

    def add_arguments(self, parser):
        parser.add_argument("--custom-only", action="store_true", help="Leave out the built-in modes.")
        parser.add_argument("--format", choices=["yaml", "json"], help="The portable file's format (default yaml).")
        parser.add_argument(
            "--to", choices=list(FORMATS), help="Write the modes as this coding agent's files, into the --output folder."
        )
        parser.add_argument("--output", help="File to write (a folder with --to); standard output if omitted.")
        parser.add_argument(
            "--force", action="store_true", help="Overwrite the --output file, or --to's files, that exist."
        )
        add_revision_argument(parser, what="export")

    def handle(self, *args, custom_only, format, to, output, force, revision, **options):
        if custom_only and revision is not None:
            # A revision keeps the portable format, which does not say where a mode came from.
            raise CommandError("--custom-only cannot be combined with --revision: a revision is exported whole.")
        if to and not output:
            raise CommandError("--to writes a coding agent's files into the folder --output names; give --output.")
        if to and format:
            raise CommandError("--format is the portable file's; --to writes a coding agent's own files.")
        if force and not output:
            raise CommandError("--force lets --output overwrite files; standard output has none.")
        catalog = catalog_at(revision)
        modes = catalog.exported_modes(custom_only=custom_only)
        if to:
            self.write_agent_files(FORMATS[to].write(modes), Path(output), force=force)
            return
        document = export_document(modes=modes, declared_tools=list(catalog.declared_tools))
        text = dump_document(document, file_format=format or "yaml")
        if not output:
            self.stdout.write(text, ending="")
            return
        try:
            # Opened to create, as --to's files are written: an earlier export or a file by hand is kept unless --force,
            # and a link counts as a file even when it leads nowhere.
            with open(output, "w" if force else "x", encoding="utf-8") as file:
                file.write(text)
        except FileExistsError:
            raise CommandError(f"{output} exists; pass --force to overwrite it.") from None
        except OSError as error:
            raise CommandError(f"Cannot write {output}: {error.strerror}.") from error
        self.stderr.write(f"Exported {len(modes)} modes and {len(catalog.declared_tools)} declared tools to {output}.")

    def write_agent_files(self, writing, folder: Path, *, force: bool) -> None:
        """
        Every file, or none if one exists already (without --force), is a folder, or would be written through a link
        out of folder: all that is judged before anything is written. A write that fails on its way (a full disk)
        leaves the files before it written, and says which one failed.
        """
        inside = folder.resolve()
        leaving = [file.path for file in writing.files if not _resolves_inside(folder / file.path, inside)]
        if leaving:
            raise CommandError(f"These files would be written out of {folder} through a link (or a loop of links); "
                               f"nothing was written: {', '.join(leaving)}.")
        # A link counts as a file even when it leads nowhere: writing would create its target.
        existing = [file.path for file in writing.files if os.path.lexists(folder / file.path)]
        if existing and not force:
            raise CommandError(f"These files exist in {folder}; pass --force to overwrite them: {', '.join(existing)}.")
        if folders := [file.path for file in writing.files if (folder / file.path).is_dir()]:
            raise CommandError(f"These are folders in {folder}, not files; nothing was written: {', '.join(folders)}.")
        if blocked := [file.path for file in writing.files if _file_in_a_folders_place(folder, file.path)]:
            raise CommandError(f"A file in {folder} stands where a folder of these would be, and files are not "
                               f"folders; nothing was written: {', '.join(blocked)}.")
        for file in writing.files:
            write_file(folder / file.path, file)
        for file in writing.files:
            self.stdout.write(f"Wrote {folder / file.path}")
        self.stdout.write("Fidelity report:")
        for line in writing.report:
            self.stdout.write(f"  {fidelity_text(line)}")


def _file_in_a_folders_place(folder: Path, path: str) -> bool:
    """Whether something other than a folder is where a folder of path would be (a file named .roo, the output)."""
    return any(os.path.lexists(folder / parent) and not (folder / parent).is_dir() for parent in Path(path).parents)


def _resolves_inside(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder)
    except RuntimeError:  # Python 3.11's resolve() on a loop of links: nowhere to write
        return False


def write_file(path: Path, file: AgentFile) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(file.content, encoding="utf-8")
    except OSError as error:
        raise CommandError(f"Cannot write {path}: {error.strerror}.") from error
