"""
A mode's admin page previews, read-only, what a session in the mode receives: the system-prompt block and
the tools it enables with their descriptions, each tool id that resolves to no tool marked.
"""

import re
from html import escape

import pytest
from django.urls import reverse

from modes.models import AgentMode, DeclaredTool

from ..conftest import through_the_services
from ..expected import CHANGE_MODE_SCHEMA, DDR_ID, GENERAL_ID, LIST_MODES_SCHEMA, seed_prompt

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]


# As the page shows them: HTML-escaped.
DDR_PROMPT = escape(seed_prompt("ddr_authoring"))
CHANGE_MODE_DESCRIPTION = escape(CHANGE_MODE_SCHEMA["description"])
LIST_MODES_DESCRIPTION = escape(LIST_MODES_SCHEMA["description"])


def change_page(client, pk) -> str:
    response = client.get(reverse("admin:modes_agentmode_change", args=[pk]))
    assert response.status_code == 200
    return response.content.decode()


def prompt_block(html) -> str:
    return re.search(r'<pre class="aptix-preview">(.*?)</pre>', html, re.S).group(1)


def tool_rows(html) -> list[tuple[str, str, str]]:
    """(tool, description, runs on) for each row of the preview's tool table, unresolved ids included."""
    table = re.search(r'<table class="aptix-preview-tools">.*?<tbody>(.*?)</tbody>', html, re.S).group(1)
    rows = []
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S):
        cells = [re.sub(r"<[^>]+>", " ", cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        rows.append(tuple(" ".join(cell.split()) for cell in cells) + ("",) * (3 - len(cells)))
    return rows


def test_the_preview_shows_the_system_prompt_block_a_session_in_the_mode_receives(admin_client):
    assert prompt_block(change_page(admin_client, DDR_ID)) == DDR_PROMPT


def test_the_preview_lists_the_enabled_tools_and_marks_the_ids_that_name_no_tool(admin_client):
    assert tool_rows(change_page(admin_client, DDR_ID)) == [
        ("agent_change_mode", CHANGE_MODE_DESCRIPTION, "this service"),
        ("agent_list_modes", LIST_MODES_DESCRIPTION, "this service"),
        ("agent_workflow_registry", "Resolves to no tool: the model is not told of it.", ""),
        ("agent_ddr_manager", "Resolves to no tool: the model is not told of it.", ""),
    ]


def test_a_tool_every_mode_has_is_marked_as_such_when_the_mode_does_not_list_it(admin_client, new_mode):
    mode = new_mode("quiet", when_to_use="Use this mode to stay quiet.")
    assert tool_rows(change_page(admin_client, mode.pk)) == [
        ("agent_change_mode in every mode", CHANGE_MODE_DESCRIPTION, "this service"),
    ]


def test_a_declared_tool_shows_its_description_and_that_the_client_runs_it(admin_client):
    description = "Reads and writes DDR files in the editor."
    through_the_services(lambda: DeclaredTool.objects.create(name="agent_ddr_manager", description=description))
    rows = tool_rows(change_page(admin_client, DDR_ID))
    assert ("agent_ddr_manager", "Reads and writes DDR files in the editor.", "the agent&#x27;s client") in rows
    assert [row[0] for row in rows if row[1].startswith("Resolves to no tool")] == ["agent_workflow_registry"]


def test_the_preview_follows_a_change_to_another_mode(admin_client):
    through_the_services(
        lambda: AgentMode.objects.filter(key="general").update(when_to_use="Use this mode for small talk.")
    )
    assert "- general: Use this mode for small talk.\n" in prompt_block(change_page(admin_client, DDR_ID))


def test_text_from_the_catalog_is_shown_as_text_not_markup(admin_client):
    through_the_services(
        lambda: AgentMode.objects.filter(key="general").update(when_to_use="Use this mode for <b>everything</b> else.")
    )
    assert "- general: Use this mode for &lt;b&gt;everything&lt;/b&gt; else." in prompt_block(
        change_page(admin_client, GENERAL_ID)
    )


def test_a_new_mode_has_no_preview_until_it_is_saved(admin_client):
    html = admin_client.get(reverse("admin:modes_agentmode_add")).content.decode()
    assert "aptix-preview" not in html
    assert "Preview: what a session in this mode receives" not in html
