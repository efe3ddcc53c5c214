"""The tool registry of TUL-011 §2: register() refuses a tool class that breaks the contract (ImproperlyConfigured)."""

import inspect
import json
import re

from django.core.exceptions import ImproperlyConfigured

from aptix_site.service_errors import NotFound

from .contract import TOOL_NAME_CHARACTERS, TOOL_NAME_PATTERN, AgentTool

SIMPLE_TYPES = {"string", "number", "integer", "boolean", "object", "array"}


class UnknownToolError(NotFound, LookupError):
    def __init__(self, name):
        super().__init__(f"No tool is registered or declared under the name {name!r}.")


class ToolRegistry:
    def __init__(self):
        self._tools: dict[str, AgentTool] = {}

    def register(self, tool_class: type[AgentTool]) -> type[AgentTool]:
        label = getattr(tool_class, "__qualname__", repr(tool_class))
        if problem := _contract_problem(tool_class):
            raise ImproperlyConfigured(f"Tool {label} cannot be registered: {problem}")
        if tool_class.TOOL_NAME in self._tools:
            other = type(self._tools[tool_class.TOOL_NAME]).__qualname__
            raise ImproperlyConfigured(
                f"Tool {label} cannot be registered: {other} already uses the name {tool_class.TOOL_NAME!r}."
            )
        self._tools[tool_class.TOOL_NAME] = tool_class()
        return tool_class

    def get(self, name: str) -> AgentTool:
        try:
            return self._tools[name]
        except KeyError:
            raise UnknownToolError(name) from None

    def has(self, name: str) -> bool:
        return name in self._tools

    def tools(self) -> list[AgentTool]:
        """Every registered tool, sorted by name."""
        return [self._tools[name] for name in sorted(self._tools)]


def _contract_problem(tool_class) -> str | None:
    """The first rule of the contract the class breaks, phrased as the rule; None if it keeps them all."""
    if not (inspect.isclass(tool_class) and issubclass(tool_class, AgentTool)):
        return "it must be a subclass of AgentTool."
    own = vars(tool_class)
    name = own.get("TOOL_NAME")
    if not (isinstance(name, str) and re.match(TOOL_NAME_PATTERN, name)):
        return f"TOOL_NAME must be defined on the class and match ^{TOOL_NAME_CHARACTERS}$."
    if not _is_text(own.get("TOOL_USAGE_METADATA")):
        return "TOOL_USAGE_METADATA must be defined on the class and not be empty."
    get_schema = own.get("get_schema")
    if not isinstance(get_schema, staticmethod):
        return "get_schema must be a static method defined on the class."
    try:
        takes_parameters = bool(inspect.signature(get_schema.__func__).parameters)
    except (TypeError, ValueError):  # a builtin without a readable signature
        return "get_schema must be a Python function taking no parameters."
    if takes_parameters:
        return "get_schema must take no parameters."
    if "run" not in own:
        return "it must define run()."
    try:
        tool = tool_class()
    except Exception as error:
        return f"it must be constructible without arguments, but {type(error).__name__}: {error}"
    if tool.name != name:
        return f"its name property returns {tool.name!r}, not TOOL_NAME {name!r}."
    try:
        schema, again = get_schema.__func__(), get_schema.__func__()
    except Exception as error:
        return f"get_schema() raised {type(error).__name__}: {error}"
    if schema != again:
        return "get_schema() must return the same schema every time (no timestamps, ids or random values)."
    return tool_schema_problem(schema, name)


def tool_schema_problem(schema, name) -> str | None:
    """The first rule of TUL-011 §4 the schema breaks, phrased as the rule; None if it keeps them all."""
    if not isinstance(schema, dict) or schema.get("type") != "function":
        return 'get_schema() must return a dict with "type": "function".'
    try:
        json.dumps(schema, allow_nan=False)
    except (TypeError, ValueError):
        return "get_schema() must return plain JSON data (dicts, lists, strings, numbers, booleans, null)."
    if schema.get("name") != name:
        return f'the schema "name" must equal TOOL_NAME {name!r}.'
    if not _is_text(schema.get("description")):
        return 'the schema needs a non-empty "description".'
    parameters = schema.get("parameters")
    if (
        not isinstance(parameters, dict)
        or parameters.get("type") != "object"
        or not isinstance(parameters.get("properties"), dict)
        or not isinstance(parameters.get("required"), list)
    ):
        return 'the schema "parameters" must have "type": "object", a "properties" object and a "required" list.'
    properties = parameters["properties"]
    for prop, spec in properties.items():
        if not isinstance(spec, dict) or not isinstance(spec.get("type"), str) or spec["type"] not in SIMPLE_TYPES:
            return f"parameter {prop!r} must declare a simple JSON type ({', '.join(sorted(SIMPLE_TYPES))})."
        if not _is_text(spec.get("description")):
            return f"parameter {prop!r} needs a description."
    if missing := [item for item in parameters["required"] if not isinstance(item, str) or item not in properties]:
        return f"required parameters {missing} are not among the properties."
    return None


def _is_text(value) -> bool:
    return isinstance(value, str) and bool(value.strip())


registry = ToolRegistry()
