"""Validators for the formats AGN-014 §7 fixes: mode ids, mode keys, tool names, string lists."""

import json
import uuid

from django.core.exceptions import ValidationError
from django.core.validators import ProhibitNullCharactersValidator, RegexValidator
from jsonschema import Draft202012Validator, SchemaError

from agent_tools.contract import TOOL_NAME_PATTERN
from agent_tools.formats import strict_mode_problem
from agent_tools.registry import tool_schema_problem
from aptix_site.text import nested_past, unstorable_text

# \A and \Z rather than ^ and $: "$" would let a trailing newline through in
# Python, and both PostgreSQL and Python read \A and \Z the same way.
MODE_ID_PATTERN = r"\A[0-9A-F]{32}\Z"
MODE_KEY_PATTERN = r"\A[a-z0-9_]+\Z"
# Some text that is not all spaces, and no CR or LF: what a database can check of "one line".
WHEN_TO_USE_PATTERN = r"\A[^\r\n]*\S[^\r\n]*\Z"
# What a mode key may hold, in the words of every message that refuses one.
MODE_KEY_CHARACTERS = "lower-case letters, digits and underscores"

validate_mode_id = RegexValidator(
    MODE_ID_PATTERN,
    "A mode id is a GUID without hyphens: exactly 32 upper-case hexadecimal characters (0-9, A-F).",
    code="invalid_mode_id",
)

validate_mode_key = RegexValidator(
    MODE_KEY_PATTERN,
    f"A mode key is snake_case: {MODE_KEY_CHARACTERS} only (for example ddr_authoring).",
    code="invalid_mode_key",
)

validate_tool_name = RegexValidator(
    TOOL_NAME_PATTERN,
    "A tool name uses letters, digits, '_' and '-' only, at most 64 of them (for example agent_ddr_manager).",
    code="invalid_tool_name",
)


def passes(validator, value) -> bool:
    try:
        validator(value)
    except ValidationError:
        return False
    return True


def one_of(values) -> str:
    """'a, b or c'."""
    *rest, last = values
    return f"{', '.join(rest)} or {last}" if rest else last


def new_mode_id():
    return uuid.uuid4().hex.upper()


def validate_not_blank(value):
    if not value.strip():
        raise ValidationError("This cannot be only spaces.", code="only_spaces")


def is_single_line(text: str) -> bool:
    """No line break of any kind: str.splitlines also knows \\x85, \\u2028 and the other Unicode breaks."""
    return text.splitlines() in ([text], [])


def validate_single_line(value):
    if not is_single_line(value):
        message = "This must be a single line: it is rendered inline in the system prompt."
        raise ValidationError(message, code="multiline")


def is_string_list(value) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def validate_string_list(value):
    if not is_string_list(value):
        raise ValidationError("This must be a list of text lines.", code="not_a_string_list")
    for item in value:
        ProhibitNullCharactersValidator()(item)
        if not item.strip():
            raise ValidationError("Lines in this list must not be empty.", code="empty_item")
        if not is_single_line(item):
            raise ValidationError("Each item must be a single line.", code="multiline_item")


def validate_tool_names(value):
    message = "These are not valid tool names (letters, digits, '_' and '-', at most 64 characters): %(items)s."
    _refuse_items(value, validate_tool_name, message)


def validate_mode_keys(value):
    _refuse_items(value, validate_mode_key, f"These are not mode keys ({MODE_KEY_CHARACTERS}): %(items)s.")


def _refuse_items(value, validator, message):
    """Refuse the text items of a list that fail validator, naming them (%(items)s in message)."""
    bad = [item for item in value if isinstance(item, str) and not passes(validator, item)]
    if bad:
        raise ValidationError(message, code=validator.code, params={"items": ", ".join(repr(item) for item in bad)})


def empty_parameters():
    return {"type": "object", "properties": {}, "required": []}


# Deeper JSON than OpenAI's strict mode allows (10 levels of schemas, each two levels of JSON), with room to spare.
MAX_PARAMETERS_NESTING = 40


def tool_parameters_problem(value) -> str | None:
    """What is wrong with a declared tool's parameters, for the person who wrote them; None if nothing."""
    problem = unstorable_text(value)
    if problem:
        return f"The schema must not contain {problem}."
    if nested_past(value, limit=MAX_PARAMETERS_NESTING):
        return f"The schema is nested more than {MAX_PARAMETERS_NESTING} levels deep."
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:
        return "The schema must be plain JSON: NaN and Infinity are not JSON numbers."
    try:
        Draft202012Validator.check_schema(value)
    except SchemaError as error:
        where = "/".join(str(part) for part in error.absolute_path) or "the top level"
        return f"This is not a valid JSON Schema: {error.message} (at {where})."
    schema = {"type": "function", "name": "declared", "description": "declared", "parameters": value}
    return tool_schema_problem(schema, "declared") or strict_mode_problem(value)


def validate_tool_parameters(value):
    problem = tool_parameters_problem(value)
    if problem:
        raise ValidationError("%(problem)s", code="invalid_tool_parameters", params={"problem": problem})
