"""
The tool registry of TUL-011 §2: register() checks a tool class against the
contract and refuses a malformed one with ImproperlyConfigured.
"""

import inspect
import re

from django.core.exceptions import ImproperlyConfigured

from .contract import AgentTool

TOOL_NAME_RE = re.compile(r"\A[a-zA-Z0-9_-]{1,64}\Z")
SIMPLE_TYPES = {"string", "number", "integer", "boolean", "object", "array"}


class UnknownToolError(LookupError):
    def __init__(self, name):
        self.name = name
        super().__init__(f"No tool is registered under the name {name!r}.")


class ToolRegistry:
    def __init__(self):
        self._tools: dict[str, AgentTool] = {}

    def register(self, tool_class: type[AgentTool]) -> type[AgentTool]:
        """Check tool_class against the contract and add it."""
        label = getattr(tool_class, "__qualname__", repr(tool_class))
        for problem in _contract_problems(tool_class):
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

    def tools(self) -> list[AgentTool]:
        """Every registered tool, sorted by name."""
        return [self._tools[name] for name in sorted(self._tools)]


def _contract_problems(tool_class):
    """The first broken rule is enough to refuse; each is phrased as the rule itself."""
    if not (inspect.isclass(tool_class) and issubclass(tool_class, AgentTool)):
        yield "it must be a subclass of AgentTool."
        return
    own = vars(tool_class)
    name = own.get("TOOL_NAME")
    if not isinstance(name, str) or not TOOL_NAME_RE.match(name):
        yield "TOOL_NAME must be defined on the class and match ^[a-zA-Z0-9_-]{1,64}$."
        return
    metadata = own.get("TOOL_USAGE_METADATA")
    if not isinstance(metadata, str) or not metadata.strip():
        yield "TOOL_USAGE_METADATA must be defined on the class and not be empty."
        return
    get_schema = own.get("get_schema")
    if not isinstance(get_schema, staticmethod):
        yield "get_schema must be a static method defined on the class."
        return
    if inspect.signature(get_schema.__func__).parameters:
        yield "get_schema must take no parameters."
        return
    if "run" not in own:
        yield "it must define run()."
        return
    try:
        tool = tool_class()
    except TypeError:
        yield "it must be constructible without arguments."
        return
    if tool.name != name:
        yield f"its name property returns {tool.name!r}, not TOOL_NAME {name!r}."
        return
    yield from _schema_problems(get_schema.__func__(), name)


def _schema_problems(schema, name):
    if not isinstance(schema, dict) or schema.get("type") != "function":
        yield 'get_schema() must return a dict with "type": "function".'
        return
    if schema.get("name") != name:
        yield f'the schema "name" must equal TOOL_NAME {name!r}.'
        return
    if not isinstance(schema.get("description"), str) or not schema["description"].strip():
        yield 'the schema needs a non-empty "description".'
        return
    parameters = schema.get("parameters")
    if (
        not isinstance(parameters, dict)
        or parameters.get("type") != "object"
        or not isinstance(parameters.get("properties"), dict)
        or not isinstance(parameters.get("required"), list)
    ):
        yield 'the schema "parameters" must have "type": "object", a "properties" object and a "required" list.'
        return
    properties = parameters["properties"]
    for prop, spec in properties.items():
        if not isinstance(spec, dict) or spec.get("type") not in SIMPLE_TYPES:
            yield f"parameter {prop!r} must declare a simple JSON type ({', '.join(sorted(SIMPLE_TYPES))})."
            return
        if not isinstance(spec.get("description"), str) or not spec["description"].strip():
            yield f"parameter {prop!r} needs a description."
            return
    missing = [item for item in parameters["required"] if item not in properties]
    if missing:
        yield f"required parameters {missing} are not among the properties."


registry = ToolRegistry()
