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
from ..portable import YAMLLoaderWithoutRepeatedKeys
from ..validators import MODE_KEY_CHARACTERS, MODE_KEY_PATTERN
from .javascript_regex import javascript_regex_problem

CARRIED, APPROXIMATED, DROPPED = "carried", "approximated", "dropped"
# Fixed for ever: the ids of imported modes are derived from it, so that importing again finds the same modes.
MODE_ID_NAMESPACE = uuid.UUID("6f0b7c2e-4f4e-4d0c-9b7a-3c1f2d5e8a90")
WHEN_TO_USE_LENGTH = AgentMode._meta.get_field("when_to_use").max_length
# YAML 1.2's core schema (its section 10.3.2), which Roo Code's yaml package reads, and Claude Code's and OpenCode's
# parsers in what matters here (yes, no, on and off are text): the plain scalars it reads as null, a boolean, an
# integer or a float, with the characters each can start with. Any other plain scalar is text, where PyYAML's YAML 1.1
# reads yes, off, 1_000, 1:30 and 2024-01-01 as booleans, numbers and dates.
_YAML_12_CORE = (
    ("tag:yaml.org,2002:null", r"~|null|Null|NULL|", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:bool", r"true|True|TRUE|false|False|FALSE", list("tTfF")),
    ("tag:yaml.org,2002:int", r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+", list("-+0123456789")),
    ("tag:yaml.org,2002:float", r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)"
                                r"|\.nan|\.NaN|\.NAN", list("-+.0123456789")),
)
# The text that YAML 1.2 reads as something else: an agent file writes it in quotes.
YAML_12_NOT_TEXT = re.compile("|".join(f"(?:{pattern})" for _, pattern, _ in _YAML_12_CORE))


class YAML12Loader(YAMLLoaderWithoutRepeatedKeys):
    """
    PyYAML reading an agent's YAML as YAML 1.2's core schema does, every plain scalar of it (a mapping's keys, the
    values nested in mappings and lists): 'tools: {write: no}' maps write to the text 'no', as the coding agents read
    it, not to False. A quoted or tagged scalar is read as YAML 1.1 reads it, as 1.2 does too (!!binary, !!str).
    """

    yaml_implicit_resolvers = {}  # YAML 1.1's left out: add_implicit_resolver would copy them in

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        # YAML 1.1 reads 017 as octal and has no 0o17; 1.2 reads 017 as 17 and 0o17 as 15.
        text = self.construct_scalar(node)
        if re.fullmatch(r"0o[0-7]+", text):
            return int(text[2:], 8)
        if re.fullmatch(r"[-+]?[0-9]+", text):
            return int(text, 10)
        return super().construct_yaml_int(node)  # 0x1F; and what an explicit !!int gives in YAML 1.1's forms


for _tag, _pattern, _first in _YAML_12_CORE:
    YAML12Loader.add_implicit_resolver(_tag, re.compile(rf"(?:{_pattern})\Z"), _first)
YAML12Loader.add_constructor("tag:yaml.org,2002:int", YAML12Loader.construct_yaml_int)


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
