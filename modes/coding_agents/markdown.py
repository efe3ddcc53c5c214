"""
Markdown agent files (OpenCode's and Kilo's agents, Claude Code's subagents): YAML front matter between two '---'
lines, then the agent's prompt as the body; and what the formats built on them share when they read an agent into a
catalog entry and write a catalog mode back.

What such a format has no field for, and the catalog needs to get a mode back unchanged, travels with the file:
- the mode's instruction lines and custom instructions, after the prompt in the body, each below a marker line
  (``<!-- aptix-modes: custom_instructions -->``): the agent reads them, as the catalog's modes tell them;
- its display name, description, exact tool-group lines (a fileRegex, their order) and the blank lines around its
  prompt, in one comment line of the front matter (``# aptix-modes: {"display_name": ...}``), which the coding agents
  do not read. A kept value only refines what the file's own fields say: an edit by hand wins.
"""

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import yaml

from ..models import AgentMode
from ..portable import PORTABLE_FIELDS, PortableFileError, load_text
from .base import (
    APPROXIMATED, CARRIED, DROPPED, TOOL_GROUPS, YAML_12_NOT_TEXT, Fidelity, Reading, YAML12Loader, key_problem,
    mode_id, mode_key, parse_group_line, problem, takes_options, when_to_use,
)

FENCE = "---"
KEPT_PREFIX = "# aptix-modes: "
KEPT_COMMENT = KEPT_PREFIX.strip()
SECTION_FIELDS = ("mode_instructions", "custom_instructions")
SECTION_LINE = re.compile(r"(?:\A|\n\n)<!-- aptix-modes: (mode_instructions|custom_instructions) -->(?:\n|\Z)")


@dataclass(frozen=True)
class MarkdownAgent:
    """A Markdown agent file read: its front matter's fields (None: it has none), its body, what it kept for us."""

    fields: dict | None
    body: str  # leading blank lines and trailing newlines left out
    kept: dict  # the '# aptix-modes:' comment's fields
    lenient: frozenset = frozenset()  # fields whose values are not strict YAML, read as the coding agents read them


# How a coding agent rewrites one line of front matter that is not YAML before it reads it again: (the field, the
# lines it becomes), or None when it leaves the line as it is.
LineRewrite = Callable[[str], tuple[str, list[str]] | None]


def read_markdown(text: str, *, rewrite: LineRewrite | None = None) -> MarkdownAgent:
    """
    A Markdown agent file's parts; PortableFileError says why its front matter cannot be read. Front matter that is
    not YAML is read again with each line rewritten as the coding agent rewrites it (rewrite), or else refused.
    """
    front, body = split_front_matter(text)
    if front is None:
        return MarkdownAgent(fields=None, body=body_text(body), kept={})
    fields, lenient = _load_front_matter(front, rewrite)
    if fields is None:  # '---' and '---' with nothing between
        fields = {}
    if not isinstance(fields, dict):
        raise PortableFileError(["The front matter must be a mapping of fields to values."])
    return MarkdownAgent(fields=fields, body=body_text(body), kept=_kept(front), lenient=lenient)


def split_front_matter(text: str) -> tuple[str | None, str]:
    """(the front matter's text or None when the file has none, the rest); the front matter must be closed."""
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").split("\n")
    if lines[0].rstrip() != FENCE:
        return None, "\n".join(lines)
    for index, line in enumerate(lines[1:], start=1):
        if line.rstrip() == FENCE:
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1:])
    raise PortableFileError(["The front matter opened by '---' on the first line is never closed by a '---' line."])


def body_text(body: str) -> str:
    """The body as the prompt: without the blank lines after the front matter and the newlines at its end."""
    lines = body.split("\n")  # by lines, not a regex anchored at the end: that backtracks from every newline
    start = next((index for index, line in enumerate(lines) if line.strip(" \t")), len(lines))
    end = len(lines)
    while end > start and not lines[end - 1].strip(" \t"):
        end -= 1
    return "\n".join(lines[start:end])


def _load_front_matter(front: str, rewrite: LineRewrite | None) -> tuple[object, frozenset]:
    # As YAML 1.2, Claude Code's and OpenCode's YAML, reads it: 'description: yes' is the text 'yes', and so is the
    # 'no' of 'tools: {write: no}'.
    try:
        return load_text(front, yaml_loader=YAML12Loader), frozenset()
    except PortableFileError as error:
        if rewrite is None or not _is_syntax_error(front):  # a tag, a repeated key, an alias bomb: refused
            raise PortableFileError([f"The front matter is not valid YAML: {_reason(error)}"]) from None
        try:
            text, fields = lenient_front_matter(front, rewrite)
            return load_text(text, yaml_loader=YAML12Loader), fields
        except PortableFileError:
            hint = " (a value over several lines needs quotes, or '|' and its lines indented)"
            raise PortableFileError([f"The front matter is not valid YAML{hint}: {_reason(error)}"]) from None


def _reason(error: PortableFileError) -> str:
    return " ".join(error.problems).removeprefix("The file is not valid YAML or JSON: ")


def _is_syntax_error(front: str) -> bool:
    """Whether the YAML fails as text (composing it constructs nothing, so a tag cannot be the reason), read by the
    scanner that reads it (a tab between words is no syntax error)."""
    try:
        yaml.compose(front, Loader=YAML12Loader)
    except (yaml.scanner.ScannerError, yaml.parser.ParserError):
        return True
    except (yaml.YAMLError, RecursionError):
        return False
    return False


def lenient_front_matter(front: str, rewrite: LineRewrite) -> tuple[str, frozenset]:
    """
    Claude Code and OpenCode read 'description: Use it when: ...' as text, though a plain YAML value cannot hold
    ': ' (Claude Code's own agents are written so): when the YAML fails, each rewrites the lines it takes for such
    values, and reads the front matter again. Returns the text so rewritten and the fields it rewrote.
    """
    lines, fields = [], set()
    for line in front.split("\n"):
        if rewritten := rewrite(line):
            fields.add(rewritten[0])
            lines += rewritten[1]
        else:
            lines.append(line)
    return "\n".join(lines), frozenset(fields)


def _kept(front: str) -> dict:
    for line in front.split("\n"):
        if line.startswith(KEPT_PREFIX):
            try:
                kept = load_text(line.removeprefix(KEPT_PREFIX))
            except PortableFileError as error:
                raise PortableFileError([f"The '{KEPT_COMMENT}' comment cannot be read: {_reason(error)}"]) from None
            if not isinstance(kept, dict):
                raise PortableFileError([f"The '{KEPT_COMMENT}' comment must be a JSON object."])
            return kept
    return {}


class _Dumper(yaml.SafeDumper):
    """Text over several lines as a literal block, so that a description reads as written."""


def _represent_text(dumper, text: str):
    # In quotes what YAML 1.2 (the yaml package) and js-yaml (OpenCode's gray-matter) read as a number where
    # PyYAML sees text: an agent named 1e3 would be named 1000. In double quotes text holding '---', which
    # write_markdown then escapes.
    if "---" in text:
        style = '"'
    else:
        style = "|" if "\n" in text and text == text.strip() else "'" if YAML_12_NOT_TEXT.fullmatch(text) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _represent_text)


def write_markdown(fields: dict, body: str, kept: dict | None = None) -> str:
    """A Markdown agent file: the fields as front matter (in their order), the kept comment, the body."""
    front = yaml.dump(fields, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=float("inf")) if fields else ""
    # ASCII: YAML takes U+0085, U+2028 and U+2029 for line breaks, which would end the comment early.
    comment = f"{KEPT_PREFIX}{json.dumps(kept)}\n" if kept else ""
    # Claude Code ends the front matter at the first '---' wherever it is, not at a line of its own: none may be
    # written before the closing line. Only a double-quoted YAML value (_represent_text) or a JSON text can hold one
    # here, and both read the escape '\u002d' as '-'.
    front, comment = (part.replace("---", "--\\u002d") for part in (front, comment))
    return f"{FENCE}\n{comment}{front}{FENCE}\n" + (f"\n{body}\n" if body else "")


def join_body(prompt: str, sections: dict[str, str]) -> str:
    """The prompt, then each non-empty section below its marker line, a blank line between them."""
    parts = [prompt] if prompt else []
    parts += [f"<!-- aptix-modes: {name} -->\n{text}" for name, text in sections.items() if text]
    return "\n\n".join(parts)


def split_body(body: str) -> tuple[str, dict[str, str]]:
    """(the prompt, the sections join_body wrote after it, by field); a marker out of order stays text."""
    found, names = [], list(SECTION_FIELDS)
    for match in SECTION_LINE.finditer(body):
        if match.group(1) in names:
            names = names[names.index(match.group(1)) + 1:]
            found.append(match)
    if not found:
        return body, {}
    ends = [match.start() for match in found[1:]] + [len(body)]
    return body[:found[0].start()], {match.group(1): body[match.end():end] for match, end in zip(found, ends)}


# Reading agents into catalog entries


def display_name_of(name: str) -> str:
    """A readable name: 'code-reviewer' becomes 'Code Reviewer'."""
    words = [word for word in re.split(r"[-_\s]+", name) if word]
    return (" ".join(word[:1].upper() + word[1:] for word in words) or name)[:DISPLAY_NAME_LENGTH]


DISPLAY_NAME_LENGTH = AgentMode._meta.get_field("display_name").max_length


def agent_name(key: str) -> str:
    """The agent's name (and its file's) of a catalog key: '_' as '-'."""
    return key.replace("_", "-")


@dataclass
class AgentReport:
    """The report lines and problems of one agent, as its format reads it."""

    reading: Reading
    path: str
    mode: str  # the catalog key, or the agent's name when it has none
    problems: list[str] = field(default_factory=list)

    def line(self, field_name: str, fate: str, how: str = "") -> None:
        self.reading.report.append(Fidelity(self.path, self.mode, field_name, fate, how))

    def dropped(self, field_name: str, value, why: str) -> None:
        self.line(field_name, DROPPED, f"{shown(value)}: {why}")

    def problem(self, message: str) -> None:
        self.problems.append(problem(self.path, self.mode, message))


def shown(value) -> str:
    """A value as a report line quotes it, cut short."""
    text = repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def start_agent(reading: Reading, path: str, name, *, format_name: str) -> tuple[AgentReport, dict | None]:
    """An agent's report, and its entry with its id and key; None for the entry when the name is not a key."""
    if not isinstance(name, str) or not name.strip():
        report = AgentReport(reading, path, name if isinstance(name, str) and name else "?")
        report.problem("name: the agent needs a name, as text.")
        return report, None
    key = mode_key(name)
    report = AgentReport(reading, path, key or name)
    if key is None:
        report.problem(key_problem(name))
        return report, None
    return report, {"id": mode_id(format_name, name), "key": key}


def read_name(report: AgentReport, entry: dict, name: str, kept: dict, *, field_name: str, source: str) -> None:
    """The display name, the one the file kept or one made from the name; and the name's report line."""
    kept_name = kept.get("display_name")
    if isinstance(kept_name, str) and kept_name.strip():
        entry["display_name"] = kept_name[:DISPLAY_NAME_LENGTH]
        made = f"the display name {entry['display_name']!r} from the '{KEPT_COMMENT}' comment"
    else:
        entry["display_name"] = display_name_of(name)
        made = f"the display name {entry['display_name']!r} made from it"
    if agent_name(entry["key"]) == name:
        report.line(field_name, CARRIED, f"{source} is the key {entry['key']!r} ('-' as '_'); {made}")
    else:
        report.line(field_name, APPROXIMATED, f"{source} becomes the key {entry['key']!r}, written back as "
                                              f"{agent_name(entry['key'])!r}; {made}")



def read_description(report: AgentReport, entry: dict, value, agent: MarkdownAgent | None = None, *,
                     field_name="description", tool: str = "") -> None:
    """when_to_use and description from the agent's description; a problem when it has none."""
    kept = agent.kept if agent else {}
    lenient = f"read as text, as {tool} reads front matter that is not YAML" if agent and field_name in agent.lenient \
        else ""
    if not isinstance(value, str) or not value.strip():
        wrong = "must be text" if value is not None and not isinstance(value, str) else "is missing or empty"
        report.problem(f"{field_name}: {wrong}; the agent needs a description, which becomes its when-to-use.")
        return
    sentence, whole, how = when_to_use(value.strip())
    entry["when_to_use"] = sentence
    kept_description = kept.get("description")
    if isinstance(kept_description, str):
        entry["description"] = kept_description
        extra = f"the description from the '{KEPT_COMMENT}' comment"
        report.line(field_name, APPROXIMATED if how else CARRIED, "; ".join(filter(None, [lenient, how, extra])))
        return
    entry["description"] = whole or ""
    report.line(field_name, APPROXIMATED if how else CARRIED, "; ".join(filter(None, [lenient, how or "as the "
                                                                                                 "when-to-use"])))


def read_body(report: AgentReport, entry: dict, body: str, *, field_name: str, how: str = "",
              kept: dict | None = None) -> None:
    """The prompt, and the instruction lines and custom instructions written after it."""
    prompt, sections = split_body(body)
    edges = (kept or {}).get("edges")
    edges = edges if isinstance(edges, dict) else {}
    entry["prompt"] = _with_edges(body_text(prompt), edges.get("prompt"))
    entry["mode_instructions"] = [line for line in sections.get("mode_instructions", "").split("\n") if line.strip()]
    entry["custom_instructions"] = _with_edges(body_text(sections.get("custom_instructions", "")),
                                               edges.get("custom_instructions"))
    found = [name for name in SECTION_FIELDS if name in sections]
    parts = [how, "as the prompt", f"its marked sections as {' and '.join(found)}" if found else ""]
    report.line(field_name, CARRIED, "; ".join(filter(None, parts)))


def _with_edges(text: str, edges) -> str:
    """The text with the blank lines and newlines around it that the file kept aside (the body cannot hold them)."""
    if not text or not (isinstance(edges, list) and len(edges) == 2 and all(isinstance(edge, str) for edge in edges)):
        return text
    lead, trail = (edge if not edge.strip() else "" for edge in edges)
    return f"{lead}{text}{trail}"


def _edges(text: str) -> tuple[str, list[str] | None]:
    """(the text as a body holds it, the blank lines before and the newlines after it that it cannot hold)."""
    core = body_text(text)
    if core == text or not core:
        return core, None
    start = text.find(core)
    return core, [text[:start], text[start + len(core):]]


def refined_groups(groups: list[str], kept: dict) -> list[str]:
    """
    The tool groups the format's fields grant, made exact by the lines the file kept (options such as a fileRegex,
    the catalog's order). A kept line counts only for a group the fields still grant, with options Roo Code takes:
    an edit by hand wins, and a line made up by hand grants nothing the file does not.
    """
    kept_lines = kept.get("tool_group_hints")
    if not isinstance(kept_lines, list):
        return groups
    lines, seen = [], set()
    for line in kept_lines:
        parsed = parse_group_line(line) if isinstance(line, str) else None
        if parsed and parsed[0] in groups and parsed[0] not in seen and takes_options(parsed[1]):
            lines.append(line)
            seen.add(parsed[0])
    return lines + [group for group in groups if group not in seen]


def finish(reading: Reading, report: AgentReport, path: str, entry: dict | None) -> None:
    """The agent's entry joins the reading if nothing is wrong with it; its problems join in any case."""
    reading.problems += report.problems
    if entry is not None and not report.problems:
        reading.modes.append((path, entry))


def refuse_duplicates(reading: Reading, format_name: str) -> None:
    """Two agents of one format with one key (a file and a config entry, 'a-b' and 'a_b'): a problem naming both."""
    first, modes = {}, []
    for path, entry in reading.modes:
        key = entry["key"]
        if key in first:
            reading.problems.append(problem(path, key, f"{first[key]} defines this {format_name} agent too; "
                                                       "keep one of them."))
            continue
        first[key] = path
        modes.append((path, entry))
    reading.modes = modes


def check_fields(report: AgentReport, fields: dict, checks: dict) -> dict:
    """The fields whose values have the type their check wants; a problem for each other one."""
    good = {}
    for name, value in fields.items():
        check = checks.get(name)
        if check is not None and not check[0](value):
            report.problem(f"{name}: must be {check[1]}{_boolean_word_hint(value, check[0])}.")
        else:
            good[name] = value
    return good


# The words YAML 1.1 reads as booleans and YAML 1.2, the agents' YAML, as text.
YAML_11_BOOLEANS = {
    word: meaning for words, meaning in (("yes on", True), ("no off", False))
    for lower in words.split() for word in (lower, lower.capitalize(), lower.upper())
}


def _boolean_word_hint(value, check) -> str:
    """
    What to write where a value is wrong only because YAML 1.2 reads yes, no, on and off as text ('hidden: yes',
    'tools: {write: no}'): YAML 1.1 reads them as booleans, and files written for it hold them. '' for other values.
    """
    items = value.items() if isinstance(value, dict) else [(None, value)]
    words = [(key, item) for key, item in items if isinstance(item, str) and item in YAML_11_BOOLEANS]
    if not words:
        return ""
    as_yaml_11 = {key: YAML_11_BOOLEANS.get(item, item) if isinstance(item, str) else item for key, item in items}
    if not check(as_yaml_11 if isinstance(value, dict) else as_yaml_11[None]):
        return ""
    key, word = words[0]
    meaning = "true" if YAML_11_BOOLEANS[word] else "false"
    whose = f"{key}'s " if key is not None else ""
    return f": {whose}{word!r} is text to the agent, as YAML 1.2 reads it; use {meaning}"


def is_text(value) -> bool:
    return isinstance(value, str)


def is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def is_flag(value) -> bool:
    return isinstance(value, bool)


# Writing catalog modes as agents

EXPORT_SKIPPED = ("id", "position")  # not a mode's content: the id comes from the format and name, order from paths
REPORTED_FIELDS = [name for name in PORTABLE_FIELDS if name not in EXPORT_SKIPPED]


@dataclass
class ModeExport:
    """One mode being written: its report lines by catalog field, and what the front matter's comment keeps."""

    path: str
    mode: AgentMode
    tool: str  # the coding agent's name, as the report says it
    lines: dict = field(default_factory=dict)  # catalog field -> Fidelity
    kept: dict = field(default_factory=dict)

    def line(self, field_name: str, fate: str, how: str = "") -> None:
        self.lines[field_name] = Fidelity(self.path, self.mode.key, field_name, fate, how)

    def keep(self, field_name: str, value, why: str) -> None:
        """A field the format cannot hold, kept in the comment: importing the file restores it."""
        self.kept[field_name] = value
        self.line(field_name, APPROXIMATED, f"{why}; kept in the front matter's '{KEPT_COMMENT}' comment, which "
                                            f"{self.tool} does not read, so that importing the file restores it")

    def report(self) -> list[Fidelity]:
        """A line for every field written or not at its default: those no line covers yet are dropped."""
        for name in REPORTED_FIELDS:
            if name not in self.lines and _is_set(self.mode, name):
                self.line(name, DROPPED, f"{shown(getattr(self.mode, name))}: {self.tool} has no place for it")
        return [self.lines[name] for name in REPORTED_FIELDS if name in self.lines]


def _is_set(mode: AgentMode, name: str) -> bool:
    return getattr(mode, name) != AgentMode._meta.get_field(name).get_default()


def export_text(export: ModeExport) -> tuple[str, str]:
    """(the description to write, the body to write), their catalog fields reported and kept as needed."""
    mode, name = export.mode, agent_name(export.mode.key)
    export.line("key", CARRIED, f"as the agent's name {name!r} ('_' as '-')")
    if mode.display_name == display_name_of(name):
        export.line("display_name", CARRIED, f"made again from the name {name!r} on import")
    else:
        export.keep("display_name", mode.display_name, f"{export.tool} shows the agent's name {name!r}")
    export.line("when_to_use", CARRIED, "as the description")
    description = mode.when_to_use
    if mode.description:
        sentence, whole, _ = when_to_use(mode.description.strip())
        if whole == mode.description and sentence == mode.when_to_use:
            description = mode.description
            export.line("description", CARRIED, "as the description, whose first sentence is the when-to-use")
        else:
            export.keep("description", mode.description, f"{export.tool}'s description holds the when-to-use")
    return description, _export_body(export)


def _export_body(export: ModeExport) -> str:
    """The body: the prompt, then the instruction lines and custom instructions below their marker lines."""
    mode, edges = export.mode, {}
    prompt, edges["prompt"] = _edges(mode.prompt)
    if mode.prompt:
        export.line("prompt", CARRIED, "as the body" + (_EDGES_KEPT if edges["prompt"] else ""))
    sections = {"mode_instructions": "\n".join(mode.mode_instructions), "custom_instructions": mode.custom_instructions}
    for name, text in sections.items():
        if text:
            sections[name], edges[name] = _edges(text)
            kept = _EDGES_KEPT if edges[name] else ""
            export.line(name, APPROXIMATED, f"appended to the body after the prompt, below a '<!-- aptix-modes: "
                                            f"{name} -->' line: the agent reads it as part of its prompt, and "
                                            f"importing the file restores the field{kept}")
    if any(edges.values()):
        export.kept["edges"] = {name: edge for name, edge in edges.items() if edge}
    return join_body(prompt, sections)


_EDGES_KEPT = f"; the blank lines around it, which the body cannot hold, kept in the '{KEPT_COMMENT}' comment"


@dataclass(frozen=True)
class GroupExport:
    """What a format writes for a mode's tool groups, and what reading that back gives."""

    fields: dict  # the front matter fields written
    read_back: list[str]  # the groups an import of those fields grants, before the comment refines them
    how: str = ""  # where the format approximates the groups
    note: str = ""  # what the fields leave the agent, when the report must say it (no group: no tool of a group)


def mode_groups(mode: AgentMode) -> tuple[list[tuple[str, dict | None]], list[str]]:
    """(the mode's tool groups with their options, the lines that are not a tool group or repeat one)."""
    groups, others = [], []
    for line in mode.tool_group_hints:
        parsed = parse_group_line(line)
        if parsed is None or parsed[0] in [group for group, _ in groups]:
            others.append(line)
        else:
            groups.append(parsed)
    return groups, others


def export_groups(export: ModeExport, write) -> dict:
    """
    The front matter fields for the mode's tool groups (write: the format's (groups) -> GroupExport), and their
    report line; lines the fields cannot give back exactly are kept in the comment.
    """
    groups, others = mode_groups(export.mode)
    written = write(groups)
    lines = [line for line in export.mode.tool_group_hints if line not in others]
    shown_fields = ", ".join(f"{name}: {shown(value)}" for name, value in written.fields.items()) or "nothing"
    # No group is a permission too, the narrowest: written, and said, never left to mean every tool.
    parts = [f"as {shown_fields}" if lines else f"no tool group: as {shown_fields}", written.note, written.how]
    if others:
        parts.append(f"{', '.join(map(repr, others))} dropped: not one of the tool groups ({', '.join(TOOL_GROUPS)})")
    if lines and written.read_back != lines:
        export.kept["tool_group_hints"] = lines
        parts.append(f"the exact lines kept in the front matter's '{KEPT_COMMENT}' comment, so that importing the "
                     "file restores them")
    how = "; ".join(filter(None, parts))
    if not lines and others:
        export.line("tool_group_hints", DROPPED, how)
    else:
        exact = written.read_back == lines and not others and not written.how
        export.line("tool_group_hints", CARRIED if exact else APPROXIMATED, how)
    return written.fields
