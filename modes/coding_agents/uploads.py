"""
The admin's import form: coding agents' files chosen one by one (each known by its name), or a .zip of a
repository's folder (each known by its path in it), read within the import's size limit.
"""

import lzma
import zipfile
import zlib

from django import forms
from django.conf import settings

from .base import AgentFile
from .formats import FORMATS, recognizer
from .importing import SKIPPED_FOLDERS


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files in one field, as Django's documentation writes it (forms.FileField takes one)."""

    widget = MultipleFileInput

    def clean(self, data, initial=None):
        return [super(MultipleFileField, self).clean(item, initial) for item in (data or [None])]


class ImportForm(forms.Form):
    files = MultipleFileField(help_text="Mode files, or a .zip of a repository's folder.")
    format = forms.ChoiceField(
        choices=[("", "Known by each file's path"), *((name, name) for name in FORMATS)], required=False,
        help_text="Read every file as this coding agent's.",
    )
    update = forms.BooleanField(required=False, help_text="Update modes whose key exists already.")
    dry_run = forms.BooleanField(required=False, initial=True, help_text="Plan and report; change nothing.")


def uploaded_files(uploads, *, from_format: str | None) -> tuple[list[AgentFile], list[str]]:
    """
    The files uploaded, and what keeps any from being read. A file chosen by itself is read whatever its name; a .zip
    stands for a repository's folder, read as import_modes reads one: only the members a format recognizes by their
    paths (from_format's, if given), .git and node_modules left out.
    """
    files, problems, left = [], [], settings.API_MAX_IMPORT_BYTES
    members = [member for upload in uploads for member in _members(upload, from_format, problems)]
    for path, open_member in members:
        try:
            # Read no more than the import takes: a .zip member's stated size may lie (1 GB of zeros stated as 10).
            with open_member() as member:
                data = member.read(left + 1)
        except (zipfile.BadZipFile, RuntimeError, NotImplementedError, OSError, EOFError, zlib.error,
                lzma.LZMAError) as error:
            problems.append(f"{path}: cannot be read from its archive ({error}).")  # corrupt, encrypted, unsupported
            continue
        left -= len(data)
        if left < 0:
            return [], [*problems, f"The files are larger than the {settings.API_MAX_IMPORT_BYTES:,} bytes an import takes."]
        try:
            files.append(AgentFile(path, data.decode("utf-8-sig")))
        except UnicodeDecodeError:
            problems.append(f"{path}: not UTF-8 text.")
    return files, problems


def _members(upload, from_format: str | None, problems: list[str]):
    """(path, open) of an upload, or of each mode file in it if it is a .zip; open() gives a binary file to read."""
    if not upload.name.lower().endswith(".zip"):
        return [(upload.name, lambda: upload.open("rb"))]
    try:
        archive = zipfile.ZipFile(upload)
        infos = [info for info in archive.infolist() if not info.is_dir()]
    except (zipfile.BadZipFile, ValueError, EOFError, IndexError, OSError, NotImplementedError) as error:
        # zipfile raises more than BadZipFile for a damaged archive: a name not UTF-8, a header cut short
        problems.append(f"{upload.name}: not a .zip archive that can be read ({error}).")
        return []
    recognizes = recognizer(from_format)
    paths = _paths_in_repository([info.filename for info in infos], recognizes)
    return [
        (path, lambda info=info: archive.open(info))
        for info, path in zip(infos, paths)
        if recognizes(path) and not SKIPPED_FOLDERS.intersection(path.split("/"))
    ]


def _paths_in_repository(names: list[str], recognizes) -> list[str]:
    """
    The members' paths in the repository: without the one folder that holds them all when that is the repository's
    (GitHub's "repo-main/"), kept when it is part of the paths the formats know (a .zip of the .claude folder).
    """
    tops = {name.split("/", 1)[0] for name in names}
    if len(tops) != 1 or not all("/" in name for name in names):
        return names
    stripped = [name.split("/", 1)[1] for name in names]
    return stripped if sum(map(recognizes, stripped)) >= sum(map(recognizes, names)) else names
