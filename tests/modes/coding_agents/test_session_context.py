"""
A session in a mode imported from any coding agent's files gets what that mode tells the model: its context's
modeInstructions, in every tool format, and MCP's instructions; the Mode Catalog block beside it is AGN-014's,
byte for byte, with the imported mode listed after the seed modes.
"""

import json

import pytest
from rest_framework.test import APIClient

from agent_tools.formats import TOOL_FORMATS
from modes.catalog import published_catalog
from modes.coding_agents.base import AgentFile
from modes.coding_agents.importing import import_agent_files
from sessions_app.services import create_session

from ...expected import SEED_WHEN_TO_USE, prompt_with
from .conftest import CLAUDE_AGENT, KILOCODEMODES, OPENCODE_AGENT, ROO_RULES, ROOMODES

pytestmark = pytest.mark.django_db

KILO_AGENT = """\
---
description: Prepares a release, from the changelog to the tag.
mode: primary
---

You prepare releases.

1. Read the changelog.
2. Bump the version:

       make bump

Tag it last.
"""

# Per format: its files, the key of the mode they hold, its when-to-use, and what it tells the model (written out
# from the files above, not computed by the code under test).
IMPORTS = {
    "roo": (
        {".roomodes": ROOMODES, ".roo/rules-docs-writer/01-style.md": ROO_RULES}, "docs_writer",
        "Use this mode for writing and editing documentation.",
        "You are Roo, a technical writer.\n\nYou write docs that people finish reading:\n  - short sentences\n"
        "  - one idea per paragraph\n\nKeep sentences short.\n\n# Rules from .roo/rules-docs-writer/01-style.md:\n"
        "Use the active voice.",
    ),
    "kilo-modes": (
        {".kilocodemodes": KILOCODEMODES}, "translate", "Use this mode for translating the user interface's strings.",
        "You are Kilo Code, a linguist who translates the interface.",
    ),
    "kilo-agent": (
        {".kilo/agent/release.md": KILO_AGENT}, "release", "Prepares a release, from the changelog to the tag.",
        "You prepare releases.\n\n1. Read the changelog.\n2. Bump the version:\n\n       make bump\n\nTag it last.",
    ),
    "opencode": (
        {".opencode/agent/review.md": OPENCODE_AGENT}, "review", "Reviews code for quality and best practices",
        "You are in code review mode. Focus on:\n\n- Code quality and best practices\n- Potential bugs and edge cases"
        "\n\n```js\n// a fence, kept as written\n```",
    ),
    "claude-code": (
        {".claude/agents/test-runner.md": CLAUDE_AGENT}, "test_runner", "Use proactively to run tests and fix failures.",
        "You are a test automation expert.\n\nWhen you see code changes, run the tests.",
    ),
}


@pytest.fixture(params=list(IMPORTS))
def imported_session(request, alice):
    """alice's session in the mode that one format's files hold, imported (and so published) first."""
    files, key, when_to_use, instructions = IMPORTS[request.param]
    import_agent_files(
        files=[AgentFile(path, content) for path, content in files.items()], from_format=None, update=False,
        dry_run=False,
    )
    session = create_session(catalog=published_catalog(), owner=alice, org=None, mode_key=key)
    block = prompt_with(key, *SEED_WHEN_TO_USE, (key, when_to_use))
    return session, instructions, block


def test_the_context_gives_the_imported_modes_instructions_and_the_block_in_every_tool_format(
    imported_session, alice_client
):
    session, instructions, block = imported_session
    for tool_format in [None, *TOOL_FORMATS]:
        query = {"toolFormat": tool_format} if tool_format else {}
        context = alice_client.get(f"/api/sessions/{session.pk}/context/", query).json()
        assert (context["modeInstructions"], context["systemPrompt"]) == (instructions, block), tool_format


def test_mcp_gives_the_imported_modes_instructions_then_the_block(imported_session, alice):
    session, instructions, block = imported_session
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {alice.api_key}")
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "tests", "version": "1"}}
    response = client.post(
        f"/mcp/sessions/{session.pk}/", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}),
        content_type="application/json", HTTP_ACCEPT="application/json, text/event-stream",
    )
    assert response.status_code == 200, response.content
    assert response.json()["result"]["instructions"] == f"{instructions}\n\n{block}"
