"""
The one converter from a tool's TUL-011 schema, {"type": "function", "name", "description", "parameters"}, to
each vendor's tool format (OpenAI's Chat Completions and Responses API, Anthropic's Messages API, MCP), and the
rules a parameters schema must keep so that every format can carry it. The Responses API's format is in strict
mode, whose parameters need "additionalProperties": false on every object and every property in "required" (an
optional property becomes required and may be null).
"""

import copy

from .registry import SIMPLE_TYPES

TOOL_FORMATS = ("openai-chat", "openai-responses", "anthropic", "mcp")

# The JSON-Schema keywords OpenAI's strict mode understands; a schema with any other is refused there.
STRICT_KEYWORDS = frozenset({
    "type", "description", "title", "properties", "required", "additionalProperties", "items", "enum", "const",
    "anyOf", "format", "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    "minItems", "maxItems",
})
STRICT_MAX_DEPTH = 10
STRICT_MAX_PROPERTIES = 5000


def format_tool(tool, *, tool_format: str | None, mode_keys: tuple[str, ...] | None) -> dict:
    """The tool's TUL-011 schema in tool_format (None: as it is); with mode_keys, the one a session's model is given."""
    schema = tool.get_schema() if mode_keys is None else tool.schema_for_session(mode_keys=mode_keys)
    if tool_format is None:
        return schema
    name, description, parameters = schema["name"], schema["description"], schema["parameters"]
    if tool_format == "openai-chat":
        return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}
    if tool_format == "openai-responses":
        strict = strict_parameters(parameters)
        return {"type": "function", "name": name, "description": description, "parameters": strict, "strict": True}
    if tool_format == "anthropic":
        return {"name": name, "description": description, "input_schema": parameters}
    if tool_format == "mcp":
        return {"name": name, "description": description, "inputSchema": parameters, "annotations": tool.annotations()}
    raise ValueError(f"Unknown tool format {tool_format!r}; use one of: {', '.join(TOOL_FORMATS)}.")


def format_tools(tools, *, tool_format: str | None, mode_keys: tuple[str, ...] | None = None) -> list[dict]:
    return [format_tool(tool, tool_format=tool_format, mode_keys=mode_keys) for tool in tools]


def strict_parameters(schema: dict) -> dict:
    """A copy of a parameters schema as OpenAI's strict mode wants it; optional properties become nullable."""
    strict = copy.deepcopy(schema)
    _make_strict(strict)
    return strict


def _make_strict(node: dict) -> None:
    for option in node.get("anyOf", ()):
        _make_strict(option)
    if isinstance(node.get("items"), dict):
        _make_strict(node["items"])
    properties = node.get("properties")
    if properties is None:
        return
    optional = set(properties) - set(node.get("required", ()))
    for name, spec in properties.items():
        _make_strict(spec)
        if name in optional:
            _make_nullable(spec)
    node["additionalProperties"] = False
    node["required"] = list(properties)


def _make_nullable(spec: dict) -> None:
    if "const" in spec:  # a const admits one value: null becomes a second option
        option = {name: spec.pop(name) for name in list(spec) if name not in ("description", "title")}
        spec["anyOf"] = [option, {"type": "null"}]
        return
    if isinstance(spec.get("type"), str):
        spec["type"] = [spec["type"], "null"]
    if "enum" in spec and None not in spec["enum"]:
        spec["enum"] = [*spec["enum"], None]
    if "anyOf" in spec:
        spec["anyOf"] = [*spec["anyOf"], {"type": "null"}]


def strict_mode_problem(parameters: dict) -> str | None:
    """The first way the schema breaks what strict mode carries after strict_parameters(), for its author; or None."""
    count = 0

    def problem(node, where, depth):
        nonlocal count
        if not isinstance(node, dict):
            return f"{where} must be a schema object."
        if unsupported := sorted(set(node) - STRICT_KEYWORDS):
            return (
                f"{where} uses {', '.join(unsupported)}, which OpenAI's strict mode does not support; "
                f"the keywords it does are {', '.join(sorted(STRICT_KEYWORDS))}."
            )
        if depth > STRICT_MAX_DEPTH:
            return f"{where} is nested more than {STRICT_MAX_DEPTH} levels deep; strict mode allows {STRICT_MAX_DEPTH}."
        if "anyOf" in node:
            options = node["anyOf"]
            if not isinstance(options, list) or not options:
                return f"{where}: anyOf must be a non-empty list of schemas."
            if {"type", "properties", "items"} & set(node):
                return f"{where}: anyOf cannot stand beside type, properties or items; put them in each option."
            return next(
                filter(None, (problem(option, f"{where}.anyOf[{i}]", depth + 1) for i, option in enumerate(options))),
                None,
            )
        kind = node.get("type")
        if not isinstance(kind, str) or kind not in SIMPLE_TYPES:
            return f"{where} must have a \"type\" of {', '.join(sorted(SIMPLE_TYPES))} (or an \"anyOf\")."
        if kind == "array":
            if "items" not in node:
                return f"{where} is an array and must say what its \"items\" are."
            return problem(node["items"], f"{where}.items", depth + 1)
        if kind != "object":
            return None
        properties = node.get("properties")
        if not isinstance(properties, dict):
            return f"{where} is an object and must list its \"properties\"; strict mode allows no free-form objects."
        if node.get("additionalProperties", False) is not False:
            return f"{where} must not allow additional properties; leave additionalProperties out or set it to false."
        required = node.get("required", [])
        if not isinstance(required, list) or any(name not in properties for name in required):
            return f"{where}: \"required\" must list only names from its properties."
        count += len(properties)
        if count > STRICT_MAX_PROPERTIES:
            limit = STRICT_MAX_PROPERTIES
            return f"the schema has more than {limit} properties; strict mode allows {limit}."
        return next(
            filter(None, (problem(spec, f"{where}.{name}", depth + 1) for name, spec in properties.items())), None
        )

    return problem(parameters, "parameters", 1)
