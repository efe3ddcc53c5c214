"""
The admin's import form: coding agents' files chosen one by one (each known by its name), or a .zip of a
repository's folder (each known by its path in it), read within the import's size limit.
"""

import zipfile
import zlib

from django import forms
from django.conf import settings

from .base import AgentFile
from .formats import FORMATS


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


def uploaded_files(uploads) -> tuple[list[AgentFile], list[str]]:
    """The files uploaded (a .zip's members in its place), and what keeps any from being read."""
    files, problems, budget = [], [], settings.API_MAX_IMPORT_BYTES
    members = [member for upload in uploads for member in _members(upload, problems)]
    for path, size, read in members:
        budget -= size
        if budget < 0:
            return [], [*problems, f"The files are larger than the {settings.API_MAX_IMPORT_BYTES:,} bytes an import takes."]
        try:
            files.append(AgentFile(path, read().decode("utf-8-sig")))
        except UnicodeDecodeError:
            problems.append(f"{path}: not UTF-8 text.")
        except (zipfile.BadZipFile, RuntimeError, NotImplementedError, OSError, zlib.error) as error:
            problems.append(f"{path}: cannot be read from its archive ({error}).")  # corrupt, encrypted, unsupported
    return files, problems


def _members(upload, problems: list[str]):
    """(path, size, read) of an upload, or of each file in it if it is a .zip (its one top folder left out)."""
    if not upload.name.lower().endswith(".zip"):
        return [(upload.name, upload.size, upload.read)]
    try:
        archive = zipfile.ZipFile(upload)
    except zipfile.BadZipFile:
        problems.append(f"{upload.name}: not a .zip archive.")
        return []
    infos = [info for info in archive.infolist() if not info.is_dir()]
    tops = {info.filename.split("/", 1)[0] for info in infos}
    strip = len(tops) == 1 and all("/" in info.filename for info in infos)  # GitHub's "repo-main/" folder
    return [
        (info.filename.split("/", 1)[1] if strip else info.filename, info.file_size,
         lambda info=info: archive.read(info))
        for info in infos
    ]
