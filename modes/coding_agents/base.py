"""
What every coding agent's format shares: the files read and written, the fidelity report, and the rules that turn a
coding agent's mode (a Roo Code slug, a Claude Code agent's name) into a catalog mode (its key, id and when-to-use).
A format reads files into portable mode entries (modes.portable's field names) and writes catalog modes as files.
"""

import json
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

import yaml

from ..models import AgentMode
from ..validators import MODE_KEY_CHARACTERS, MODE_KEY_PATTERN
from .javascript_regex import javascript_regex_problem

CARRIED, APPROXIMATED, DROPPED = "carried", "approximated", "dropped"
# Fixed for ever: the ids of imported modes are derived from it, so that importing again finds the same modes.
MODE_ID_NAMESPACE = uuid.UUID("6f0b7c2e-4f4e-4d0c-9b7a-3c1f2d5e8a90")
WHEN_TO_USE_LENGTH = AgentMode._meta.get_field("when_to_use").max_length
# The plain scalars that YAML 1.2's core schema (Roo Code's yaml package, and near enough js-yaml, which OpenCode's
# gray-matter uses) reads as null, booleans or numbers: an agent file writes such text in quotes.
YAML_12_NOT_TEXT = re.compile(
    r"|~|null|Null|NULL|true|True|TRUE|false|False|FALSE|[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+"
    r"|[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\.(inf|Inf|INF)|\.nan|\.NaN|\.NAN"
)


def composed(text: str) -> yaml.Node | None:
    """The YAML nodes of text, which has been loaded safely already (composing builds no object and expands no alias);
    None where YAML cannot read it, as JSON with tab indents or nesting past the recursion limit."""
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except (yaml.YAMLError, RecursionError):
        return None


def plain_scalars(node) -> dict[str, str]:
    """
    Of a YAML mapping node, the text of each field written as a plain scalar: PyYAML reads YAML 1.1, where yes, on,
    2024-01-01 and 1:20 are not text; the coding agents' YAML 1.2 reads them as text, and reads as null, a boolean or
    a number only what YAML_12_NOT_TEXT matches. A scalar with a tag of its own (!!binary) is not plain.
    """
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {key.value: value.value for key, value in node.value
            if isinstance(key, yaml.ScalarNode) and isinstance(value, yaml.ScalarNode) and _is_plain(value)}


def _is_plain(node: yaml.ScalarNode) -> bool:
    """Whether a scalar is written plain, with no tag but the one YAML gives it by its text."""
    implicit = yaml.SafeLoader("").resolve(yaml.ScalarNode, node.value, (True, False))
    return node.style is None and node.tag == implicit


@dataclass(frozen=True)
class AgentFile:
    """One file of a repository: its path, relative to the repository's folder, with '/' between parts; its text."""

    path: str
    content: str


@dataclass(frozen=True)
class Fidelity:
    """One line of the fidelity report: what became of one field of one mode, moving between a format and the catalog."""

    path: str  # the file read or written
    mode: str  # the mode's key in the catalog
    field: str  # the field as the side it comes from names it (the format's on import, the catalog's on export)
    fate: str  # CARRIED, APPROXIMATED or DROPPED
    how: str = ""  # for APPROXIMATED and DROPPED: what was done, in one sentence


@dataclass
class Reading:
    """What a format read: portable mode entries (each with the path of its file), the report, and the problems."""

    modes: list[tuple[str, dict]] = field(default_factory=list)  # (path, entry)
    report: list[Fidelity] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # each naming the file and, if any, the mode
    skipped: list[str] = field(default_factory=list)  # the paths of the files given that no format reads


@dataclass
class Writing:
    files: list[AgentFile] = field(default_factory=list)
    report: list[Fidelity] = field(default_factory=list)


def problem(path: str, mode: str | None, message: str) -> str:
    return f"{path}: mode {mode!r}: {message}" if mode is not None else f"{path}: {message}"


def mode_key(name: str) -> str | None:
    """The catalog key of a slug or an agent's name (lower case, '-' as '_'); None if that is not a valid key."""
    key = name.strip().lower().replace("-", "_")
    return key if len(key) <= AgentMode._meta.get_field("key").max_length and re.match(MODE_KEY_PATTERN, key) else None


def key_problem(name) -> str:
    return f"{name!r} cannot become a mode key: a key holds {MODE_KEY_CHARACTERS} only ('-' becomes '_')."


def mode_id(format_name: str, slug: str) -> str:
    """A stable id: importing the same format's mode again (--update) updates that mode rather than adding one."""
    return uuid.uuid5(MODE_ID_NAMESPACE, f"{format_name}:{slug}").hex.upper()


def when_to_use(text: str) -> tuple[str, str | None, str | None]:
    """
    The catalog's one-line when-to-use sentence from a format's text: (sentence, the whole text for the description
    when the sentence is not all of it, how it was approximated or None when carried whole).
    """
    line = " ".join(text.split())
    if len(line) <= WHEN_TO_USE_LENGTH:
        if line == text:
            return line, None, None
        joined = "\n" in text.strip()
        return line, None, "joined onto one line" if joined else "its leading, trailing or doubled spaces left out"
    first = re.match(r".*?[.!?](?=\s|$)", line)
    if first and len(first.group(0)) <= WHEN_TO_USE_LENGTH:
        sentence, part = first.group(0), "its first sentence is the when-to-use"
    else:  # no sentence is short enough: its first words, cut between two words
        sentence = line[:WHEN_TO_USE_LENGTH - 1].rsplit(" ", 1)[0].rstrip() + "…"
        part = "its first words are the when-to-use, cut with '…'"
    return sentence, text, f"longer than {WHEN_TO_USE_LENGTH} characters: {part}{WHOLE_IN_DESCRIPTION}"


WHOLE_IN_DESCRIPTION = ", the whole text the description"


# The catalog keeps a mode's tool permissions in tool_group_hints, one line each, in Roo Code's words: a group
# (read, edit, command, mcp, modes, browser), or a group with its options as a JSON object after one space
# ('edit {"fileRegex": "\\.md$", "description": "Markdown files"}'). Formats with other words translate to these.
TOOL_GROUPS = ("read", "edit", "command", "mcp", "modes", "browser")
GROUP_OPTIONS = ("fileRegex", "description")  # Roo Code's groupOptionsSchema; it drops any other option


def group_line(group: str, options: dict | None = None) -> str:
    return f"{group} {json.dumps(options, ensure_ascii=False)}" if options else group


def parse_group_line(line: str) -> tuple[str, dict | None] | None:
    """(group, options or None) of a tool_group_hints line; None for a line that is not one of TOOL_GROUPS."""
    group, _, rest = line.strip().partition(" ")
    if group not in TOOL_GROUPS:
        return None
    if not rest:
        return group, None
    try:
        options = json.loads(rest)
    except (ValueError, RecursionError):  # a line stored by hand may be anything: '[[[...' included
        return None
    return (group, options) if isinstance(options, dict) else None


def takes_options(options: dict | None) -> bool:
    """Whether Roo Code takes a group's options as they are: only its own, as text, with a fileRegex JavaScript takes."""
    options = options or {}
    if set(options) - set(GROUP_OPTIONS) or not all(isinstance(value, str) for value in options.values()):
        return False
    return not (options.get("fileRegex") and javascript_regex_problem(options["fileRegex"]))


@dataclass(frozen=True)
class AgentFormat:
    """One coding agent's format: which paths are its files, how it reads them, how it writes catalog modes."""

    name: str  # as --from and --to spell it
    recognizes: Callable[[str], bool]  # whether a path (relative to the repository) is one of its files
    read: Callable[[list[AgentFile]], Reading]  # the files it recognizes
    write: Callable[[list[AgentMode]], Writing]


def fidelity_text(line: Fidelity) -> str:
    """A report line as the commands print it and the admin shows it."""
    return f"{line.path}: mode {line.mode!r}: {line.field}: {line.fate}" + (f" ({line.how})" if line.how else "")
