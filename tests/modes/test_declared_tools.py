"""
Tools that the agent's client executes, declared in the admin: validation with readable errors, their place
in the tool list and in sessions' contexts, 409 when invoked here, and the warnings about tool ids that name
no tool (modes.W001) and declarations that a server tool shadows (modes.W002).
"""

import io
import json

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.urls import reverse

from modes.models import AgentMode, DeclaredTool
from modes.services import record_unrecorded_changes
from sessions_app.models import AgentSession, ModeChange
from sessions_app.services import create_session

from ..conftest import through_the_services
from ..expected import DDR_ID, tool_error
from modes.catalog import published_release

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]

ADD = reverse("admin:modes_declaredtool_add")
SAVE_PARAMETERS = {
    "type": "object",
    "properties": {"title": {"type": "string", "description": "The DDR's title."}},
    "required": ["title"],
}


@pytest.fixture
def ddr_manager(db):
    return through_the_services(
        lambda: DeclaredTool.objects.create(
            name="agent_ddr_manager", description="Opens and saves DDRs in the editor.", parameters=SAVE_PARAMETERS
        )
    )


def declare(admin_client, **fields):
    data = {
        "name": "agent_ddr_manager",
        "description": "Opens and saves DDRs in the editor.",
        "parameters": json.dumps(SAVE_PARAMETERS),
        **fields,
    }
    return admin_client.post(ADD, data)


def form_errors(response):
    return {name: list(errors) for name, errors in response.context["adminform"].form.errors.items()}


# --- declaring one in the admin ----------------------------------------------------------------------------


def test_an_admin_declares_a_tool_through_the_real_form(admin_client):
    response = declare(admin_client, read_only="on")
    assert response.status_code == 302, form_errors(response)
    tool = DeclaredTool.objects.get()
    assert (tool.name, tool.parameters, tool.read_only) == ("agent_ddr_manager", SAVE_PARAMETERS, True)


def test_the_add_form_starts_from_a_schema_with_no_arguments(admin_client):
    html = admin_client.get(ADD).content.decode()
    assert "&quot;type&quot;: &quot;object&quot;" in html and "&quot;required&quot;: []" in html


@pytest.mark.parametrize(
    "parameters, message",
    [
        ("{not json", "Enter a valid JSON."),
        (
            json.dumps({"type": "object", "properties": {"n": {"type": "strnig", "description": "d"}}, "required": []}),
            "This is not a valid JSON Schema: 'strnig' is not valid under any of the given schemas "
            "(at properties/n/type).",
        ),
        (
            json.dumps({"type": "object", "properties": {"n": {"type": "string"}}, "required": []}),
            "parameter 'n' needs a description.",
        ),
        (
            json.dumps({"type": "array", "items": {"type": "string"}}),
            'the schema "parameters" must have "type": "object", a "properties" object and a "required" list.',
        ),
        (
            json.dumps(
                {
                    "type": "object",
                    "properties": {"tags": {"type": "object", "description": "Free-form tags."}},
                    "required": [],
                }
            ),
            'parameters.tags is an object and must list its "properties"; strict mode allows no free-form objects.',
        ),
        (
            json.dumps(
                {
                    "type": "object",
                    "properties": {"n": {"type": "string", "description": "d", "minLength": 2}},
                    "required": [],
                }
            ),
            "parameters.n uses minLength, which OpenAI's strict mode does not support; the keywords it does are "
            "additionalProperties, anyOf, const, description, enum, exclusiveMaximum, exclusiveMinimum, format, "
            "items, maxItems, maximum, minItems, minimum, multipleOf, pattern, properties, required, title, type.",
        ),
        (
            json.dumps(
                {"type": "object", "properties": {}, "required": [], "additionalProperties": True}
            ),
            "parameters must not allow additional properties; leave additionalProperties out or set it to false.",
        ),
        (
            json.dumps(
                {
                    "type": "object",
                    "properties": {"n": {"type": "string", "anyOf": [{"type": "string"}], "description": "d"}},
                    "required": [],
                }
            ),
            "parameters.n: anyOf cannot stand beside type, properties or items; put them in each option.",
        ),
        (
            json.dumps(
                {
                    "type": "object",
                    "properties": {"n": {"type": "array", "items": {"type": ["string", "null"]}, "description": "d"}},
                    "required": [],
                }
            ),
            'parameters.n.items must have a "type" of array, boolean, integer, number, object, string (or an "anyOf").',
        ),
        ('{"type": "object", "properties": {}, "required": [], "title": "a\\u0000b"}', "The schema must not contain NUL characters."),
        ('{"type": "object", "properties": {}, "required": [], "title": "\\ud800"}', "The schema must not contain invalid Unicode (a lone surrogate)."),
        ('{"type": "object", "properties": {}, "required": [], "maximum": NaN}', "The schema must be plain JSON: NaN and Infinity are not JSON numbers."),
        ('{"a": ' * 150 + "1" + "}" * 150, "The schema is nested more than 40 levels deep."),
        (
            '{"type": "object", "properties": {"n": {"type": "string", "description": "Kept."}, '
            '"n": {"type": "integer", "description": "Dropped unseen."}}, "required": ["n"]}',
            "The schema gives the key 'n' twice in one object; keep one of them.",
        ),
        ("[" * 100000 + "]" * 100000, "Enter a valid JSON."),
        ('{"type": "object", "properties": {}, "required": [], "maximum": ' + "9" * 5000 + "}", "Enter a valid JSON."),
    ],
    ids=["not-json", "not-a-json-schema", "no-description", "not-an-object", "free-form-object", "minLength",
         "open-object", "anyOf-beside-type", "list-type", "nul", "lone-surrogate", "nan", "deep-schema", "repeated-key", "deep-json",
         "huge-integer"],
)
def test_a_bad_schema_is_refused_with_a_readable_error_and_nothing_saved(admin_client, parameters, message):
    response = declare(admin_client, parameters=parameters)
    assert response.status_code == 200
    assert form_errors(response) == {"parameters": [message]}
    assert not DeclaredTool.objects.exists()


def test_a_declaration_cannot_shadow_a_registered_server_tool(admin_client):
    response = declare(admin_client, name="agent_list_modes")
    assert form_errors(response) == {
        "name": ["'agent_list_modes' is a server tool registered in code; a declaration cannot shadow it."]
    }
    assert not DeclaredTool.objects.exists()


@pytest.mark.parametrize("name", ["agent ddr", "agent.ddr", "x" * 65, ""])
def test_a_name_a_vendor_would_refuse_is_refused(admin_client, name):
    response = declare(admin_client, name=name)
    assert "name" in form_errors(response)
    assert not DeclaredTool.objects.exists()


def test_the_database_refuses_a_malformed_name_whatever_writes_it():
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError, match="modes_declaredtool_name_format"), transaction.atomic():
        DeclaredTool.objects.create(name="bad name", description="d")


def test_full_clean_refuses_what_the_admin_refuses():
    tool = DeclaredTool(name="agent_x", description="   ", parameters={"type": "object"})
    with pytest.raises(ValidationError) as caught:
        tool.full_clean()
    assert set(caught.value.message_dict) == {"description", "parameters"}


def test_the_tool_page_names_the_modes_that_enable_it(admin_client, ddr_manager):
    html = admin_client.get(reverse("admin:modes_declaredtool_change", args=[ddr_manager.pk])).content.decode()
    assert "Enabled by modes" in html and "ddr_authoring" in html


# --- where declared tools appear --------------------------------------------------------------------------


def test_a_declared_tool_is_listed_with_the_registered_ones_and_named_as_the_clients(alice_client, ddr_manager):
    body = alice_client.get("/api/tools/").json()
    assert [tool["name"] for tool in body["tools"]] == [
        "agent_change_mode", "agent_ddr_manager", "agent_hello_world", "agent_list_modes"
    ]
    assert body["tools"][1] == {
        "type": "function",
        "name": "agent_ddr_manager",
        "description": "Opens and saves DDRs in the editor.",
        "parameters": SAVE_PARAMETERS,
    }
    assert body["clientTools"] == ["agent_ddr_manager"]


def test_a_declared_tool_is_in_the_context_of_a_session_whose_mode_lists_it(alice, alice_client, ddr_manager):
    session = create_session(release=published_release(), owner=alice, org=None, mode_key="ddr_authoring")
    body = alice_client.get(f"/api/sessions/{session.pk}/context/", {"toolFormat": "anthropic"}).json()
    assert [tool["name"] for tool in body["tools"]] == ["agent_change_mode", "agent_ddr_manager", "agent_list_modes"]
    assert body["tools"][1] == {
        "name": "agent_ddr_manager", "description": "Opens and saves DDRs in the editor.", "input_schema": SAVE_PARAMETERS
    }
    assert body["clientTools"] == ["agent_ddr_manager"]
    assert body["unresolvedToolIds"] == ["agent_workflow_registry"]


def test_a_declared_tool_is_not_in_the_context_of_a_mode_that_does_not_list_it(alice_client, alice_session, ddr_manager):
    body = alice_client.get(f"/api/sessions/{alice_session.pk}/context/").json()
    assert "agent_ddr_manager" not in [tool["name"] for tool in body["tools"]]
    assert body["clientTools"] == []


def test_declaring_a_tool_shows_in_contexts_on_the_next_request(alice, alice_client):
    session = create_session(release=published_release(), owner=alice, org=None, mode_key="ddr_authoring")
    url = f"/api/sessions/{session.pk}/context/"
    assert alice_client.get(url).json()["unresolvedToolIds"] == ["agent_workflow_registry", "agent_ddr_manager"]
    through_the_services(
        lambda: DeclaredTool.objects.create(
            name="agent_ddr_manager", description="Opens DDRs.", parameters=SAVE_PARAMETERS
        )
    )
    body = alice_client.get(url).json()
    assert body["unresolvedToolIds"] == ["agent_workflow_registry"]
    assert "agent_ddr_manager" in [tool["name"] for tool in body["tools"]]

    def description():
        tools = {tool["name"]: tool for tool in alice_client.get(url).json()["tools"]}
        return tools["agent_ddr_manager"]["description"]

    DeclaredTool.objects.filter(name="agent_ddr_manager").update(description="Opens and saves DDRs.")
    assert description() == "Opens DDRs."  # made past the services: in no revision, so not served
    record_unrecorded_changes()  # what manage.py record_revision runs: served once recorded
    assert description() == "Opens and saves DDRs."
    through_the_services(lambda: DeclaredTool.objects.all().delete())
    assert alice_client.get(url).json()["unresolvedToolIds"] == ["agent_workflow_registry", "agent_ddr_manager"]


# --- invoking one here ----------------------------------------------------------------------------------


def test_invoking_a_declared_tool_is_409_saying_the_client_executes_it(alice, alice_client, ddr_manager):
    session = create_session(release=published_release(), owner=alice, org=None, mode_key="ddr_authoring")
    before = (AgentSession.objects.count(), ModeChange.objects.count())
    for body in ({"arguments": {"title": "x"}}, {"arguments": {"title": "x"}, "sessionId": str(session.pk)}):
        response = alice_client.post("/api/tools/agent_ddr_manager/invoke/", body, format="json")
        assert response.status_code == 409
        assert response.json() == tool_error(
            "The tool 'agent_ddr_manager' is executed by the agent's client, not by this service: "
            "run it in the client and give the model its result."
        )
    assert (AgentSession.objects.count(), ModeChange.objects.count()) == before


def test_a_declared_tool_the_sessions_mode_does_not_enable_is_403_first(alice_client, alice_session, ddr_manager):
    response = alice_client.post(
        "/api/tools/agent_ddr_manager/invoke/", {"sessionId": str(alice_session.pk)}, format="json"
    )
    assert response.status_code == 403
    assert response.json() == tool_error(
        "Mode 'general' of this session does not enable the tool 'agent_ddr_manager'."
    )


def test_invoke_tool_command_refuses_a_declared_tool_in_one_line(alice, ddr_manager):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError) as caught:
        call_command("invoke_tool", "agent_ddr_manager", "--user", "alice", stdout=io.StringIO())
    assert str(caught.value) == (
        "The tool 'agent_ddr_manager' is executed by the agent's client, not by this service: "
        "run it in the client and give the model its result."
    )


# --- unresolved tool ids: modes.W001, and shadowed declarations: modes.W002 --------------------------------


def run_check():
    out, err = io.StringIO(), io.StringIO()
    call_command("check", "--database", "default", stdout=out, stderr=err)  # raises SystemCheckError on an error
    return out.getvalue() + err.getvalue()


def test_check_warns_of_each_mode_that_lists_tool_ids_naming_no_tool_and_still_passes():
    # Servers start on this catalog too: test_startup's Granian serves the seed catalog, which has these warnings.
    output = run_check()
    assert (
        "ddr_authoring: (modes.W001) Mode 'ddr_authoring' lists tool ids that name no tool: "
        "'agent_workflow_registry', 'agent_ddr_manager'." in output
    )
    assert "general: (modes.W001) Mode 'general' lists tool ids that name no tool: 'agent_workflow_registry'." in output
    assert "System check identified 3 issues (0 silenced)." in output


def test_declaring_the_tools_silences_the_warning(ddr_manager):
    for name in ("agent_workflow_registry", "agent_workflow_authoring"):
        through_the_services(lambda: DeclaredTool.objects.create(name=name, description=f"{name} in the client."))
    assert "System check identified no issues (0 silenced)." in run_check()


def test_a_typo_in_a_tool_id_is_warned_of(custom_mode):
    AgentMode.objects.filter(key="research").update(associated_tool_ids=["agent_list_mode"])
    record_unrecorded_changes()  # made past the services: the checks judge the published revision once recorded
    assert "research: (modes.W001) Mode 'research' lists tool ids that name no tool: 'agent_list_mode'." in run_check()


def test_a_declaration_that_a_server_tool_shadows_is_warned_of_and_ignored(alice_client):
    # Written past the form's validation, as a deployment that registers a new server tool would find it.
    through_the_services(
        lambda: DeclaredTool.objects.create(name="agent_hello_world", description="An old client-side greeting.")
    )
    assert (
        "agent_hello_world: (modes.W002) Declared tool 'agent_hello_world' has the name of a server tool registered "
        "in code, which is used instead." in run_check()
    )
    body = alice_client.get("/api/tools/").json()
    assert body["clientTools"] == []
    assert [tool["name"] for tool in body["tools"]] == ["agent_change_mode", "agent_hello_world", "agent_list_modes"]
    response = alice_client.post("/api/tools/agent_hello_world/invoke/", {"arguments": {"name": "Ada"}}, format="json")
    # The server tool registered in code answers.
    assert (response.status_code, response.json()) == (
        200,
        {
            "successful": True,
            "result": '{"message":"Hello, Ada! Welcome to Aptix.","conversationId":null,"sessionId":null}',
            "errorMessage": None,
        },
    )


def test_a_declaration_written_past_the_form_with_a_broken_schema_is_warned_of_and_left_out(alice, alice_client):
    through_the_services(  # past the form's validation; the catalog's rules are about modes
        lambda: DeclaredTool.objects.create(
            name="agent_ddr_manager", description="Opens DDRs.", parameters="not a schema"
        )
    )
    output = run_check()
    assert (
        "agent_ddr_manager: (modes.W003) Declared tool 'agent_ddr_manager' has parameters no vendor would take, so "
        "the model is not told of it: This is not a valid JSON Schema: 'not a schema' is not of type 'object', "
        "'boolean' (at the top level)." in output
    )
    assert "Mode 'ddr_authoring' lists tool ids that name no tool: 'agent_workflow_registry', 'agent_ddr_manager'." in output
    session = create_session(release=published_release(), owner=alice, org=None, mode_key="ddr_authoring")
    for tool_format in ("openai-responses", "mcp"):
        body = alice_client.get(f"/api/sessions/{session.pk}/context/", {"toolFormat": tool_format}).json()
        assert body["unresolvedToolIds"] == ["agent_workflow_registry", "agent_ddr_manager"]
        listed = alice_client.get("/api/tools/", {"toolFormat": tool_format})
        assert listed.status_code == 200
        assert "agent_ddr_manager" not in [tool["name"] for tool in listed.json()["tools"]]


def test_the_mode_admin_page_shows_the_unresolved_tool_ids(admin_client):
    html = admin_client.get(reverse("admin:modes_agentmode_change", args=[DDR_ID])).content.decode()
    assert (
        "Warning (modes.W001): Mode &#x27;ddr_authoring&#x27; lists tool ids that name no tool: "
        "&#x27;agent_workflow_registry&#x27;, &#x27;agent_ddr_manager&#x27;. The model is not told of these." in html
    )


def test_saving_a_mode_with_a_typo_in_a_tool_id_warns_the_admin(admin_client, custom_mode):
    from .admin_forms import form_data, messages_of

    response = admin_client.post(
        reverse("admin:modes_agentmode_change", args=[custom_mode.pk]),
        form_data(custom_mode, associated_tool_ids="agent_list_modes\nagent_hello_wrold"),
        follow=True,
    )
    assert AgentMode.objects.get(pk=custom_mode.pk).associated_tool_ids == ["agent_list_modes", "agent_hello_wrold"]
    assert any(
        message.startswith("Warning (modes.W001): Mode 'research' lists tool ids that name no tool: "
                           "'agent_hello_wrold'. The model is not told of these.")
        for message in messages_of(response)
    )


def test_import_reports_unresolved_tool_ids_per_mode_as_warnings(tmp_path):
    path = tmp_path / "modes.yaml"
    path.write_text(
        "format: aptix-modes\nversion: 1\nmodes:\n"
        "- key: research\n  display_name: Research\n  when_to_use: Use this mode for research.\n"
        "  associated_tool_ids: [agent_list_modes, agent_serch]\n"
        "- key: quiet\n  display_name: Quiet\n  when_to_use: Use this mode for quiet work.\n"
        "  associated_tool_ids: [agent_list_modes]\n",
        encoding="utf-8",
    )
    out, err = io.StringIO(), io.StringIO()
    call_command("import_modes", str(path), stdout=out, stderr=err)
    assert err.getvalue() == "Warning (modes.W001): Mode 'research' lists tool ids that name no tool: 'agent_serch'.\n"
    assert AgentMode.objects.filter(key__in=["research", "quiet"]).count() == 2
