"""
?toolFormat= (or its old name, ?tool_format=) on GET /api/tools/ and a session's context: each vendor's tool
shape, checked against the vendors' own SDK types (openai, anthropic, mcp) and, for OpenAI's strict mode,
against a JSON Schema of its rules written out here.
"""

import pytest
from anthropic.types import ToolParam
from jsonschema import Draft202012Validator
from mcp.types import Tool as McpTool
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.responses import FunctionToolParam
from pydantic import TypeAdapter, ValidationError

from modes.catalog import published_release
from modes.models import AgentMode, DeclaredTool

from ..conftest import through_the_services
from ..expected import CHANGE_MODE_SCHEMA, LIST_MODES_SCHEMA, REGISTRY_SCHEMAS, SEED_MODE_KEYS

pytestmark = pytest.mark.django_db

FORMATS = ["openai-chat", "openai-responses", "anthropic", "mcp"]
TYPED_DICTS = {
    "openai-chat": ChatCompletionFunctionToolParam,
    "openai-responses": FunctionToolParam,
    "anthropic": ToolParam,
}

# OpenAI's strict mode (Structured Outputs): every object closes its properties and requires all of them;
# the schema uses only the keywords strict mode supports. The "required lists every property" half is
# checked in Python below, since JSON Schema cannot compare two keywords' values.
STRICT_NODE = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$defs": {
        "node": {
            "type": "object",
            "propertyNames": {
                "enum": [
                    "type", "description", "title", "properties", "required", "additionalProperties", "items",
                    "enum", "const", "anyOf", "format", "pattern", "minimum", "maximum", "exclusiveMinimum",
                    "exclusiveMaximum", "multipleOf", "minItems", "maxItems",
                ]
            },
            "properties": {
                "properties": {"type": "object", "additionalProperties": {"$ref": "#/$defs/node"}},
                "items": {"$ref": "#/$defs/node"},
                "anyOf": {"type": "array", "items": {"$ref": "#/$defs/node"}},
            },
            # An object, or an optional object made nullable: ["object", "null"].
            "if": {
                "required": ["type"],
                "properties": {"type": {"anyOf": [{"const": "object"}, {"type": "array", "contains": {"const": "object"}}]}},
            },
            "then": {"required": ["properties", "required", "additionalProperties"],
                     "properties": {"additionalProperties": {"const": False}}},
        }
    },
    "$ref": "#/$defs/node",
    "required": ["type", "properties", "required", "additionalProperties"],
    "properties": {"type": {"const": "object"}},
}

# A tool the agent's client executes: nested objects (one optional), an array, an enum, an anyOf, a const, and
# optional properties at two depths.
DDR_MANAGER_PARAMETERS = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["open", "save"], "description": "What to do with the DDR."},
        "ddr": {
            "type": "object",
            "description": "The DDR.",
            "properties": {
                "id": {"type": "string", "description": "Its id, e.g. TUL-011."},
                "sections": {"type": "array", "items": {"type": "string"}, "description": "Section titles."},
            },
            "required": ["id"],
        },
        "note": {"type": "string", "description": "A note for the log."},
        "options": {
            "type": "object",
            "description": "How to save.",
            "properties": {
                "draft": {"type": "boolean", "description": "Save as a draft."},
                "target": {"anyOf": [{"type": "string"}, {"type": "integer"}], "description": "A path or a slot."},
            },
        },
        "format": {"type": "string", "const": "markdown", "description": "The file format."},
    },
    "required": ["action", "ddr"],
}


@pytest.fixture
def ddr_manager(db):
    """agent_ddr_manager, declared (a revision, published): the seed mode ddr_authoring lists it."""
    return through_the_services(
        lambda: DeclaredTool.objects.create(
            name="agent_ddr_manager", description="Opens and saves DDRs in the editor.",
            parameters=DDR_MANAGER_PARAMETERS,
        )
    )


def strict_mode_violations(parameters):
    """Where a parameters schema breaks OpenAI's strict-mode rules: the JSON Schema above, plus required == properties."""
    found = [error.message for error in Draft202012Validator(STRICT_NODE).iter_errors(parameters)]

    def walk(node, where):
        if "properties" in node and sorted(node.get("required", [])) != sorted(node["properties"]):
            found.append(f"{where}: required {node.get('required')} is not every property")
        for name, child in node.get("properties", {}).items():
            walk(child, f"{where}.{name}")
        if isinstance(node.get("items"), dict):
            walk(node["items"], f"{where}.items")
        for index, option in enumerate(node.get("anyOf", [])):
            walk(option, f"{where}.anyOf[{index}]")

    walk(parameters, "parameters")
    return found


def conforms_to_the_vendor_type(tool, tool_format):
    """The vendor's SDK type accepts the tool and keeps every field of it (nothing unknown, nothing dropped)."""
    if tool_format == "mcp":
        parsed = McpTool.model_validate(tool)
        return parsed.model_dump(by_alias=True, exclude_none=True, mode="json") == tool
    return TypeAdapter(TYPED_DICTS[tool_format]).validate_python(tool) == tool


def tools(client, url, tool_format):
    response = client.get(url, {"toolFormat": tool_format})
    assert response.status_code == 200, response.content
    return response.json()["tools"]


# --- the shapes, written out ------------------------------------------------------------------------------


def test_without_a_format_the_tools_are_the_registry_schemas_unchanged(alice_client):
    assert alice_client.get("/api/tools/").json()["tools"] == list(REGISTRY_SCHEMAS.values())


def test_openai_chat_nests_the_function(alice_client):
    listed = tools(alice_client, "/api/tools/", "openai-chat")
    assert listed[2] == {
        "type": "function",
        "function": {
            "name": "agent_list_modes",
            "description": LIST_MODES_SCHEMA["description"],
            "parameters": LIST_MODES_SCHEMA["parameters"],
        },
    }


def test_openai_responses_is_strict_with_optional_properties_made_nullable(alice_client):
    listed = tools(alice_client, "/api/tools/", "openai-responses")
    properties = LIST_MODES_SCHEMA["parameters"]["properties"]
    assert listed[2] == {
        "type": "function",
        "name": "agent_list_modes",
        "description": LIST_MODES_SCHEMA["description"],
        "parameters": {
            "type": "object",
            "properties": {
                "includeExamples": {**properties["includeExamples"], "type": ["boolean", "null"]},
                "filter": {**properties["filter"], "type": ["string", "null"]},
            },
            "required": ["includeExamples", "filter"],
            "additionalProperties": False,
        },
        "strict": True,
    }
    # A tool whose properties are all required is unchanged but for the flag.
    assert listed[0]["parameters"] == CHANGE_MODE_SCHEMA["parameters"]


def test_anthropic_calls_the_parameters_input_schema(alice_client):
    listed = tools(alice_client, "/api/tools/", "anthropic")
    assert listed[1] == {
        "name": "agent_hello_world",
        "description": "Creates a friendly greeting using the user's name.",
        "input_schema": REGISTRY_SCHEMAS["agent_hello_world"]["parameters"],
    }


def test_mcp_tools_say_which_only_read(alice_client):
    listed = {tool["name"]: tool for tool in tools(alice_client, "/api/tools/", "mcp")}
    assert listed["agent_list_modes"] == {
        "name": "agent_list_modes",
        "description": LIST_MODES_SCHEMA["description"],
        "inputSchema": LIST_MODES_SCHEMA["parameters"],
        "annotations": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
    }
    assert listed["agent_hello_world"]["annotations"]["readOnlyHint"] is True
    assert listed["agent_change_mode"]["annotations"] == {
        "readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": False
    }


# --- every format, every tool, against the vendors' types ----------------------------------------------------


@pytest.mark.parametrize("tool_format", FORMATS)
def test_every_listed_tool_conforms_to_the_vendors_type(alice_client, ddr_manager, tool_format):
    listed = tools(alice_client, "/api/tools/", tool_format)
    assert len(listed) == 4  # three registered, one declared
    for tool in listed:
        assert conforms_to_the_vendor_type(tool, tool_format), tool


@pytest.mark.parametrize("tool_format", FORMATS)
def test_every_tool_in_a_sessions_context_conforms_to_the_vendors_type(alice_client, ddr_manager, alice, tool_format):
    from sessions_app.services import create_session

    session = create_session(release=published_release(), owner=alice, org=None, mode_key="ddr_authoring")
    listed = tools(alice_client, f"/api/sessions/{session.pk}/context/", tool_format)
    assert len(listed) == 3  # agent_change_mode, agent_ddr_manager (declared), agent_list_modes
    for tool in listed:
        assert conforms_to_the_vendor_type(tool, tool_format), tool


def test_a_tool_with_an_unknown_field_does_not_conform(alice_client):
    # The check above can fail: the vendors' types drop what they do not know, and that is seen.
    tool = {**tools(alice_client, "/api/tools/", "anthropic")[0], "parameters": {}}
    assert not conforms_to_the_vendor_type(tool, "anthropic")
    with pytest.raises(ValidationError, match=r"inputSchema\n  Field required"):
        McpTool.model_validate({"name": "x", "description": "y"})


@pytest.mark.parametrize("url", ["/api/tools/", "context"])
def test_openai_responses_parameters_keep_strict_modes_rules(alice_client, alice_session, ddr_manager, url):
    if url == "context":
        general = AgentMode.objects.filter(key="general")
        through_the_services(lambda: general.update(associated_tool_ids=["agent_ddr_manager", "agent_list_modes"]))
        url = f"/api/sessions/{alice_session.pk}/context/"
    listed = tools(alice_client, url, "openai-responses")
    assert "agent_ddr_manager" in [tool["name"] for tool in listed]
    for tool in listed:
        assert tool["strict"] is True
        assert strict_mode_violations(tool["parameters"]) == [], tool["name"]


def test_the_strict_mode_check_catches_a_schema_strict_mode_refuses():
    assert strict_mode_violations(LIST_MODES_SCHEMA["parameters"])  # "required" is not every property
    assert strict_mode_violations(DDR_MANAGER_PARAMETERS)  # no additionalProperties: false
    assert strict_mode_violations({**CHANGE_MODE_SCHEMA["parameters"], "minProperties": 1})
    nullable_open_object = {
        "type": "object",
        "properties": {"o": {"type": ["object", "null"], "properties": {}, "required": [], "additionalProperties": True}},
        "required": ["o"],
        "additionalProperties": False,
    }
    assert strict_mode_violations(nullable_open_object)
    open_object_in_any_of = {
        "type": "object",
        "properties": {"o": {"anyOf": [{"type": "object", "properties": {"x": {"type": "string"}}, "required": []}]}},
        "required": ["o"],
        "additionalProperties": False,
    }
    assert strict_mode_violations(open_object_in_any_of)


def test_a_declared_tools_optional_properties_become_nullable_at_every_depth(alice_client, ddr_manager):
    listed = {tool["name"]: tool for tool in tools(alice_client, "/api/tools/", "openai-responses")}
    parameters = listed["agent_ddr_manager"]["parameters"]
    assert parameters["properties"]["note"]["type"] == ["string", "null"]
    assert parameters["properties"]["action"] == DDR_MANAGER_PARAMETERS["properties"]["action"]  # required: as it was
    ddr = parameters["properties"]["ddr"]
    assert ddr["required"] == ["id", "sections"]
    assert ddr["additionalProperties"] is False
    assert ddr["properties"]["sections"]["type"] == ["array", "null"]
    assert parameters["properties"]["options"] == {
        "type": ["object", "null"],
        "description": "How to save.",
        "properties": {
            "draft": {"type": ["boolean", "null"], "description": "Save as a draft."},
            "target": {
                "anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}], "description": "A path or a slot."
            },
        },
        "required": ["draft", "target"],
        "additionalProperties": False,
    }
    assert parameters["properties"]["format"] == {
        "description": "The file format.", "anyOf": [{"type": "string", "const": "markdown"}, {"type": "null"}]
    }
    assert DeclaredTool.objects.get().parameters == DDR_MANAGER_PARAMETERS, "the stored schema is left as it was"


def test_an_optional_enum_is_made_nullable_in_its_values_too(alice_client):
    through_the_services(
        lambda: DeclaredTool.objects.create(
            name="agent_pick",
            description="Picks a colour.",
            parameters={
                "type": "object",
                "properties": {"colour": {"type": "string", "enum": ["red", "blue"], "description": "The colour."}},
                "required": [],
            },
        )
    )
    listed = {tool["name"]: tool for tool in tools(alice_client, "/api/tools/", "openai-responses")}
    assert listed["agent_pick"]["parameters"]["properties"]["colour"] == {
        "type": ["string", "null"], "enum": ["red", "blue", None], "description": "The colour."
    }


# --- the session's valid modes -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tool_format, path",
    [
        (None, ("parameters",)),
        ("openai-chat", ("function", "parameters")),
        ("openai-responses", ("parameters",)),
        ("anthropic", ("input_schema",)),
        ("mcp", ("inputSchema",)),
    ],
)
def test_the_context_lists_the_catalogs_keys_as_the_modes_agent_change_mode_takes(
    alice_client, alice_session, custom_mode, tool_format, path
):
    query = {"toolFormat": tool_format} if tool_format else {}
    body = alice_client.get(f"/api/sessions/{alice_session.pk}/context/", query).json()
    schema = body["tools"][0]
    for key in path:
        schema = schema[key]
    assert schema["properties"]["mode"]["enum"] == [*SEED_MODE_KEYS, "research"]


def test_the_tool_list_keeps_the_plain_registry_schema_without_an_enum(alice_client):
    for tool_format in [None, *FORMATS]:
        query = {"toolFormat": tool_format} if tool_format else {}
        assert "enum" not in str(alice_client.get("/api/tools/", query).json()["tools"][0])


def test_the_enum_follows_a_new_mode_on_the_next_request(alice_client, alice_session, new_mode):
    url = f"/api/sessions/{alice_session.pk}/context/"
    assert alice_client.get(url).json()["tools"][0]["parameters"]["properties"]["mode"]["enum"] == SEED_MODE_KEYS
    new_mode("later", when_to_use="Use this mode later.")
    enum = alice_client.get(url).json()["tools"][0]["parameters"]["properties"]["mode"]["enum"]
    assert enum == [*SEED_MODE_KEYS, "later"]


# --- bad values ---------------------------------------------------------------------------------------------

VALID = "openai-chat, openai-responses, anthropic, mcp"


@pytest.mark.parametrize("url", ["/api/tools/", "context"])
@pytest.mark.parametrize("name", ["toolFormat", "tool_format"])
@pytest.mark.parametrize(
    "value, message",
    [
        ("openai", f'"openai" is not a tool format; use one of: {VALID}.'),
        ("MCP", f'"MCP" is not a tool format; use one of: {VALID}.'),
        ("", f'"" is not a tool format; use one of: {VALID}.'),
    ],
)
def test_an_unknown_format_is_a_400_listing_the_valid_ones(alice_client, alice_session, url, name, value, message):
    if url == "context":
        url = f"/api/sessions/{alice_session.pk}/context/"
    response = alice_client.get(url, {name: value})
    assert response.status_code == 400
    assert response.json() == {name: [message]}


@pytest.mark.parametrize("url", ["/api/tools/", "context"])
def test_the_old_name_tool_format_asks_for_what_tool_format_does(alice_client, alice_session, url):
    if url == "context":
        url = f"/api/sessions/{alice_session.pk}/context/"
    answer = alice_client.get(url, {"toolFormat": "anthropic"}).json()
    assert alice_client.get(url, {"tool_format": "anthropic"}).json() == answer
    assert alice_client.get(url, {"toolFormat": "anthropic", "tool_format": "anthropic"}).json() == answer
    assert answer != alice_client.get(url).json()


@pytest.mark.parametrize("url", ["/api/tools/", "context"])
def test_tool_format_and_its_old_name_asking_for_different_formats_is_a_400_naming_both(
    alice_client, alice_session, url
):
    if url == "context":
        url = f"/api/sessions/{alice_session.pk}/context/"
    response = alice_client.get(url, {"toolFormat": "mcp", "tool_format": "anthropic"})
    assert (response.status_code, response.json()) == (
        400,
        {"toolFormat": ['toolFormat "mcp" and tool_format "anthropic" differ; send toolFormat alone.']},
    )


def test_another_users_session_is_404_whatever_the_format(bob_client, alice_session):
    response = bob_client.get(f"/api/sessions/{alice_session.pk}/context/", {"toolFormat": "nope"})
    assert (response.status_code, response.json()) == (
        404,
        {"detail": f"No session {alice_session.pk} was found for you."},
    )
