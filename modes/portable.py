"""
The portable mode file moved by export_modes and import_modes, and the format a catalog revision keeps its catalog in:
YAML or JSON, ``{"format": "aptix-modes", "version": 1, "modes": [...], "declared_tools": [...]}`` with one mapping per
mode and per declared tool, keyed by the models' field names; ``declared_tools`` may be left out. ``source`` and the
timestamps stay out: only migrations make built-in modes.
"""

import difflib
import json
from dataclasses import dataclass

import yaml
from django.db import models

from aptix_site.text import DuplicateKey, refuse_duplicate_keys, unstorable_text

from .fields import StringListField
from .models import AgentMode, DeclaredTool
from .validators import is_string_list

FORMAT_NAME = "aptix-modes"
FORMAT_VERSION = 1

TEXT_FIELDS = (
    "id", "key", "display_name", "description", "when_to_use", "status", "version", "entry_confirmation", "prompt",
    "custom_instructions",
)
BOOLEAN_FIELDS = ("is_default", "llm_can_enter")
PORTABLE_FIELDS = (*TEXT_FIELDS, *BOOLEAN_FIELDS, "position", *AgentMode.list_field_names())
TOOL_FIELDS = ("name", "description", "parameters", "read_only")
TOP_LEVEL_FIELDS = ("format", "version", "modes", "declared_tools")
MAX_VALUES = 1_000_000  # a catalog of 1,000 modes holds about 50,000


class PortableFileError(Exception):
    """A file that cannot be imported; ``problems`` lists every reason, one line each."""

    def __init__(self, problems):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


def export_document(*, modes: list[AgentMode], declared_tools: list[DeclaredTool]) -> dict:
    return {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "modes": [{field: getattr(mode, field) for field in PORTABLE_FIELDS} for mode in modes],
        "declared_tools": [{field: getattr(tool, field) for field in TOOL_FIELDS} for tool in declared_tools],
    }


# Fields that revisions recorded before them lack: such a revision's modes had the fields' defaults.
ADDED_MODE_FIELDS = ("llm_can_enter", "switch_targets", "entry_confirmation", "prompt", "custom_instructions")


def upgrade_document(document: dict) -> dict:
    """A document as this format writes it now: an older one's modes get the defaults of the fields added since."""
    added = [AgentMode._meta.get_field(name) for name in ADDED_MODE_FIELDS]
    modes = [{**{field.name: field.get_default() for field in added}, **entry} for entry in document["modes"]]
    return {**document, "modes": modes}


def document_rows(document: dict) -> tuple[list[AgentMode], list[DeclaredTool]]:
    return (
        [AgentMode(**entry) for entry in document["modes"]],
        [DeclaredTool(**entry) for entry in document.get("declared_tools", [])],
    )


def dump_document(document: dict, *, file_format: str) -> str:
    if file_format == "json":
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)


@dataclass(frozen=True)
class FileEntry:
    """One entry of a mode file (a mode or a declared tool), type-checked."""

    index: int  # in its section
    where: str
    fields: dict | None  # the known fields whose values have the right type; None: the entry is not a mapping
    rejected: frozenset[str] = frozenset()  # given with a wrong type: not in fields, so later checks do not report them
    problems: tuple[str, ...] = ()  # each naming its field


@dataclass(frozen=True)
class ModeFile:
    entries: tuple[FileEntry, ...]
    tools: tuple[FileEntry, ...] = ()
    problems: tuple[str, ...] = ()  # about the file as a whole


def read_document(text: str) -> ModeFile:
    """A mode file's entries, type-checked; the import reports their problems, only a file with no 'modes' raises."""
    document = load_text(text)
    if not isinstance(document, dict) or not isinstance(document.get("modes"), list):
        raise PortableFileError(["The file must be a mapping with a 'modes' list."])
    problems = []
    unknown = sorted(set(map(str, document)) - set(TOP_LEVEL_FIELDS))
    if unknown:
        problems.append(f"Unknown top-level fields: {', '.join(unknown)}.")
    if document.get("format", FORMAT_NAME) != FORMAT_NAME or document.get("version", FORMAT_VERSION) != FORMAT_VERSION:
        problems.append(f"This is not an {FORMAT_NAME} version {FORMAT_VERSION} file.")
    tools = document.get("declared_tools", [])
    if not isinstance(tools, list):
        problems.append("declared_tools: must be a list of tool mappings.")
        tools = []
    return ModeFile(
        entries=tuple(check_entry(index, entry, MODE_SECTION) for index, entry in enumerate(document["modes"])),
        tools=tuple(check_entry(index, entry, TOOL_SECTION) for index, entry in enumerate(tools)),
        problems=tuple(problems),
    )


def load_text(text: str, *, yaml_loader: type[yaml.SafeLoader] | None = None):
    """The value a YAML or JSON text holds: plain data only (no YAML tag constructs an object), refused with a
    PortableFileError when it is not YAML or JSON, repeats a key, nests too deeply, expands past MAX_VALUES or holds
    text no database stores (a JSON or YAML escape can write a NUL or a lone surrogate). YAML is read by yaml_loader,
    a YAMLLoaderWithoutRepeatedKeys (PyYAML's YAML 1.1) unless another one is given: the coding agents read YAML
    1.2 (coding_agents.base.YAML12Loader)."""
    try:
        document = _parse(text, yaml_loader or YAMLLoaderWithoutRepeatedKeys)
    except RecursionError:
        raise PortableFileError(["The file is nested too deeply to be a mode file."]) from None
    except ValueError:  # Python reads no integer of more than 4,300 digits
        raise PortableFileError(["The file holds a number too long to read; a mode file has none."]) from None
    if problem := _value_problem(document):
        raise PortableFileError([problem])
    return document


def _parse(text: str, yaml_loader: type[yaml.SafeLoader]):
    # JSON first: YAML reads most JSON, but not all of it (tab indents, escaped surrogate pairs such as
    # an emoji written by json.dumps, control characters), and export_modes writes JSON too.
    try:
        return json.loads(text, object_pairs_hook=refuse_duplicate_keys)
    except DuplicateKey as error:
        raise _repeated_key_error(error.key) from None
    except json.JSONDecodeError as json_error:
        try:
            return yaml.load(text, Loader=yaml_loader)
        except yaml.YAMLError as yaml_error:
            error = json_error if text.lstrip().startswith("{") else yaml_error
            raise PortableFileError([f"The file is not valid YAML or JSON: {error}"]) from None


def _value_problem(document) -> str | None:
    """
    What makes a parsed file unfit to be read further, found in one walk that stops there: more than MAX_VALUES
    values (keys included) once its YAML aliases are expanded, as 1 KB can stand for 10^9; or unstorable text.
    Without recursion: the walk must not fail on what nests as deep as the parser allowed.
    """
    pending, count = [document], 0
    while pending:
        count += 1
        if count > MAX_VALUES:
            return f"The file expands, through its YAML aliases, to more than {MAX_VALUES:,} values; a mode file is " \
                   "far smaller."
        item = pending.pop()
        if isinstance(item, dict):
            pending += [*item.keys(), *item.values()]
        elif isinstance(item, list | tuple):  # YAML's !!pairs and !!omap are lists of tuples
            pending += item
        elif isinstance(item, str) and (unstorable := unstorable_text(item)):
            return f"The file holds {unstorable}, which no mode can store."
    return None


def _repeated_key_error(key) -> PortableFileError:
    return PortableFileError([f"The field {key!r} is given twice in one mapping; keep one of them."])


class YAMLLoaderWithoutRepeatedKeys(yaml.SafeLoader):
    """
    PyYAML keeps the last of two equal keys without a word; a mode file with two of one field is a mistake. And its
    scanner refuses a tab anywhere but in a quoted or block value, where YAML (1.1 and 1.2, and the coding agents'
    parsers) takes one between the words of a line: 'key:<tab>value', 'a<tab>b', one an editor left at a line's end,
    on a line of its own or before a comment there. A tab that indents stays refused, as YAML refuses it.
    """

    block_scalar_ended = False  # the lines after a block scalar: YAML takes no tab there before a comment

    def scan_to_next_token(self):
        # PyYAML's own skips spaces, comments and line breaks, and stops at a tab: it goes on past one that separates,
        # but not on the blank lines that end a block scalar, where YAML 1.2 (l-chomped-empty) and the yaml package
        # that Roo Code and Claude Code read with refuse one.
        after_block_scalar, self.block_scalar_ended = self.block_scalar_ended, False
        super().scan_to_next_token()
        while not after_block_scalar and (length := self._separating_whitespace()):
            self.forward(length)
            super().scan_to_next_token()

    def scan_block_scalar(self, style):
        token = super().scan_block_scalar(style)
        self.block_scalar_ended = True
        return token

    def _separating_whitespace(self) -> int:
        """
        The length of the spaces and tabs from here when a tab among them separates as a space does: after something
        on its line, or before a comment or the line's end (a line an editor left holding a tab). 0 otherwise: no tab,
        or one before the first thing on its line, which would indent it.
        """
        length = 0
        while self.peek(length) in " \t":
            length += 1
        if "\t" not in self.prefix(length):
            return 0
        start, before = self.pointer - self.column, self.pointer  # back over this run only: a long line stays linear
        while before > start and self.buffer[before - 1] in " \t":
            before -= 1
        return length if before > start or self.peek(length) in "#\0\r\n\x85\u2028\u2029" else 0

    def add_indent(self, column):
        # A block collection that starts past a tab on its line ('-<tab>key: value', '-<tab>- item') is indented by
        # the tab: YAML indents only with spaces, and the coding agents' parsers refuse it, as PyYAML's own did.
        if self.indent < column and "\t" in self.buffer[self.pointer - self.column:self.pointer][:column]:
            raise yaml.scanner.ScannerError(None, None, "found a tab that indents a block collection",
                                            self.get_mark())
        return super().add_indent(column)

    def scan_plain_spaces(self, indent, start_mark):
        # PyYAML's own reads spaces only: tabs between a plain value's words are kept, at the line's end dropped.
        length = 0
        while self.peek(length) in " \t":
            length += 1
        if "\t" not in self.prefix(length):
            return super().scan_plain_spaces(indent, start_mark)
        ends_line = self.peek(length) in "\0\r\n\x85\u2028\u2029"
        whitespace = self.prefix(length)
        self.forward(length)
        return super().scan_plain_spaces(indent, start_mark) if ends_line else [whitespace]

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    raise _repeated_key_error(key)
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


@dataclass(frozen=True)
class Section:
    """A list of entries in a mode file ("modes" or "declared_tools"), and what reading and importing them needs."""

    name: str
    naming_field: str  # the field that names an entry
    fields: tuple[str, ...]
    noun: str  # what an entry is
    model: type  # the model of its rows
    exists: str  # what an import says of an entry whose row exists ({name})


MODE_SECTION = Section("modes", "key", PORTABLE_FIELDS, "mode", AgentMode, "mode {name!r} already exists")
TOOL_SECTION = Section(
    "declared_tools", "name", TOOL_FIELDS, "declared tool", DeclaredTool, "tool {name!r} is already declared"
)


def check_entry(index: int, entry, section: Section, *, where: str | None = None) -> FileEntry:
    """One entry of a section, type-checked; where names it in problems (by default, by its index and name)."""
    name = entry.get(section.naming_field) if isinstance(entry, dict) else None
    if where is None:
        where = f"{section.name}[{index}]" + (f" ({section.naming_field} {name!r})" if isinstance(name, str) else "")
    if not isinstance(entry, dict):
        problem = f"each {section.noun} must be a mapping of field names to values."
        return FileEntry(index=index, where=where, fields=None, problems=(problem,))
    problems = {}
    for name in sorted(set(map(str, entry)) - set(section.fields)):
        guess = difflib.get_close_matches(name, section.fields, n=1)
        problems[name] = f"unknown field; did you mean {guess[0]}?" if guess else "unknown field."
    for name in section.fields:
        if name in entry and (problem := _type_problem(section.model._meta.get_field(name), entry[name])):
            problems[name] = problem
    fields = {name: value for name, value in entry.items() if name in section.fields and name not in problems}
    rejected = frozenset(problems) & set(section.fields)
    lines = tuple(f"{name}: {problem}" for name, problem in problems.items())
    return FileEntry(index=index, where=where, fields=fields, rejected=rejected, problems=lines)


def _type_problem(field, value) -> str | None:
    """Whether value has its field's type and can be stored: what the field's own validators cannot say."""
    if isinstance(field, StringListField):
        typed, kind = is_string_list(value), "a list of text lines"
    elif isinstance(field, models.JSONField):
        typed, kind = isinstance(value, dict), "a JSON Schema mapping"
    elif isinstance(field, models.BooleanField):
        typed, kind = isinstance(value, bool), "true or false"
    elif isinstance(field, models.PositiveIntegerField):
        typed, kind = type(value) is int and value >= 0, "a whole number, 0 or more"
    else:
        typed, kind = isinstance(value, str), "text"
    if not typed:
        return f"must be {kind}."
    unstorable = unstorable_text(value)
    return f"must not contain {unstorable}." if unstorable else None
