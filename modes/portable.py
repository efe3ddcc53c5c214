"""
The portable mode file moved by export_modes and import_modes.

A file is YAML or JSON: ``{"format": "aptix-modes", "version": 1, "modes": [...]}``
with one mapping per mode, keyed by the model's field names. ``source`` and the
timestamps stay out: only migrations make built-in modes.
"""

import difflib
import json
from dataclasses import dataclass

import yaml

from aptix_site.text import DuplicateKey, refuse_duplicate_keys, unstorable_text

from .models import AgentMode

FORMAT_NAME = "aptix-modes"
FORMAT_VERSION = 1

TEXT_FIELDS = ("id", "key", "display_name", "description", "when_to_use", "status", "version")
LIST_FIELDS = tuple(AgentMode.list_field_names())
PORTABLE_FIELDS = (*TEXT_FIELDS, "is_default", "position", *LIST_FIELDS)


class PortableFileError(Exception):
    """A file that cannot be imported; ``problems`` lists every reason, one line each."""

    def __init__(self, problems):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


def export_document(modes: list[AgentMode]) -> dict:
    return {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "modes": [{field: getattr(mode, field) for field in PORTABLE_FIELDS} for mode in modes],
    }


def dump_document(document: dict, *, file_format: str) -> str:
    if file_format == "json":
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)


@dataclass(frozen=True)
class ModeEntry:
    """
    One entry of a mode file, type-checked: the known fields whose values have the right type, the
    fields given with a wrong one (left out of ``fields``, so later checks skip them rather than report
    them again), and the problems found, each naming its field.
    """

    where: str
    fields: dict | None  # None: the entry is not a mapping at all
    rejected: frozenset[str] = frozenset()
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModeFile:
    entries: tuple[ModeEntry, ...]
    problems: tuple[str, ...] = ()  # about the file as a whole


def read_document(text: str) -> ModeFile:
    """
    A mode file's entries, each checked for known fields of the right types. Every problem found is
    kept for the import to report with its own; only a file with no 'modes' list to read raises.
    """
    try:
        document = _parse(text)
    except RecursionError:
        raise PortableFileError(["The file is nested too deeply to be a mode file."]) from None
    if not isinstance(document, dict) or not isinstance(document.get("modes"), list):
        raise PortableFileError(["The file must be a mapping with a 'modes' list."])
    problems = []
    unknown = sorted(set(map(str, document)) - {"format", "version", "modes"})
    if unknown:
        problems.append(f"Unknown top-level fields: {', '.join(unknown)}.")
    if document.get("format", FORMAT_NAME) != FORMAT_NAME or document.get("version", FORMAT_VERSION) != FORMAT_VERSION:
        problems.append(f"This is not an {FORMAT_NAME} version {FORMAT_VERSION} file.")
    entries = tuple(_check_entry(index, entry) for index, entry in enumerate(document["modes"]))
    return ModeFile(entries=entries, problems=tuple(problems))


def _parse(text: str):
    # JSON first: YAML reads most JSON, but not all of it (tab indents, escaped surrogate pairs such as
    # an emoji written by json.dumps, control characters), and export_modes writes JSON too.
    try:
        return json.loads(text, object_pairs_hook=refuse_duplicate_keys)
    except DuplicateKey as error:
        raise _repeated_key_error(error.key) from None
    except json.JSONDecodeError as json_error:
        try:
            return yaml.load(text, Loader=_YAMLLoaderWithoutRepeatedKeys)
        except yaml.YAMLError as yaml_error:
            error = json_error if text.lstrip().startswith("{") else yaml_error
            raise PortableFileError([f"The file is not valid YAML or JSON: {error}"]) from None


def _repeated_key_error(key) -> PortableFileError:
    return PortableFileError([f"The field {key!r} is given twice in one mapping; keep one of them."])


class _YAMLLoaderWithoutRepeatedKeys(yaml.SafeLoader):
    """PyYAML keeps the last of two equal keys without a word; a mode file with two of one field is a mistake."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    raise _repeated_key_error(key)
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


def describe_entry(index: int, entry) -> str:
    key = entry.get("key") if isinstance(entry, dict) else None
    return f"modes[{index}] (key {key!r})" if isinstance(key, str) else f"modes[{index}]"


def _check_entry(index: int, entry) -> ModeEntry:
    where = describe_entry(index, entry)
    if not isinstance(entry, dict):
        return ModeEntry(where=where, fields=None, problems=("each mode must be a mapping of field names to values.",))
    problems = {}
    for name in sorted(set(map(str, entry)) - set(PORTABLE_FIELDS)):
        guess = difflib.get_close_matches(name, PORTABLE_FIELDS, n=1)
        problems[name] = f"unknown field; did you mean {guess[0]}?" if guess else "unknown field."
    for name in PORTABLE_FIELDS:
        if name in entry:
            problem = _type_problem(name, entry[name])
            if problem:
                problems[name] = problem
    fields = {name: value for name, value in entry.items() if name in PORTABLE_FIELDS and name not in problems}
    return ModeEntry(
        where=where,
        fields=fields,
        rejected=frozenset(problems) & set(PORTABLE_FIELDS),
        problems=tuple(f"{name}: {problem}" for name, problem in problems.items()),
    )


def _type_problem(name: str, value) -> str | None:
    if name in TEXT_FIELDS:
        if not isinstance(value, str):
            return "must be text."
    elif name == "is_default":
        if not isinstance(value, bool):
            return "must be true or false."
    elif name == "position":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return "must be a whole number, 0 or more."
    elif not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return "must be a list of text lines."
    unstorable = unstorable_text(value)
    return f"must not contain {unstorable}." if unstorable else None
