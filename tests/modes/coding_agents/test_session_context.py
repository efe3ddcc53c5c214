"""
Issue 41's "Done when": a session in a mode imported from any coding agent's files gets what that mode tells the
model (its prompt, then its instruction lines, then its custom instructions, a blank line between them) as its
context's modeInstructions, in every tool format, and first in MCP's instructions and in agent_change_mode's second
text item; the Mode Catalog block beside it is AGN-014's, byte for byte, with the imported modes listed after the
seed modes.

Each format's files go through the real import (not a dry run). The revision it makes reaches sessions the two ways
the catalog publishes: at once (CATALOG_APPROVALS = 0), or approved by another admin and published over REST
(CATALOG_APPROVALS = 1). The session starts in the default mode and switches into the imported one through
agent_change_mode (REST's invoke, or MCP's tools/call), as an agent does. Every expected text is written out from
the files below, never computed by the code under test.
"""

import json
from dataclasses import dataclass

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from rest_framework.test import APIClient

from agent_tools.formats import TOOL_FORMATS
from modes.coding_agents.base import AgentFile
from modes.coding_agents.importing import import_agent_files

from ...expected import SEED_REVISION, SEED_WHEN_TO_USE, change_mode_result, prompt_with, seed_instructions
from .conftest import CLAUDE_AGENT, IMPORTED_KEYS, OPENCODE_AGENT, REPOSITORY, ROO_RULES, ROOMODES

pytestmark = pytest.mark.django_db

IMPORTED_REVISION = SEED_REVISION + 1  # the import's one revision
REASON = "The user wants this imported mode."
CONTEXT_FORMATS = [None, *TOOL_FORMATS]  # None: no toolFormat, the registry's own

# --- The files, per format, written the way each coding agent writes them -----------------------------------------

# Kilo's legacy modes file, as Kilo writes it (JSON), its prompt multi-paragraph Markdown, with a rules folder.
KILOCODEMODES = r"""{
  "customModes": [
    {
      "slug": "translate",
      "name": "🌐 Translate",
      "roleDefinition": "You are Kilo Code, a linguist who translates the interface.\n\n## How you work\n\n1. Read the English strings in `locales/en.json`.\n2. Translate each one, keeping its placeholders:\n\n   ```json\n   {\"greeting\": \"Hallo, {name}!\"}\n   ```\n\nAsk before you change a string's key.\n",
      "whenToUse": "Use this mode for translating the user interface's strings.",
      "customInstructions": "Keep the tone of the English text.\n\nNever translate product names.",
      "groups": ["read", ["edit", {"fileRegex": "(?=.*locales/).*\\.json$", "description": "Locale files"}]],
      "source": "project"
    }
  ]
}
"""
KILO_GLOSSARY = "# Glossary\n\n- *mode*: Modus\n- *session*: Sitzung\n"
# Kilo's agent file (OpenCode's format).
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
# OpenCode's config, its agent's prompt given inline, as OpenCode's documentation writes one.
OPENCODE_CONFIG = r"""{
  "$schema": "https://opencode.ai/config.json",
  "agent": {
    "docs-checker": {
      "description": "Checks the docs against the code.",
      "mode": "subagent",
      "prompt": "You check the docs against the code.\n\nFor each page:\n\n- run its examples\n- compare its flags with `--help`\n\nReport what differs; change nothing.",
      "tools": {"write": false, "edit": false}
    }
  }
}
"""
# OpenCode's config naming its prompt's file, as OpenCode's documentation writes one ("{file:./prompts/...}").
OPENCODE_CONFIG_PROMPT_FILE = """\
{
  "$schema": "https://opencode.ai/config.json",
  "agent": {
    "code-reviewer": {
      "description": "Reviews code for best practices and potential issues",
      "model": "anthropic/claude-sonnet-4-20250514",
      "prompt": "{file:./prompts/code-review.txt}",
      "tools": {"write": false, "edit": false}
    }
  }
}
"""
CODE_REVIEW_PROMPT = "You are a code reviewer.\n\nFocus on:\n\n- security\n- performance\n- maintainability\n"
# Claude Code's subagent as an export writes one (the instruction lines and custom instructions below their markers),
# then edited by hand: a description over two lines.
CLAUDE_AGENT_MARKED = """\
---
name: planner
description: |
  Use this mode to plan a change
  before anyone writes code.
tools: Read, Grep, Glob
model: opus
---

# Planner

You plan changes; you do not write code.

## Steps

1. Read the code the change touches.
2. Write the plan:

   - what changes, file by file
   - how to test it

<!-- aptix-modes: mode_instructions -->
Name the files the plan touches.
Say what could break.

<!-- aptix-modes: custom_instructions -->
Plans go in `docs/plans/`.

Keep each plan under a page.
"""


@dataclass(frozen=True)
class Imported:
    """One format's files, the key of the mode they hold, its when-to-use line, and what it tells the model."""

    files: dict[str, str]
    key: str
    when_to_use: str
    instructions: str  # modeInstructions, written out from the files above: prompt, instruction lines, custom


# What each mode tells the model, written out from its file.
DOCS_WRITER = (
    "You are Roo, a technical writer.\n\nYou write docs that people finish reading:\n  - short sentences\n"
    "  - one idea per paragraph"
    "\n\nKeep sentences short.\n\n# Rules from .roo/rules-docs-writer/01-style.md:\nUse the active voice."
)
REVIEW = (
    "You are in code review mode. Focus on:\n\n- Code quality and best practices\n- Potential bugs and edge cases"
    "\n\n```js\n// a fence, kept as written\n```"
)
TEST_RUNNER = "You are a test automation expert.\n\nWhen you see code changes, run the tests."

CASES = {
    "roo": Imported(
        {".roomodes": ROOMODES, ".roo/rules-docs-writer/01-style.md": ROO_RULES}, "docs_writer",
        "Use this mode for writing and editing documentation.", DOCS_WRITER,
    ),
    "kilo-modes-file": Imported(
        {".kilocodemodes": KILOCODEMODES, ".kilocode/rules-translate/glossary.md": KILO_GLOSSARY}, "translate",
        "Use this mode for translating the user interface's strings.",
        "You are Kilo Code, a linguist who translates the interface.\n\n## How you work\n\n"
        "1. Read the English strings in `locales/en.json`.\n2. Translate each one, keeping its placeholders:\n\n"
        '   ```json\n   {"greeting": "Hallo, {name}!"}\n   ```\n\nAsk before you change a string\'s key.'
        "\n\nKeep the tone of the English text.\n\nNever translate product names."
        "\n\n# Rules from .kilocode/rules-translate/glossary.md:\n# Glossary\n\n- *mode*: Modus\n- *session*: Sitzung",
    ),
    "kilo-agent": Imported(
        {".kilo/agent/release.md": KILO_AGENT}, "release", "Prepares a release, from the changelog to the tag.",
        "You prepare releases.\n\n1. Read the changelog.\n2. Bump the version:\n\n       make bump\n\nTag it last.",
    ),
    "opencode-agent": Imported(
        {".opencode/agent/review.md": OPENCODE_AGENT}, "review", "Reviews code for quality and best practices", REVIEW,
    ),
    "opencode-config": Imported(
        {"opencode.json": OPENCODE_CONFIG}, "docs_checker", "Checks the docs against the code.",
        "You check the docs against the code.\n\nFor each page:\n\n- run its examples\n"
        "- compare its flags with `--help`\n\nReport what differs; change nothing.",
    ),
    "opencode-config-prompt-file": Imported(
        {"opencode.json": OPENCODE_CONFIG_PROMPT_FILE, "prompts/code-review.txt": CODE_REVIEW_PROMPT},
        "code_reviewer", "Reviews code for best practices and potential issues",
        "You are a code reviewer.\n\nFocus on:\n\n- security\n- performance\n- maintainability",
    ),
    "claude-code": Imported(
        {".claude/agents/test-runner.md": CLAUDE_AGENT}, "test_runner", "Use proactively to run tests and fix failures.",
        TEST_RUNNER,
    ),
    "claude-code-exported": Imported(
        {".claude/agents/planner.md": CLAUDE_AGENT_MARKED}, "planner",
        "Use this mode to plan a change before anyone writes code.",
        "# Planner\n\nYou plan changes; you do not write code.\n\n## Steps\n\n1. Read the code the change touches.\n"
        "2. Write the plan:\n\n   - what changes, file by file\n   - how to test it"
        "\n\nName the files the plan touches.\nSay what could break."
        "\n\nPlans go in `docs/plans/`.\n\nKeep each plan under a page.",
    ),
}

# The conftest's repository, all four formats in one import: its modes, as the block lists them (by their files'
# paths), and what each tells the model.
REPOSITORY_MODES = {
    "test_runner": ("Use proactively to run tests and fix failures.", TEST_RUNNER),
    "translate": (
        "Use this mode for translating the user interface's strings.",
        "You are Kilo Code, a linguist who translates the interface.",
    ),
    "review": ("Reviews code for quality and best practices", REVIEW),
    "docs_writer": ("Use this mode for writing and editing documentation.", DOCS_WRITER),
}
assert list(REPOSITORY_MODES) == IMPORTED_KEYS


# --- How the tests drive the service ------------------------------------------------------------------------------


def import_files(files: dict[str, str], *, by=None):
    """The files through the real import (no dry run): all their modes, as one revision."""
    imported = import_agent_files(
        files=[AgentFile(path, content) for path, content in files.items()], from_format=None, update=False,
        dry_run=False, imported_by=by,
    )
    assert imported.result.revision == IMPORTED_REVISION
    return imported


def staff(username):
    """A staff user who may read, approve and publish catalog revisions, and an API client logged in as them."""
    user = get_user_model().objects.create_user(username=username, is_staff=True)
    granted = ["view_catalogrevision", "approve_revision", "publish_revision"]
    user.user_permissions.set(Permission.objects.filter(codename__in=granted))
    client = APIClient()
    client.force_login(user)
    return user, client


def new_session(client) -> str:
    response = client.post("/api/sessions/", {"title": "Imported modes"}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["mode"] == "general"
    return response.json()["id"]


def switch(client, session_id: str, key: str) -> dict:
    """agent_change_mode invoked over REST, as the LLM calls it once the user agreed; the tool's envelope."""
    arguments = {"mode": key, "branch": False, "reason": REASON}
    response = client.post(
        "/api/tools/agent_change_mode/invoke/", {"sessionId": session_id, "arguments": arguments}, format="json"
    )
    assert response.status_code in (200, 400), response.content
    return response.json()


def contexts(client, session_id: str) -> dict:
    """The session's context in every tool format, by format."""
    url = f"/api/sessions/{session_id}/context/"
    answers = {}
    for tool_format in CONTEXT_FORMATS:
        response = client.get(url, {"toolFormat": tool_format} if tool_format else {})
        assert response.status_code == 200, (tool_format, response.content)
        answers[tool_format] = response.json()
    return answers


def told(context: dict) -> tuple:
    """What a context tells the model of the catalog and the mode: its revision, modeInstructions, systemPrompt."""
    return context["catalogRevision"], context["modeInstructions"], context["systemPrompt"]


def mcp(alice, session_id: str, method: str, params: dict) -> dict:
    """One JSON-RPC request to the session's MCP endpoint, in-process, in 2025-11-25; its result."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {alice.api_key}")
    response = client.post(
        f"/mcp/sessions/{session_id}/", json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}),
        content_type="application/json", HTTP_ACCEPT="application/json, text/event-stream",
        HTTP_MCP_PROTOCOL_VERSION="2025-11-25",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert "error" not in body, body
    return body["result"]


def mcp_instructions(alice, session_id: str) -> str:
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "tests", "version": "1"}}
    return mcp(alice, session_id, "initialize", hello)["instructions"]


# --- One format's files, imported and published -------------------------------------------------------------------


PUBLICATIONS = ["published-at-once", "reviewed-then-published"]


@pytest.fixture
def publication(request, settings):
    """
    How the import's revision reaches sessions (a test parametrizes it, indirectly): at once (the default), or once
    another admin approved it and it is published.
    """
    way = getattr(request, "param", PUBLICATIONS[0])
    settings.CATALOG_APPROVALS = PUBLICATIONS.index(way)
    return way


@pytest.fixture(params=list(CASES))
def imported(request, publication, alice, alice_client):
    """
    One format's mode, imported (by an admin) and published, and alice's session in the default mode, created before
    the import: (the format's Imported, the session's id).
    """
    case = CASES[request.param]
    session_id = new_session(alice_client)
    seed_context = contexts(alice_client, session_id)
    author, author_client = staff("author")
    import_files(case.files, by=author)
    if publication == "reviewed-then-published":
        # Pending: sessions are served the seed catalog still, and cannot enter the mode.
        assert contexts(alice_client, session_id) == seed_context
        assert switch(alice_client, session_id, case.key)["successful"] is False
        _, reviewer_client = staff("reviewer")
        approved = reviewer_client.post(f"/api/catalog/revisions/{IMPORTED_REVISION}/approve/")
        assert approved.status_code == 200, approved.content
        published = author_client.post(f"/api/catalog/revisions/{IMPORTED_REVISION}/publish/")
        assert published.status_code == 200, published.content
        assert (published.json()["status"], published.json()["unreviewed"]) == ("published", False)
    return case, session_id


def blocks(case: Imported):
    """The Mode Catalog block for a session in general and in the imported mode, the catalog being seed + imported."""
    modes = (*SEED_WHEN_TO_USE, (case.key, case.when_to_use))
    return prompt_with("general", *modes), prompt_with(case.key, *modes)


@pytest.mark.parametrize("publication", PUBLICATIONS, indirect=True)
def test_the_context_gives_the_imported_modes_instructions_and_the_block_in_every_tool_format(imported, alice_client):
    case, session_id = imported
    general_block, block = blocks(case)
    # Still in the default mode: its own instructions, and the block lists the imported mode after the seed modes.
    for tool_format, context in contexts(alice_client, session_id).items():
        assert told(context) == (IMPORTED_REVISION, seed_instructions("general"), general_block), tool_format

    envelope = switch(alice_client, session_id, case.key)
    assert envelope["successful"] is True, envelope
    assert json.loads(envelope["result"]) == change_mode_result(case.key, branch=False, reason=REASON)

    answers = contexts(alice_client, session_id)
    for tool_format, context in answers.items():
        assert told(context) == (IMPORTED_REVISION, case.instructions, block), tool_format
    # The formats differ in their tools only.
    assert len({json.dumps({**context, "tools": None}) for context in answers.values()}) == 1


def test_mcp_gives_the_imported_modes_instructions_then_the_block_on_a_switch_and_at_connection(imported, alice):
    case, session_id = imported
    general_block, block = blocks(case)
    assert mcp_instructions(alice, session_id) == f"{seed_instructions('general')}\n\n{general_block}"

    arguments = {"mode": case.key, "branch": False, "reason": REASON}
    result = mcp(alice, session_id, "tools/call", {"name": "agent_change_mode", "arguments": arguments})
    expected = change_mode_result(case.key, branch=False, reason=REASON)
    assert (result["isError"], result["structuredContent"]) == (False, expected)
    first, second = result["content"]
    assert json.loads(first["text"]) == expected
    # The new mode's own instructions, a blank line, then the block: as the instructions of a session in that mode.
    assert second == {"type": "text", "text": f"{case.instructions}\n\n{block}"}
    assert mcp_instructions(alice, session_id) == f"{case.instructions}\n\n{block}"


# --- All four formats in one import: the conftest's repository ----------------------------------------------------


def test_a_session_switching_through_every_mode_of_a_repository_gets_each_modes_instructions(alice, alice_client):
    session_id = new_session(alice_client)
    import_files(REPOSITORY)
    modes = (*SEED_WHEN_TO_USE, *((key, when_to_use) for key, (when_to_use, _) in REPOSITORY_MODES.items()))
    for key, (_, instructions) in REPOSITORY_MODES.items():
        envelope = switch(alice_client, session_id, key)
        assert json.loads(envelope["result"]) == change_mode_result(key, branch=False, reason=REASON), envelope
        block = prompt_with(key, *modes)
        for tool_format, context in contexts(alice_client, session_id).items():
            assert told(context) == (IMPORTED_REVISION, instructions, block), (key, tool_format)
        assert mcp_instructions(alice, session_id) == f"{instructions}\n\n{block}", key
