"""
Roo Code's custom modes, and Kilo's legacy ones (the same format), read into the catalog and written from it.

Roo Code keeps a workspace's modes in `.roomodes` and a user's in `custom_modes.yaml`; Kilo kept them in
`.kilocodemodes`. Each is `{"customModes": [mode, ...]}`, YAML (Roo Code reads it first) or JSON (its fallback), one
mapping per mode as modeConfigSchema says (packages/types/src/mode.ts): slug, name, roleDefinition, whenToUse,
description, customInstructions, groups, source; a mode exported with its rules adds rulesFiles
([{relativePath, content}], CustomModesManager.exportModeWithRules). A mode's rules are the files of
`.roo/rules-<slug>/` (Kilo: `.kilocode/rules-<slug>/`) beside the mode file, which Roo Code puts into the prompt, after
the mode's custom instructions, each under the heading "# Rules from <path>:" (core/prompts/sections/
custom-instructions.ts). The catalog keeps them in custom_instructions, under that same heading.

A group's fileRegex is handed to JavaScript's `new RegExp(pattern)`: it is checked as JavaScript reads it
(modes.coding_agents.javascript_regex).
"""

import difflib
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath

import yaml

from ..models import AgentMode
from ..portable import PORTABLE_FIELDS, PortableFileError, load_text
from .base import (
    APPROXIMATED, CARRIED, DROPPED, GROUP_OPTIONS, TOOL_GROUPS, WHOLE_IN_DESCRIPTION, AgentFile, Fidelity, Reading,
    YAML_12_NOT_TEXT, Writing, YAML12Loader, group_line, key_problem, mode_id, mode_key, parse_group_line, problem,
    takes_options, when_to_use,
)
from .javascript_regex import javascript_regex_problem


@dataclass(frozen=True)
class _Agent:
    """What differs between the coding agents that use this format: their name, mode file and rules folder."""

    name: str
    modes_file: str
    rules_folder: str
    ignored_groups: tuple[str, ...] = ()  # groups it leaves out of a mode as it reads it
    sources: tuple[str, ...] = ("global", "project")  # the sources its schema takes: any other refuses the file
    own_fields: dict = field(default_factory=dict)  # its fields beyond Roo Code's (text, as its schema says): meaning


AGENTS = {
    # Roo Code strips the browser group as it reads a mode (packages/types/src/mode.ts, deprecatedToolGroups).
    "roo": _Agent(name="Roo Code", modes_file=".roomodes", rules_folder=".roo", ignored_groups=("browser",)),
    # Kilo's modeConfigSchema adds a source and three fields of its own.
    "kilo": _Agent(name="Kilo", modes_file=".kilocodemodes", rules_folder=".kilocode",
                   sources=("global", "project", "organization"),
                   own_fields={"iconName": "the icon it shows for the mode", "preferredProviderId": "the provider it "
                               "prefers", "preferredModelId": "the model it prefers"}),
}
GLOBAL_MODES_FILE = "custom_modes.yaml"  # Roo Code's (and Kilo's) file of a user's modes, in its settings folder
SLUG_PATTERN = re.compile(r"[a-zA-Z0-9-]+")  # modeConfigSchema's
# The fields modeConfigSchema knows, and rulesFiles, which an exported mode adds; Roo Code drops any other field.
MODE_FIELDS = (
    "slug", "name", "roleDefinition", "whenToUse", "description", "customInstructions", "groups", "source",
    "rulesFiles",
)
# Files Roo Code leaves out of a rules folder (shouldIncludeRuleFile): caches and system files.
IGNORED_RULES_SUFFIXES = (
    ".DS_Store", ".bak", ".cache", ".crdownload", ".db", ".dmp", ".dump", ".eslintcache", ".lock", ".log", ".old",
    ".part", ".partial", ".pyc", ".pyo", ".stackdump", ".swo", ".swp", ".temp", ".tmp",
)
DISPLAY_NAME_LENGTH = AgentMode._meta.get_field("display_name").max_length
# The characters Roo Code rewrites in a whole mode file before it reads it as YAML (CustomModesManager's
# cleanInvisibleCharacters): a no-break space to a space, zero-width ones out, dashes to '-', curly quotes to straight.
REWRITTEN_BY_ROO = re.compile("[\u00a0\u200b\u200c\u200d\u2010-\u2015\u2212\u2018\u2019\u201c\u201d]")
REWRITES = {"\u00a0": " ", "\u200b": "", "\u200c": "", "\u200d": "", "\u2018": "'", "\u2019": "'", "\u201c": '"',
            "\u201d": '"'}  # and every dash: '-'


# Paths


def is_roo_file(path: str) -> bool:
    """A Roo Code mode file (`.roomodes`, `custom_modes.yaml`, in any folder) or a file of `.roo/rules-<slug>/`."""
    name = PurePosixPath(path).name
    return name in (".roomodes", GLOBAL_MODES_FILE) or _rules_location(path, AGENTS["roo"]) is not None


def has_rules_beside(path: str, *, format_name: str | None) -> bool:
    """
    Whether a mode file is one whose modes take rules from the rules folders beside it: Roo Code's or Kilo's mode file,
    or any file read as one (format_name), other than a rules file.
    """
    if any(_rules_location(path, agent) for agent in AGENTS.values()):
        return False
    names = (".roomodes", GLOBAL_MODES_FILE, ".kilocodemodes")
    return format_name in AGENTS or (format_name is None and PurePosixPath(path).name in names)


RULES_FOLDERS = tuple(agent.rules_folder for agent in AGENTS.values())


def is_kilo_modes_file(path: str) -> bool:
    """Kilo's legacy mode file (`.kilocodemodes`, in any folder) or a rules file of `.kilocode/rules-<slug>/`."""
    return PurePosixPath(path).name == ".kilocodemodes" or _rules_location(path, AGENTS["kilo"]) is not None


@dataclass(frozen=True)
class _RulesLocation:
    folder: str  # the folder that holds the rules folder, as the mode file beside it does ('' for the top)
    slug: str
    shown: str  # the path Roo Code shows in its heading: relative to that folder (the workspace)


def _rules_location(path: str, agent: _Agent) -> _RulesLocation | None:
    """Where a rules file is, when path is one that the agent reads into a mode's prompt; None otherwise."""
    found = re.fullmatch(rf"(?:(.*)/)?({re.escape(agent.rules_folder)}/rules-([^/]+)/.+)", path)
    if found is None or path.endswith(IGNORED_RULES_SUFFIXES) or PurePosixPath(path).name == "Thumbs.db":
        return None
    return _RulesLocation(folder=found.group(1) or "", slug=found.group(3), shown=found.group(2))


def _folder(path: str) -> str:
    parent = str(PurePosixPath(path).parent)
    return "" if parent == "." else parent


# Reading


@dataclass
class _ModeRead:
    """One mode as it is read: where it is, what names it, its entry so far, what became of its fields."""

    path: str
    name: str  # the catalog key once known; until then the slug, or the mode's place in the file
    agent: _Agent
    report: list[Fidelity] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    entry: dict = field(default_factory=dict)
    slug: str | None = None
    rules: dict[str, str] = field(default_factory=dict)  # shown path: content, of rulesFiles and the rules folder

    def note(self, field_name: str, fate: str, how: str = "", *, path: str | None = None) -> None:
        """A line of the report: of a field of the mode file, or (path) of a rules file, which is its own field."""
        self.report.append(Fidelity(path=path or self.path, mode=self.name, field=field_name, fate=fate, how=how))

    def refuse(self, message: str) -> None:
        self.problems.append(problem(self.path, self.name, message))


def read_roo(files: list[AgentFile], *, format_name: str) -> Reading:
    """
    The modes of Roo Code's (format_name "roo") or Kilo's ("kilo") files, with their rules: every mode of a mode file
    (any file that is not a rules file, so that a file of another name can be read as one), and each rules file added
    to the mode of its slug in the mode files of its folder.
    """
    agent = AGENTS[format_name]
    reading = Reading()
    modes, rules_files = [], []
    for file in files:
        location = _rules_location(file.path, agent)
        if location is not None:
            rules_files.append((file, location))
        elif slug := _ignored_rules_file_slug(file.path, agent):
            how = f"{agent.name} leaves cache and system files out of a mode's rules"
            reading.report.append(Fidelity(file.path, mode_key(slug) or slug, file.path, DROPPED, how))
        else:
            modes += _read_mode_file(file, agent=agent, format_name=format_name, problems=reading.problems)
    _add_rules_files(modes, rules_files, agent=agent, report=reading.report)
    for mode in modes:
        _add_rules(mode)
        reading.report += mode.report
        reading.problems += mode.problems
        if not mode.problems:
            reading.modes.append((mode.path, mode.entry))
    return reading


def _ignored_rules_file_slug(path: str, agent: _Agent) -> str | None:
    """The slug of the rules folder a cache or system file is in (Roo Code reads no such file); None for others."""
    found = re.search(rf"(?:^|/){re.escape(agent.rules_folder)}/rules-([^/]+)/", path)
    return found.group(1) if found else None


def _read_mode_file(file: AgentFile, *, agent: _Agent, format_name: str, problems: list[str]) -> list[_ModeRead]:
    """The modes of one mode file; problems gets those of the file as a whole."""
    written = file.content.removeprefix("\ufeff")  # Roo Code strips a byte order mark before it reads
    if not written.strip():
        return []  # as Roo Code reads it: an empty file holds no modes
    try:  # as Roo Code's yaml package reads it, YAML 1.2: yes and 2024-01-01 are text, 1e3 is a number
        document, text = _load_as_roo_code(written, json_fallback=PurePosixPath(file.path).name != GLOBAL_MODES_FILE)
    except PortableFileError as error:
        problems += [problem(file.path, None, message) for message in error.problems]
        return []
    if not isinstance(document, dict) or not isinstance(document.get("customModes"), list):
        problems.append(problem(file.path, None, f"{agent.name}'s mode file is a mapping with a customModes list."))
        return []
    modes, as_written = [], _modes_as_written(written, text, document)
    for index, raw in enumerate(document["customModes"]):
        if isinstance(raw, dict):
            mode = _read_mode(raw, index=index, path=file.path, agent=agent, format_name=format_name)
            _note_rewritten(mode, raw, as_written[index] if index < len(as_written) else None)
            modes.append(mode)
        else:
            problems.append(problem(file.path, None, f"customModes[{index}]: a mode is a mapping of {agent.name}'s "
                                                     "fields (slug, name, roleDefinition, groups, ...)."))
    _refuse_repeated_modes(modes)
    return modes


def as_roo_code_reads(text: str) -> str:
    """A mode file's text as Roo Code reads it: with REWRITTEN_BY_ROO's characters rewritten, in the whole file."""
    return REWRITTEN_BY_ROO.sub(lambda match: REWRITES.get(match.group(0), "-"), text)


def _load_as_roo_code(written: str, *, json_fallback: bool) -> tuple[object, str]:
    """
    (the document, the text it was read from): the file's text as Roo Code rewrites it, or, when that is not YAML,
    the file as written if it is JSON and json_fallback (Roo Code's fallback, for a workspace's mode file only:
    JSON.parse of the original). PortableFileError otherwise, with what is wrong with the rewritten text, as Roo Code
    reports its YAML error.
    """
    text = as_roo_code_reads(written)
    try:
        return load_text(text, yaml_loader=YAML12Loader), text
    except PortableFileError:
        if text == written or not json_fallback or not _is_json(written):
            raise
    return load_text(written, yaml_loader=YAML12Loader), written  # read as JSON, with load_text's checks


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _modes_as_written(written: str, text: str, document: dict) -> list:
    """The modes as the file's own characters give them, when Roo Code's rewriting changed the text it read; else []."""
    if text == written:
        return []
    try:
        as_written = load_text(written, yaml_loader=YAML12Loader)
    except PortableFileError:
        return []  # the rewriting made the file readable (“...” as quotes): its fields are what Roo Code reads
    modes = as_written.get("customModes") if isinstance(as_written, dict) else None
    return modes if isinstance(modes, list) and len(modes) == len(document["customModes"]) else []


def _note_rewritten(mode: _ModeRead, raw: dict, as_written) -> None:
    """
    A field whose value Roo Code's rewriting changed is approximated: the catalog takes it as Roo Code reads it. Text,
    or text inside a field: a group's fileRegex (an en dash in a character class becomes a range), a rule's content.
    """
    if not isinstance(as_written, dict):
        return
    changed = {name for name, value in raw.items() if value != as_written.get(name)}
    how = f"read as {mode.agent.name} reads it, which rewrites curly quotes, dashes, no-break and zero-width spaces " \
          "in the whole file first"
    mode.report = [
        replace(line, fate=APPROXIMATED if line.fate == CARRIED else line.fate,
                how="; ".join(filter(None, [line.how, how])))
        if line.field in changed and line.path == mode.path else line
        for line in mode.report
    ]


def _refuse_repeated_modes(modes: list[_ModeRead]) -> None:
    """Roo Code refuses a file with two modes of one slug; two slugs of one key (Docs, docs) are one catalog mode."""
    seen_slugs, seen_keys = set(), set()
    for mode in modes:
        key = mode.entry.get("key")
        if mode.slug is None:
            continue
        if mode.slug in seen_slugs:
            mode.refuse(f"slug: {mode.slug!r} is the slug of an earlier mode of this file; {mode.agent.name} "
                        "refuses a file with two modes of one slug.")
        elif key is not None and key in seen_keys:
            mode.refuse(f"slug: {mode.slug!r} becomes the key {key!r}, as an earlier mode's slug of this file does.")
        seen_slugs.add(mode.slug)
        seen_keys.add(key)


def _read_mode(raw: dict, *, index: int, path: str, agent: _Agent, format_name: str) -> _ModeRead:
    slug = raw.get("slug")
    mode = _ModeRead(path=path, name=slug if isinstance(slug, str) else f"customModes[{index}]", agent=agent)
    _read_slug(mode, raw, format_name=format_name)
    _read_name(mode, raw)
    _read_role_definition(mode, raw)
    _read_when_to_use(mode, raw)
    instructions = _text(mode, raw, "customInstructions") if "customInstructions" in raw else None
    mode.entry["custom_instructions"] = instructions or ""  # as written; the rules follow it (_add_rules)
    if instructions is not None:
        mode.note("customInstructions", CARRIED)
    _read_groups(mode, raw)
    if "source" in raw:
        _read_source(mode, raw["source"])
    if "rulesFiles" in raw:
        _read_rules_files(mode, raw["rulesFiles"])
    for name in (name for name in raw if name not in MODE_FIELDS):
        if name in agent.own_fields and _text(mode, raw, name) is not None:
            mode.note(name, DROPPED, f"{agent.own_fields[name]}: the catalog has no field for it")
        elif name not in agent.own_fields:
            guess = _meant(str(name))
            how = f"not a {agent.name} mode field" + (f"; did you mean {guess}?" if guess else "")
            mode.note(str(name), DROPPED, how)
    return mode


def _read_source(mode: _ModeRead, source) -> None:
    sources = mode.agent.sources
    if source not in sources:
        named = f"{', '.join(map(repr, sources[:-1]))} or {sources[-1]!r}"
        mode.refuse(f"source: {mode.agent.name} takes {named} only, and refuses the whole file for any other.")
        return
    mode.note("source", DROPPED, f"where {mode.agent.name} keeps the mode ({', '.join(sources)}): the catalog is the "
                                 "one place modes come from now, and an export writes project modes")


def _meant(name: str) -> str | None:
    """The field an unknown one is a slip for (whenToUSE, rolesDefinition), if one is close; not any other field."""
    fields = {field_name.casefold(): field_name for field_name in MODE_FIELDS}
    guess = difflib.get_close_matches(name.casefold(), fields, n=1, cutoff=0.8)
    return fields[guess[0]] if guess else None


def _text(mode: _ModeRead, raw: dict, name: str, *, required: bool = False) -> str | None:
    """raw[name] when it is text (modeConfigSchema takes nothing else), or None and a problem."""
    value = raw.get(name)
    if name not in raw and required:
        mode.refuse(f"{name}: every {mode.agent.name} mode needs one.")
    elif value is None:
        mode.refuse(f"{name}: is empty (null); give it text, or leave the field out.")
    elif not isinstance(value, str):
        quote = " (in YAML, put it in quotes)" if isinstance(value, (bool, int, float)) else ""
        mode.refuse(f"{name}: must be text{quote}.")
    elif required and not value:
        mode.refuse(f"{name}: must not be empty.")
    else:
        return value
    return None


def _read_slug(mode: _ModeRead, raw: dict, *, format_name: str) -> None:
    slug = _text(mode, raw, "slug", required=True)
    if slug is None:
        return
    mode.slug = slug
    if not SLUG_PATTERN.fullmatch(slug):
        mode.refuse(f"slug: {mode.agent.name} takes letters, digits and '-' only.")
        return
    key = mode_key(slug)
    if key is None:
        mode.refuse(f"slug: {key_problem(slug)}")
        return
    mode.name = key
    mode.entry.update(id=mode_id(format_name, slug), key=key)
    if key == slug.replace("-", "_"):
        mode.note("slug", CARRIED)
    else:
        mode.note("slug", APPROXIMATED, f"the key {key!r} is in lower case")


def _read_name(mode: _ModeRead, raw: dict) -> None:
    name = _text(mode, raw, "name", required=True)
    if name is None:
        return
    if len(name) <= DISPLAY_NAME_LENGTH:
        mode.entry["display_name"] = name
        mode.note("name", CARRIED)
        return
    # A name no catalog mode can have; the start of it names the mode as well as the whole did.
    mode.entry["display_name"] = name[: DISPLAY_NAME_LENGTH - 1].rstrip() + "…"
    mode.note("name", APPROXIMATED, f"longer than {DISPLAY_NAME_LENGTH} characters: cut, with '…' at the end")


def _read_role_definition(mode: _ModeRead, raw: dict) -> None:
    role_definition = _text(mode, raw, "roleDefinition", required=True)
    if role_definition is not None:
        mode.entry["prompt"] = role_definition  # as written: Markdown, blank lines and indentation kept
        mode.note("roleDefinition", CARRIED)


def _read_when_to_use(mode: _ModeRead, raw: dict) -> None:
    """The one-line when_to_use from whenToUse, else from description; description kept as written."""
    texts = {name: _text(mode, raw, name) for name in ("whenToUse", "description") if name in raw}
    when, description = texts.get("whenToUse"), texts.get("description")
    mode.entry["description"] = description or ""
    if when is not None and when.strip():
        sentence, whole, how = when_to_use(when)
        mode.entry["when_to_use"] = sentence
        if whole is not None and description:  # too long for the field, and the description is the description's
            mode.entry["description"] = f"{description.rstrip()}\n\n{whole}"
            how = how.replace(WHOLE_IN_DESCRIPTION, "; the whole text follows the description, after a blank line")
        elif whole is not None:
            mode.entry["description"] = whole
        mode.note("whenToUse", APPROXIMATED if how else CARRIED, how or "")
        if description is not None:
            mode.note("description", CARRIED)
        return
    if when is not None:
        mode.note("whenToUse", DROPPED, "empty: the when-to-use is made of the description")
    if description is not None and description.strip():
        sentence, _, how = when_to_use(description)
        mode.entry["when_to_use"] = sentence
        made = "the when-to-use is made of it, as there is no whenToUse"
        mode.note("description", APPROXIMATED, f"{made}: {how}" if how else made)
    elif len(texts) == sum(text is not None for text in texts.values()):  # no text of the wrong type, said already
        mode.refuse("needs a whenToUse or a description: the catalog shows every mode with a one-line when-to-use "
                    "sentence.")


def _read_groups(mode: _ModeRead, raw: dict) -> None:
    """Each group as a tool_group_hints line, in the catalog's words, which are Roo Code's."""
    if "groups" not in raw:
        mode.refuse(f"groups: every {mode.agent.name} mode needs a groups list (it may be empty: []).")
        return
    groups = raw["groups"]
    if not isinstance(groups, list):
        mode.refuse("groups: must be a list of tool groups, such as [read, edit].")
        return
    lines, left_out, seen = [], [], set()
    for index, group in enumerate(groups):
        read = _read_group(mode, group, where=f"groups[{index}]")
        if read is None:
            continue
        name, options, unknown = read
        if name in seen and name not in mode.agent.ignored_groups:
            mode.refuse(f"groups[{index}]: {name!r} is given twice; {mode.agent.name} refuses a mode with a group "
                        "given twice.")
        seen.add(name)
        left_out += unknown
        lines.append(group_line(name, options or None))
    mode.entry["tool_group_hints"] = lines
    if left_out:
        unknown = ", ".join(left_out)
        mode.note("groups", APPROXIMATED, f"options {mode.agent.name} does not know were left out: {unknown}")
    else:
        mode.note("groups", CARRIED)


def _read_group(mode: _ModeRead, group, *, where: str) -> tuple[str, dict, list[str]] | None:
    """(group, its known options, the names of the others), or None and a problem."""
    name, options = group, {}
    if isinstance(group, list):
        if len(group) != 2 or not isinstance(group[1], dict):
            mode.refuse(f"{where}: a group with options is a pair: [edit, {{fileRegex: ..., description: ...}}].")
            return None
        name, options = group
    if not isinstance(name, str) or name not in TOOL_GROUPS:
        known = ", ".join(group for group in TOOL_GROUPS if group not in mode.agent.ignored_groups)
        mode.refuse(f"{where}: {name!r} is not one of {mode.agent.name}'s tool groups ({known}).")
        return None
    known = {option: value for option, value in options.items() if option in GROUP_OPTIONS}
    for option, value in known.items():
        if not isinstance(value, str):
            mode.refuse(f"{where}: {option} must be text.")
            return None
    regex = known.get("fileRegex")
    if regex and (why := javascript_regex_problem(regex)):
        mode.refuse(f"{where}: the fileRegex {regex!r} is not a regular expression JavaScript takes: {why}.")
        return None
    unknown = [f"{name} {option}" for option in options if option not in GROUP_OPTIONS]
    return name, known, unknown


def _read_rules_files(mode: _ModeRead, rules_files) -> None:
    """An exported mode's rules, which Roo Code's import writes into the mode's rules folder."""
    if not isinstance(rules_files, list) or not all(isinstance(rule, dict) for rule in rules_files):
        mode.refuse("rulesFiles: must be a list of {relativePath, content} mappings.")
        return
    skipped = 0
    for index, rule in enumerate(rules_files):
        relative, content = rule.get("relativePath"), rule.get("content")
        if not all(isinstance(value, str) for value in (relative, content)):
            mode.refuse(f"rulesFiles[{index}]: relativePath and content must be text.")
            continue
        if not relative or not content.strip():
            skipped += 1  # Roo Code's import skips it too
            continue
        parts = PurePosixPath(relative.replace("\\", "/")).parts
        if not parts or relative.startswith(("/", "\\")) or ".." in parts:
            mode.refuse(f"rulesFiles[{index}]: the relativePath {relative!r} leaves the rules folder.")
            continue
        if parts[0].startswith("rules-") and len(parts) > 1:
            parts = parts[1:]  # an older export named the rules folder too; Roo Code's import leaves it out
        shown = "/".join((mode.agent.rules_folder, f"rules-{mode.slug}", *parts))
        mode.rules[shown] = content.lstrip("\ufeff").strip()
    how = f"appended to custom_instructions after a blank line, each under {mode.agent.name}'s heading " \
          f"'# Rules from {mode.agent.rules_folder}/rules-{mode.slug}/<relativePath>:'"
    mode.note("rulesFiles", APPROXIMATED, how + (f"; {skipped} empty ones left out" if skipped else ""))


def _add_rules_files(modes: list[_ModeRead], rules_files: list, *, agent: _Agent, report: list[Fidelity]) -> None:
    """Each rules file to the modes of its slug in the mode files of its folder; the others reported dropped."""
    modes_by_place = {}
    for mode in modes:
        modes_by_place.setdefault((_folder(mode.path), mode.slug), []).append(mode)
    for file, location in rules_files:
        owners = modes_by_place.get((location.folder, location.slug), [])
        content = file.content.lstrip("\ufeff").strip()  # as Roo Code reads it
        for mode in owners:
            if not content:
                mode.note(file.path, DROPPED, f"empty: {agent.name} adds only its heading", path=file.path)
                continue
            if location.shown in mode.rules:  # an exported mode's rulesFiles replace its rules folder's files
                how = "the mode's rulesFiles give this file, as importing it would"
                mode.note(file.path, DROPPED, how, path=file.path)
                continue
            mode.rules[location.shown] = content
            how = f"appended to custom_instructions after a blank line, under {agent.name}'s heading " \
                  f"'# Rules from {location.shown}:'"
            mode.note(file.path, APPROXIMATED, how, path=file.path)
        if not owners:
            beside = f"{location.folder}/" if location.folder else ""
            how = f"no mode file in {beside or 'the top folder'} has a mode of slug {location.slug!r}: rules of " \
                  f"one of {agent.name}'s own modes, or of a global mode, have no catalog mode to go to"
            report.append(Fidelity(file.path, mode_key(location.slug) or location.slug, file.path, DROPPED, how))


def _add_rules(mode: _ModeRead) -> None:
    if mode.rules:
        mode.entry["custom_instructions"] = with_rules(mode.entry.get("custom_instructions", ""), mode.rules)


def with_rules(instructions: str, rules: dict[str, str]) -> str:
    """A mode's rules (shown path: text) after its custom instructions, by file name (case folded) and under Roo Code's
    headings: the catalog's custom_instructions of an imported mode. Roo Code orders them by its locale's collation
    (localeCompare), which differs where punctuation does: its rules_python.md comes before rules.md. Emulating ICU by
    hand is not worth that."""
    ordered = sorted(rules.items(), key=lambda rule: (PurePosixPath(rule[0]).name.casefold(), rule[0]))
    text = "\n\n".join(f"# Rules from {shown}:\n{content}" for shown, content in ordered)
    return f"{instructions.rstrip()}\n\n{text}" if instructions.rstrip() else text


# Writing


# The catalog's fields that the format writes, and those that identify or order a mode rather than say anything of it.
WRITTEN_FIELDS = (
    "key", "display_name", "prompt", "when_to_use", "description", "custom_instructions", "mode_instructions",
    "tool_group_hints",
)
UNREPORTED_FIELDS = ("id", "position")


def write_roo(modes: list[AgentMode], *, format_name: str) -> Writing:
    """The modes as one `.roomodes` (or `.kilocodemodes`), as Roo Code writes it, and what became of each field."""
    agent = AGENTS[format_name]
    writing, rules_files = Writing(), []
    written = [_written_mode(mode, agent=agent, report=writing.report, rules_files=rules_files) for mode in modes]
    writing.files = [AgentFile(agent.modes_file, _dump({"customModes": written})), *rules_files]
    return writing


def _written_mode(mode: AgentMode, *, agent: _Agent, report: list[Fidelity], rules_files: list[AgentFile]) -> dict:
    def note(field_name: str, fate: str, how: str = "") -> None:
        report.append(Fidelity(path=agent.modes_file, mode=mode.key, field=field_name, fate=fate, how=how))

    written = {"slug": _slug(mode), "name": mode.display_name}
    note("key", CARRIED)
    note("display_name", CARRIED)
    written["roleDefinition"] = _role_definition(mode, note=note)
    written["whenToUse"] = mode.when_to_use
    note("when_to_use", CARRIED)
    if mode.description:
        written["description"] = mode.description
        note("description", CARRIED)
    if instructions := _custom_instructions(mode, agent=agent, note=note, rules_files=rules_files):
        written["customInstructions"] = instructions
    written["groups"] = _groups(mode, agent=agent, note=note)
    written["source"] = "project"  # the file is a workspace's
    for name in PORTABLE_FIELDS:
        if name not in (*WRITTEN_FIELDS, *UNREPORTED_FIELDS) and _given(mode, name):
            note(name, DROPPED, f"{agent.name} has no field for it")
    return written


def _role_definition(mode: AgentMode, *, note) -> str:
    """The prompt; Roo Code needs a roleDefinition, so a mode without one has its instruction lines there."""
    if mode.prompt.strip():
        note("prompt", CARRIED)
        return mode.prompt
    if mode.mode_instructions:
        note("mode_instructions", APPROXIMATED, "the mode has no prompt: its lines, one a line, are the roleDefinition")
        return "\n".join(mode.mode_instructions)
    note("prompt", APPROXIMATED, "empty, and a roleDefinition must not be: the when-to-use sentence is written there")
    return mode.when_to_use


def _custom_instructions(mode: AgentMode, *, agent: _Agent, note, rules_files: list[AgentFile]) -> str:
    """
    The custom instructions, after the instruction lines when the prompt holds them not: the catalog's order. The
    rules an import appended (with_rules) go back to the files of the mode's rules folder, where Roo Code reads them:
    left in customInstructions too, a repository that still holds them would give them to Roo Code twice.
    """
    lines = "\n".join(mode.mode_instructions) if mode.prompt.strip() else ""
    if lines:
        note("mode_instructions", APPROXIMATED, "no such field: its lines, one a line, open the customInstructions, "
                                                "before the custom instructions and a blank line")
    instructions, rules = _split_rules(mode.custom_instructions, folder=_rules_folder(mode, agent), agent=agent)
    if rules:
        rules_files += [AgentFile(path, f"{content}\n") for path, content in rules.items()]
        note("custom_instructions", CARRIED, f"its rules as the files of {_rules_folder(mode, agent)}, where "
                                             f"{agent.name} reads them: {', '.join(rules)}")
    elif mode.custom_instructions:
        note("custom_instructions", CARRIED)
    return "\n\n".join(part for part in (lines, instructions) if part)


def _slug(mode: AgentMode) -> str:
    """The mode's slug in the file, which also names its rules folder: its key, '_' as '-'."""
    return mode.key.replace("_", "-")


def _rules_folder(mode: AgentMode, agent: _Agent) -> str:
    return f"{agent.rules_folder}/rules-{_slug(mode)}/"


def _split_rules(text: str, *, folder: str, agent: _Agent) -> tuple[str, dict[str, str]]:
    """
    (the instructions, the rules files by path) that an import of the mode's file and rules folder composes into
    text exactly (with_rules); (text, {}) when none does: a heading of another folder, a path that leaves it, or
    rules out of with_rules' order stay text of the instructions.
    """
    headings = list(re.finditer(rf"(?:\A|\n\n)# Rules from ({re.escape(folder)}[^\n]+):\n", text))
    if not headings:
        return text, {}
    ends = [heading.start() for heading in headings[1:]] + [len(text)]
    rules = {heading.group(1): text[heading.end():end] for heading, end in zip(headings, ends)}
    instructions = text[:headings[0].start()]
    readable = all(_is_rules_path(path, folder, agent) for path in rules) and len(rules) == len(headings)
    if readable and with_rules(instructions, rules) == text and all(
            content and content == content.lstrip("\ufeff").strip() for content in rules.values()):
        return instructions, rules
    return text, {}


def _is_rules_path(path: str, folder: str, agent: _Agent) -> bool:
    """Whether path is a file of folder (a mode's rules folder) that an import reads as one of its rules."""
    location = _rules_location(path, agent)
    parts = path.removeprefix(folder).split("/")
    return (location is not None and location.shown == path and path.startswith(folder)
            and all(part not in ("", ".", "..") for part in parts) and not re.search(r"[\\\x00-\x1f]", path))


def _groups(mode: AgentMode, *, agent: _Agent, note) -> list:
    """The tool_group_hints lines that are groups Roo Code takes, as groups; the others reported."""
    groups, left_out, seen = [], [], set()
    for line in mode.tool_group_hints:
        group = _written_group(line, seen=seen, ignored=agent.ignored_groups)
        if group is None:
            left_out.append(line)
        else:
            groups.append(group)
    if not mode.tool_group_hints:
        return groups
    hows = []
    if left_out:
        # What would make Roo Code refuse the whole file stays out of it: an unknown group, a group given twice,
        # options it does not take, a fileRegex JavaScript refuses.
        hows.append(f"lines that are not groups {agent.name} takes were left out: {_quoted(left_out)}")
    names = [group if isinstance(group, str) else group[0] for group in groups]
    if ignored := sorted(set(names) & set(agent.ignored_groups)):
        hows.append(f"{agent.name} no longer has the {', '.join(ignored)} group: written for its older versions, it "
                    "is left out as the file is read")
    if hows:
        kept = [name for name in names if name not in agent.ignored_groups]
        note("tool_group_hints", APPROXIMATED if kept else DROPPED, "; ".join(hows))
    else:
        note("tool_group_hints", CARRIED)
    return groups


def _written_group(line: str, *, seen: set, ignored: tuple[str, ...]) -> str | list | None:
    """A tool_group_hints line as a group of the file; None for one Roo Code would refuse the whole file for."""
    parsed = parse_group_line(line)
    if parsed is None or parsed[0] in seen:
        return None
    name, options = parsed
    if not takes_options(options):
        return None
    if name not in ignored:  # one the agent strips as it reads may come twice; any other, twice, refuses the file
        seen.add(name)
    return [name, options] if options else name


def _given(mode: AgentMode, name: str) -> bool:
    """Whether a field holds more than its default: only such a field's loss is worth a line of the report."""
    value, default = getattr(mode, name), AgentMode._meta.get_field(name).get_default()
    return value != default and value not in ("", [], None)


def _quoted(lines: list[str]) -> str:
    return ", ".join(repr(line) for line in lines)


class _RooYAMLDumper(yaml.SafeDumper):
    """YAML as Roo Code writes it (the yaml package, lineWidth 0): lists indented under their key, nothing folded."""

    def increase_indent(self, flow=False, indentless=False):
        return super().increase_indent(flow, False)

    def write_double_quoted(self, text, split=True):
        # Text with a character Roo Code rewrites before it reads the file is in double quotes (_represent_text), the
        # characters escaped, so that they reach Roo Code as written ("Don\u2019t", not "Don't").
        allow_unicode = self.allow_unicode
        self.allow_unicode = allow_unicode and not REWRITTEN_BY_ROO.search(text)
        try:
            super().write_double_quoted(text, split)
        finally:
            self.allow_unicode = allow_unicode


def _represent_text(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    # Multi-line text as a literal block, readable as the Markdown it is; PyYAML quotes it where a block cannot hold
    # it. Text with the line breaks YAML 1.1 knows and 1.2 does not (NEL, LS, PS) or a CR, which a block or a plain or
    # single-quoted scalar would turn into '\n' or spaces as it is read again, in double quotes, escaped. And in
    # quotes what YAML 1.2 (Roo Code's yaml package) reads as a number where PyYAML sees text: 1e3, 0o17. Text with a
    # character Roo Code rewrites as it reads the file (a curly quote, a dash) in double quotes too, escaped.
    if any(brk in text for brk in ("\r", "\x85", "\u2028", "\u2029")) or REWRITTEN_BY_ROO.search(text):
        style = '"'
    else:
        style = "|" if "\n" in text else "'" if YAML_12_NOT_TEXT.fullmatch(text) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_RooYAMLDumper.add_representer(str, _represent_text)


def _dump(document: dict) -> str:
    return yaml.dump(document, Dumper=_RooYAMLDumper, sort_keys=False, allow_unicode=True, width=2**31 - 1)
