"""The admin shaped for reviewing modes: branded, the when-to-use sentence and the lists laid out to be read
whole, the mode list's columns, filters and search over every text field."""

import re

import pytest
from django.urls import reverse

from modes.models import AgentMode

from ..expected import DDR_ID, LIST_FIELDS

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]

CHANGELIST = reverse("admin:modes_agentmode_changelist")

def ddr_form(client) -> str:
    return client.get(reverse("admin:modes_agentmode_change", args=[DDR_ID])).content.decode()


def listed_keys(response):
    return [mode.key for mode in response.context["cl"].result_list]


def test_the_admin_is_branded(admin_client):
    html = admin_client.get(reverse("admin:index")).content.decode()
    assert '<div id="site-name"><a href="/admin/">Aptix Modes administration</a></div>' in html
    assert "<title>Modes, tools, sessions and accounts | Aptix Modes admin</title>" in html
    assert "Django administration" not in html


def test_the_login_page_is_branded(client):
    html = client.get(reverse("admin:login")).content.decode()
    assert "<title>Log in | Aptix Modes admin</title>" in html


def test_when_to_use_is_a_wide_box_that_shows_the_whole_sentence_and_its_limit(admin_client):
    html = ddr_form(admin_client)
    box = re.search(r"<textarea [^>]*name=\"when_to_use\"[^>]*>", html).group(0)
    assert 'class="aptix-wide"' in box
    assert 'maxlength="300"' in box
    assert 'rows="2"' in box
    assert (
        "One sentence, on one line, of at most 300 characters: the system prompt lists it as '- key: "
        "sentence', and the model chooses between modes by it. It wraps here only so that it can be read whole."
    ) in html


@pytest.mark.parametrize("field", LIST_FIELDS)
def test_a_list_field_is_a_wide_box_that_keeps_each_item_on_its_line(admin_client, field):
    html = ddr_form(admin_client)
    box = re.search(rf'<textarea [^>]*name="{field}"[^>]*>', html).group(0)
    assert 'wrap="off"' in box
    assert 'class="aptix-wide aptix-lines"' in box
    help_text = re.search(rf'<div class="help" id="id_{field}_helptext">\s*<div>(.*?)</div>', html, re.S).group(1)
    assert help_text.endswith("One item per line; a long item stays on its line. Blank lines are dropped.")


def test_the_tool_ids_help_points_to_the_preview(admin_client):
    assert (
        "Names of the tools enabled while this mode is active; the preview below shows them as the model gets them. "
        "One item per line; a long item stays on its line. Blank lines are dropped."
    ) in ddr_form(admin_client)


def test_the_form_loads_its_stylesheet(admin_client):
    assert '<link href="/static/modes/admin.css" media="all" rel="stylesheet">' in ddr_form(admin_client)


def test_the_stylesheet_is_served(client):
    assert client.get("/static/modes/admin.css").status_code == 200


def test_the_mode_list_shows_key_name_status_default_source_and_position(admin_client):
    html = admin_client.get(CHANGELIST).content.decode()
    headers = re.findall(r'<th scope="col" class="[^"]*column-(\w+)', html)
    assert headers == ["key", "display_name", "status", "is_default", "source", "version", "position"]
    assert 'name="form-0-position"' in html  # reordered from the list, without opening each mode


@pytest.mark.parametrize(
    "query",
    ["agent_ddr_manager", "Architect writing", "MUST, SHOULD", "prefer:SYS-001", "design record", "requirements"],
    ids=["tool-id", "role-hint", "instruction", "rag-scope", "strong-signal", "weak-signal"],
)
def test_search_finds_text_in_the_list_fields(admin_client, query):
    assert listed_keys(admin_client.get(CHANGELIST, {"q": query})) == ["ddr_authoring"]


def test_search_in_list_fields_ignores_case(admin_client):
    assert listed_keys(admin_client.get(CHANGELIST, {"q": "ARCHITECT WRITING"})) == ["ddr_authoring"]


def test_search_for_a_tool_every_seed_mode_lists_finds_all_three(admin_client):
    assert listed_keys(admin_client.get(CHANGELIST, {"q": "agent_workflow_registry"})) == [
        "general",
        "ddr_authoring",
        "workflow_authoring",
    ]


def test_the_two_line_error_is_shown_beside_the_field(admin_client):
    ddr = AgentMode.objects.get(pk=DDR_ID)
    data = {
        "display_name": ddr.display_name,
        "description": ddr.description,
        "when_to_use": "First line.\r\nSecond line.",
        "status": ddr.status,
        "version": ddr.version,
        "position": str(ddr.position),
        **{name: "\n".join(getattr(ddr, name)) for name in LIST_FIELDS},
    }
    html = admin_client.post(reverse("admin:modes_agentmode_change", args=[DDR_ID]), data).content.decode()
    assert re.search(
        r'<ul class="errorlist" id="id_when_to_use_error"><li>This must be a single line: it is rendered inline in the '
        r"system prompt.</li></ul>",
        html,
    )
