"""
A repository's coding-agent files imported into the catalog: each file read by its format, the modes of all of them
planned as one portable import (all or nothing, one revision, the same per-field diff and --update rule), with one
fidelity report; and the files of a folder on disk, read without leaving it.
"""

import io
import os
import stat
from collections import Counter
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from django.conf import settings

from ..portable import MODE_SECTION, ModeFile, PortableFileError, check_entry
from ..services import UPDATE, ImportResult, import_modes
from .base import DROPPED, AgentFile, Fidelity, Reading, problem
from .formats import FORMATS, format_of, recognizer
from .opencode import prompt_files_named
from .roo import RULES_FOLDERS, has_rules_beside


SKIPPED_FOLDERS = {".git", "node_modules"}  # a repository's history and its dependencies hold no modes of its own


@dataclass(frozen=True)
class AgentImport:
    result: ImportResult
    report: list[Fidelity]
    skipped: list[str]  # the paths of the files given that no format reads: not read, and said to be


def import_agent_files(
    *, files: list[AgentFile], from_format: str | None, update: bool, dry_run: bool, imported_by=None,
    unread: list[str] = (),
) -> AgentImport:
    """
    Every mode of the files, or none; PortableFileError lists every problem, each naming its file and mode, with
    unread's (the files that could not be read from disk or an upload), so that one run reports them all. Files that
    are no coding agent's (by their paths, when from_format is not given) are skipped, and listed.
    """
    reading = read_agent_files(files, from_format=from_format, update=update)
    if unread or reading.problems:
        raise PortableFileError([*unread, *reading.problems])
    entries = tuple(
        check_entry(index, entry, MODE_SECTION, where=f"{path}: mode {entry['key']!r}")
        for index, (path, entry) in enumerate(reading.modes)
    )
    result = import_modes(
        mode_file=ModeFile(entries=entries), update=update, dry_run=dry_run, imported_by=imported_by,
        ids_follow_keys=True,  # judged under the catalog's lock, so that an import of the key just committed is seen
    )
    return AgentImport(result=result, report=reading.report, skipped=reading.skipped)


def read_agent_files(files: list[AgentFile], *, from_format: str | None, update: bool) -> Reading:
    """
    The modes of the files, merged across files by key: each file read by the format that recognizes its path, or
    every file by from_format (which reads a file of another name as its main file). A prompt file that a config
    names is read with that config.
    """
    problems = [problem for file in files if (problem := file_problem(file))]
    # A repository has one file at a path: the second sent under it (REST, the admin's files, a .zip's repeated
    # member) would replace the first unsaid where a path names one file (a config's prompt file).
    repeated = sorted(path for path, count in Counter(file.path for file in files).items() if count > 1)
    problems += [f"{path}: given more than once; a repository has one file at a path." for path in repeated]
    formats = {file.path: FORMATS[from_format] if from_format else format_of(file.path) for file in files}
    for config in (file for file in files if formats[file.path] is not None):
        for path in prompt_files_named(config):
            formats[path] = formats.get(path) or formats[config.path]
    by_format, skipped = {}, []
    for file in files:
        if (format := formats[file.path]) is not None:
            by_format.setdefault(format.name, []).append(file)
        else:
            skipped.append(file.path)
    if not by_format:
        wanted = f"{from_format}'s" if from_format else "a coding agent's"
        return Reading(problems=[*problems, f"No file holds {wanted} modes (docs/coding-agents.md lists their paths)."])
    readings = [FORMATS[name].read(sorted(group, key=lambda file: file.path)) for name, group in by_format.items()]
    merged = Reading(
        skipped=skipped,
        report=[line for reading in readings for line in reading.report],
        problems=[*problems, *(problem for reading in readings for problem in reading.problems)],
    )
    merged.modes = _one_per_key([mode for reading in readings for mode in reading.modes], update, merged)
    return merged


def _one_per_key(modes: list[tuple[str, dict]], update: bool, merged: Reading) -> list[tuple[str, dict]]:
    """
    One entry per key: a key in two files is a problem, unless update says that the later file (by path) updates
    what the earlier gave; then each field it replaces is reported dropped from the earlier file.
    """
    entries, paths = {}, {}
    for path, entry in sorted(modes, key=lambda mode: mode[0]):
        key = entry["key"]
        if key not in entries:
            entries[key], paths[key] = entry, [path]
            continue
        if not update:
            merged.problems.append(
                problem(
                    path, key, f"{paths[key][0]} has this mode too; import with {UPDATE} to let {path} update it."
                )
            )
            continue
        earlier = entries[key]
        for name in sorted(set(earlier) & set(entry) - {"id", "key"}):
            if earlier[name] != entry[name]:
                how = f"{path} gives this mode too, and --update lets its value replace this file's"
                merged.report.append(Fidelity(paths[key][-1], key, name, DROPPED, how))
        entries[key] = {**earlier, **entry, "id": earlier["id"]}
        paths[key].append(path)
    return [(" and ".join(paths[key]), entry) for key, entry in entries.items()]


def file_problem(file: AgentFile) -> str | None:
    """What makes a file unreadable before any format looks at it: a path that leaves the folder, or its size."""
    parts = PurePosixPath(file.path).parts
    if not parts or file.path.startswith("/") or "\\" in file.path or ".." in parts or "." in file.path.split("/"):
        return f"{file.path!r}: a path must be relative to the repository's folder, with '/' and no '..' or '.'."
    if len(file.content.encode("utf-8", "surrogatepass")) > settings.API_MAX_IMPORT_BYTES:
        return f"{file.path}: larger than the {settings.API_MAX_IMPORT_BYTES:,} bytes an import takes."
    return None


def agent_file_name(path: Path, *, from_format: str | None) -> str | None:
    """
    The path a mode file has in its repository: the shortest end of path that a format (from_format, if given)
    recognizes, such as .roomodes or .claude/agents/x.md; with from_format, else its name. None: no coding agent's.
    """
    recognizes = recognizer(from_format)
    parts = path.absolute().parts[1:]
    for count in range(1, len(parts) + 1):
        if recognizes(name := "/".join(parts[-count:])):
            return name
    return path.name if from_format else None


def files_of_one_file(path: Path, name: str, *, from_format: str | None) -> tuple[list[AgentFile], list[str]]:
    """
    A mode file named as agent_file_name says, and what its modes take from beside it: the rules folders of Roo Code's
    and Kilo's modes, so that importing .roomodes alone gives its modes as a folder's import does.
    """
    root = path.absolute().parents[name.count("/")]
    read = read_file(path, name)
    files, problems = ([read], []) if isinstance(read, AgentFile) else ([], [read])
    if has_rules_beside(name, format_name=from_format):
        rules, unread = files_in_folder(root, from_format=from_format, within=RULES_FOLDERS)
        files, problems = [*files, *rules], [*problems, *unread]
    return files, problems


def files_in_folder(
    root: Path, *, from_format: str | None, within: tuple[str, ...] = ()
) -> tuple[list[AgentFile], list[str]]:
    """
    The mode files under root (those a format recognizes by their paths, or from_format's), and the problems met: a
    link that leaves root, a file too large or not UTF-8 text. Nothing else is read, and no link to a folder followed.
    within: the only folders of root to look in, if given.
    """
    root = root.resolve()
    recognizes = recognizer(from_format)
    files, problems = [], []
    for folder, folders, names in os.walk(root):
        folders[:] = [name for name in folders if name not in SKIPPED_FOLDERS]
        if within and Path(folder) == root:
            folders[:], names = [name for name in folders if name in within], []
        for path in (Path(folder, name) for name in folders):
            # Not walked; but a link out of root where mode files would be is said, not passed over.
            if path.is_symlink() and recognizes(f"{_relative(path, root)}/a.md") and _leaves(path, root):
                problems.append(_leaves(path, root))
        for path in (Path(folder, name) for name in names):
            if recognizes(_relative(path, root)):
                read = _read(path, root)
                (files if isinstance(read, AgentFile) else problems).append(read)
    # The prompt files OpenCode's and Kilo's configs name, wherever they are: part of those agents.
    named = {path for file in files for path in prompt_files_named(file)} - {file.path for file in files}
    for relative in sorted(named):
        if os.path.lexists(root / relative):
            read = _read(root / relative, root)
            (files if isinstance(read, AgentFile) else problems).append(read)
    return files, problems


def _relative(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def _leaves(path: Path, root: Path) -> str | None:
    try:
        if path.resolve().is_relative_to(root):
            return None
    except RuntimeError:  # Python 3.11's resolve() on a loop of links
        return f"{_relative(path, root)}: a link in a loop of links, which leads to no file."
    return f"{_relative(path, root)}: a link to {os.readlink(path)}, outside the folder imported."


def _read(path: Path, root: Path) -> AgentFile | str:
    """The file at path, or the problem that keeps it from being read."""
    relative = _relative(path, root)
    try:
        if leaves := _leaves(path, root):
            return leaves
    except OSError as error:
        return f"{relative}: cannot be read ({error.strerror or error})."
    return read_file(path, relative)


def read_file(path: Path, name: str) -> AgentFile | str:
    """The file at path as the mode file name, or the problem that keeps it from being read (import_modes's PATH too)."""
    limit = settings.API_MAX_IMPORT_BYTES
    try:
        # Judged by what was opened, not by the name: a FIFO opened without waiting for a writer, a device, or a file
        # that grows is refused, whatever the name meant a moment before.
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as stream:
            if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
                return f"{name}: not a regular file."
            data = stream.read(limit + 1)
        if len(data) > limit:
            return f"{name}: larger than the {limit:,} bytes an import takes."
        # As read_text reads it: a byte-order mark is not part of the text, and line ends become "\n".
        return AgentFile(name, io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig").read())
    except (OSError, UnicodeDecodeError) as error:
        return f"{name}: cannot be read ({getattr(error, 'strerror', None) or error})."
