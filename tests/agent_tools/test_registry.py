"""The tool registry of TUL-011 §2: what register() refuses, and the production registry after start-up."""

import json
import os

import jsonschema
import pytest
from django.core.exceptions import ImproperlyConfigured

from agent_tools.contract import AgentTool, InvokeResult
from agent_tools.registry import ToolRegistry, UnknownToolError, registry
from agent_tools.tools import HelloWorldTool
from modes.tools import ListModesTool
from sessions_app.tools import ModeChangeTool

from ..servers import django_process

PRODUCTION_TOOLS = {
    "agent_change_mode": ModeChangeTool,
    "agent_hello_world": HelloWorldTool,
    "agent_list_modes": ListModesTool,
}


def valid_schema(name="sample_tool", **overrides):
    schema = {
        "type": "function",
        "name": name,
        "description": "Does a sample thing.",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "Some text."}},
            "required": ["text"],
        },
    }
    schema.update(overrides)
    return schema


def make_tool(class_name="SampleTool", *, name="sample_tool", metadata="Use it for samples.", schema=None, **extra):
    """A tool class defined from scratch, valid unless told otherwise."""
    the_schema = valid_schema(name) if schema is None else schema
    namespace = {
        "TOOL_NAME": name,
        "TOOL_USAGE_METADATA": metadata,
        "get_schema": staticmethod(lambda: the_schema),
        "run": lambda self, arguments_json, context: InvokeResult.create("{}"),
    }
    namespace.update(extra)
    return type(class_name, (AgentTool,), namespace)


def refusal(tool_class, registry_=None):
    with pytest.raises(ImproperlyConfigured) as caught:
        (registry_ or ToolRegistry()).register(tool_class)
    return str(caught.value)


# --- A valid tool ---------------------------------------------------------------------------------------


def test_a_valid_tool_registers_and_is_found_by_name():
    tools = ToolRegistry()
    tool_class = make_tool()
    assert tools.register(tool_class) is tool_class
    tool = tools.get("sample_tool")
    assert isinstance(tool, tool_class)
    assert tool.name == "sample_tool"


def test_an_unknown_name_raises_unknown_tool_error_naming_it():
    with pytest.raises(UnknownToolError, match="nope"):
        ToolRegistry().get("nope")


def test_tools_are_listed_sorted_by_name():
    tools = ToolRegistry()
    for name in ("zeta", "alpha", "mid"):
        tools.register(make_tool(f"{name.title()}Tool", name=name))
    assert [tool.name for tool in tools.tools()] == ["alpha", "mid", "zeta"]


@pytest.mark.parametrize("name", ["a", "A-b_9", "x" * 64])
def test_tool_names_of_letters_digits_underscore_and_hyphen_up_to_64_characters_are_accepted(name):
    ToolRegistry().register(make_tool(name=name))


# --- TOOL_NAME ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad_name",
    ["", "x" * 65, "has space", "dot.name", "slash/name", "caf\u00e9", "trailing_newline\n", None, 42],
    ids=["empty", "65-chars", "space", "dot", "slash", "non-ascii", "newline", "none", "int"],
)
def test_a_tool_name_outside_the_pattern_is_refused_naming_class_and_rule(bad_name):
    message = refusal(make_tool("BadNameTool", name=bad_name, schema=valid_schema("whatever")))
    assert "BadNameTool" in message
    assert "TOOL_NAME" in message
    assert "^[a-zA-Z0-9_-]{1,64}$" in message


def test_a_tool_name_only_inherited_from_a_parent_is_refused():
    class InheritingTool(HelloWorldTool):
        TOOL_USAGE_METADATA = HelloWorldTool.TOOL_USAGE_METADATA

        @staticmethod
        def get_schema():
            return HelloWorldTool.get_schema()

        def run(self, arguments_json, context):
            return super().run(arguments_json, context)

    message = refusal(InheritingTool)
    assert "InheritingTool" in message
    assert "TOOL_NAME must be defined on the class" in message


def test_a_subclass_that_only_inherits_everything_is_refused():
    class CopyTool(HelloWorldTool):
        pass

    assert "CopyTool" in refusal(CopyTool)


def test_a_class_that_is_not_an_agent_tool_is_refused():
    class NotATool:
        TOOL_NAME = "not_a_tool"

    message = refusal(NotATool)
    assert "NotATool" in message
    assert "subclass of AgentTool" in message


# --- TOOL_USAGE_METADATA --------------------------------------------------------------------------------


@pytest.mark.parametrize("metadata", ["", "   ", None], ids=["empty", "blank", "none"])
def test_empty_usage_metadata_is_refused_naming_class_and_rule(metadata):
    message = refusal(make_tool("QuietTool", metadata=metadata))
    assert "QuietTool" in message
    assert "TOOL_USAGE_METADATA" in message


def test_usage_metadata_only_inherited_is_refused():
    class Base(AgentTool):
        TOOL_USAGE_METADATA = "Inherited guidance."

    tool_class = type(
        "HeirTool",
        (Base,),
        {
            "TOOL_NAME": "heir",
            "get_schema": staticmethod(lambda: valid_schema("heir")),
            "run": lambda self, a, c: InvokeResult.create("{}"),
        },
    )
    message = refusal(tool_class)
    assert "HeirTool" in message
    assert "TOOL_USAGE_METADATA" in message


# --- get_schema must be a parameterless staticmethod ----------------------------------------------------


def test_get_schema_as_a_classmethod_is_refused():
    tool_class = make_tool("ClassSchemaTool", get_schema=classmethod(lambda cls: valid_schema()))
    message = refusal(tool_class)
    assert "ClassSchemaTool" in message
    assert "get_schema must be a static method" in message


def test_get_schema_as_an_instance_method_is_refused():
    tool_class = make_tool("InstanceSchemaTool", get_schema=lambda self: valid_schema())
    message = refusal(tool_class)
    assert "InstanceSchemaTool" in message
    assert "get_schema must be a static method" in message


def test_get_schema_only_inherited_from_the_base_class_is_refused():
    tool_class = type(
        "NoSchemaTool",
        (AgentTool,),
        {"TOOL_NAME": "no_schema", "TOOL_USAGE_METADATA": "Guidance.", "run": lambda self, a, c: None},
    )
    message = refusal(tool_class)
    assert "NoSchemaTool" in message
    assert "get_schema" in message


def test_get_schema_with_a_parameter_is_refused():
    tool_class = make_tool("ParamSchemaTool", get_schema=staticmethod(lambda verbose=False: valid_schema()))
    message = refusal(tool_class)
    assert "ParamSchemaTool" in message
    assert "get_schema must take no parameters" in message


def test_get_schema_without_a_readable_signature_is_refused():
    message = refusal(make_tool("BuiltinSchemaTool", get_schema=staticmethod(dict)))
    assert message == (
        "Tool BuiltinSchemaTool cannot be registered: get_schema must be a Python function taking no parameters."
    )


def test_get_schema_that_raises_is_refused_naming_class_and_error():
    def get_schema():
        raise RuntimeError("schema file missing")

    message = refusal(make_tool("FailingSchemaTool", get_schema=staticmethod(get_schema)))
    assert message == (
        "Tool FailingSchemaTool cannot be registered: get_schema() raised RuntimeError: schema file missing"
    )


def test_a_schema_that_changes_between_calls_is_refused():
    calls = iter(range(1000))
    tool_class = make_tool("ClockTool", get_schema=staticmethod(lambda: valid_schema(description=f"At {next(calls)}.")))
    assert "get_schema() must return the same schema every time" in refusal(tool_class)


def test_a_schema_that_is_not_plain_json_is_refused():
    tool_class = make_tool("SetSchemaTool", schema=valid_schema("sample_tool", tags={"a", "b"}))
    assert "get_schema() must return plain JSON data" in refusal(tool_class)


def test_a_constructor_that_fails_is_refused_naming_class_and_error():
    def __init__(self):
        raise ValueError("no configuration")

    message = refusal(make_tool("UnconfiguredTool", __init__=__init__))
    assert message == (
        "Tool UnconfiguredTool cannot be registered: it must be constructible without arguments, "
        "but ValueError: no configuration"
    )


def test_a_tool_without_its_own_run_is_refused():
    tool_class = make_tool("LazyTool")
    del tool_class.run
    message = refusal(tool_class)
    assert "LazyTool" in message
    assert "run()" in message


def test_a_name_property_that_does_not_return_tool_name_is_refused():
    tool_class = make_tool("MisnamedTool")
    tool_class.name = property(lambda self: "something_else")
    message = refusal(tool_class)
    assert "MisnamedTool" in message
    assert "'something_else'" in message and "TOOL_NAME" in message


def test_name_returns_tool_name_for_every_production_tool():
    for name, tool_class in PRODUCTION_TOOLS.items():
        assert tool_class().name == tool_class.TOOL_NAME == name


# --- The schema's shape ---------------------------------------------------------------------------------


def _parameters(**overrides):
    parameters = {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "Some text."}},
        "required": ["text"],
    }
    parameters.update(overrides)
    return parameters


def text_property(declaration):
    """A valid schema but for the declaration of its one parameter, 'text'."""
    return valid_schema(parameters=_parameters(properties={"text": declaration}))


BROKEN_SCHEMAS = {
    "not-a-dict": ("not a schema", '"type": "function"'),
    "type-not-function": (valid_schema(type="object"), '"type": "function"'),
    "type-missing": ({k: v for k, v in valid_schema().items() if k != "type"}, '"type": "function"'),
    "name-mismatch": (valid_schema(name="other_name"), '"name" must equal TOOL_NAME'),
    "description-missing": ({k: v for k, v in valid_schema().items() if k != "description"}, '"description"'),
    "description-blank": (valid_schema(description="  "), '"description"'),
    "parameters-missing": ({k: v for k, v in valid_schema().items() if k != "parameters"}, '"parameters"'),
    "parameters-type-not-object": (valid_schema(parameters=_parameters(type="array")), '"parameters"'),
    "properties-missing": (valid_schema(parameters={"type": "object", "required": []}), '"properties" object'),
    "properties-not-an-object": (valid_schema(parameters=_parameters(properties=["text"])), '"properties" object'),
    "required-missing": (valid_schema(parameters={"type": "object", "properties": {}}), '"required" list'),
    "required-not-a-list": (valid_schema(parameters=_parameters(required="text")), '"required" list'),
    "property-without-type": (
        text_property({"description": "Some text."}),
        "parameter 'text' must declare a simple JSON type",
    ),
    "property-type-null": (
        text_property({"type": "null", "description": "x"}),
        "parameter 'text' must declare a simple JSON type",
    ),
    "property-not-a-dict": (text_property("string"), "parameter 'text' must declare a simple JSON type"),
    "property-without-description": (text_property({"type": "string"}), "parameter 'text' needs a description"),
    "property-blank-description": (
        text_property({"type": "string", "description": " "}),
        "parameter 'text' needs a description",
    ),
    "required-names-a-missing-property": (
        valid_schema(parameters=_parameters(required=["text", "ghost"])),
        "required parameters ['ghost'] are not among the properties",
    ),
}


@pytest.mark.parametrize("schema, rule", BROKEN_SCHEMAS.values(), ids=BROKEN_SCHEMAS.keys())
def test_a_malformed_schema_is_refused_naming_class_and_rule(schema, rule):
    message = refusal(make_tool("BadSchemaTool", schema=schema))
    assert "BadSchemaTool" in message
    assert rule in message


@pytest.mark.parametrize(
    "parameters",
    [
        _parameters(properties={"text": {"type": ["string", "null"], "description": "Text or null."}}),
        _parameters(properties={"text": {"type": {"kind": "string"}, "description": "Odd type."}}),
        _parameters(required=[["text"]]),
    ],
    ids=["type-is-a-list", "type-is-an-object", "required-item-is-a-list"],
)
def test_a_schema_with_unhashable_types_or_required_items_is_refused_with_improperly_configured(parameters):
    # A list or object where a type name or a property name belongs is a malformed schema like any
    # other: it must be refused with ImproperlyConfigured naming the tool, not crash with a TypeError.
    message = refusal(make_tool("UnhashableSchemaTool", schema=valid_schema(parameters=parameters)))
    assert "UnhashableSchemaTool" in message


def test_every_simple_json_type_is_accepted_for_a_parameter():
    properties = {
        kind: {"type": kind, "description": f"A {kind}."}
        for kind in ("string", "number", "integer", "boolean", "object", "array")
    }
    ToolRegistry().register(
        make_tool(schema=valid_schema(parameters={"type": "object", "properties": properties, "required": []}))
    )


# --- Duplicates -----------------------------------------------------------------------------------------


def test_registering_the_same_tool_twice_is_refused():
    tools = ToolRegistry()
    tools.register(HelloWorldTool)
    message = refusal(HelloWorldTool, tools)
    assert "HelloWorldTool" in message
    assert "already uses the name 'agent_hello_world'" in message


def test_two_tools_sharing_a_name_are_refused_naming_both():
    tools = ToolRegistry()
    tools.register(make_tool("FirstTool", name="shared"))
    message = refusal(make_tool("SecondTool", name="shared"), tools)
    assert "SecondTool" in message and "FirstTool" in message
    assert "'shared'" in message
    assert isinstance(tools.get("shared"), AgentTool) and type(tools.get("shared")).__name__ == "FirstTool"


def test_a_refused_tool_is_not_added():
    tools = ToolRegistry()
    assert refusal(make_tool("BrokenTool", name="broken", metadata=""), tools) == (
        "Tool BrokenTool cannot be registered: TOOL_USAGE_METADATA must be defined on the class and not be empty."
    )
    assert tools.tools() == []
    with pytest.raises(UnknownToolError, match=r"^No tool is registered or declared under the name 'broken'\.$"):
        tools.get("broken")


# --- The production registry (StartupTests.ConfigureServices_WithValidTools_DoesNotThrow) --------------


def test_after_django_starts_the_registry_holds_exactly_the_three_production_tools():
    assert [tool.name for tool in registry.tools()] == sorted(PRODUCTION_TOOLS)
    for name, tool_class in PRODUCTION_TOOLS.items():
        assert type(registry.get(name)) is tool_class


@pytest.mark.parametrize("tool_class", PRODUCTION_TOOLS.values(), ids=PRODUCTION_TOOLS.keys())
def test_each_production_tool_registers_into_a_fresh_registry_without_error(tool_class):
    tools = ToolRegistry()
    tools.register(tool_class)
    assert tools.get(tool_class.TOOL_NAME).name == tool_class.TOOL_NAME


def test_all_production_tools_register_together_into_a_fresh_registry():
    tools = ToolRegistry()
    for tool_class in PRODUCTION_TOOLS.values():
        tools.register(tool_class)
    assert [tool.name for tool in tools.tools()] == sorted(PRODUCTION_TOOLS)


@pytest.mark.parametrize("tool", registry.tools(), ids=lambda tool: tool.name)
def test_every_registered_schema_is_deterministic(tool):
    assert tool.get_schema() == tool.get_schema()
    assert json.dumps(tool.get_schema(), sort_keys=True) == json.dumps(tool.get_schema(), sort_keys=True)


@pytest.mark.parametrize("tool", registry.tools(), ids=lambda tool: tool.name)
def test_every_registered_schema_has_valid_json_schema_parameters(tool):
    schema = tool.get_schema()
    jsonschema.Draft202012Validator.check_schema(schema["parameters"])
    assert schema["type"] == "function"
    assert schema["name"] == tool.TOOL_NAME


@pytest.mark.parametrize("tool", registry.tools(), ids=lambda tool: tool.name)
def test_every_registered_tool_runs_on_the_server(tool):
    assert tool.is_tool_fully_executed_on_server is True


# --- A broken tool stops start-up -----------------------------------------------------------------------


def _django_setup(settings_module):
    env = dict(os.environ, SECRET_KEY="tests-only-not-a-secret")
    return django_process(env, settings_module=settings_module, timeout=120)


def test_django_starts_with_the_production_tools():
    completed = _django_setup("aptix_site.settings")
    assert completed.returncode == 0, completed.stderr


def test_a_broken_tool_in_an_installed_app_stops_django_from_starting():
    completed = _django_setup("tests.agent_tools.broken_tool_settings")
    assert completed.returncode != 0
    assert "django.core.exceptions.ImproperlyConfigured" in completed.stderr
    assert "Tool BrokenNameTool cannot be registered" in completed.stderr
    assert "TOOL_NAME must be defined on the class and match ^[a-zA-Z0-9_-]{1,64}$" in completed.stderr
