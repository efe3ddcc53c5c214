"""The read-only mode endpoints: /api/modes/, /api/modes/<key>/, /api/modes/<key>/tools/, /api/system-prompt/."""

import json
from datetime import datetime

import pytest

from agent_tools.contract import AgentToolExecutionContext
from modes.catalog import published_catalog
from modes.models import AgentMode
from modes.tools import ListModesTool

from ..expected import SEED_MODE_KEYS, SEED_MODES, listing, seed_listing, seed_prompt

pytestmark = pytest.mark.django_db


def tool_payload(arguments):
    context = AgentToolExecutionContext(
        user=None, session_id=None, conversation_id=None, load_catalog=published_catalog
    )
    result = ListModesTool().execute(json.dumps(arguments), context)
    assert result.successful, result.error_message
    return json.loads(result.result)


def research(custom_mode):
    """The custom_mode fixture as SEED_MODES would have it: the fields the listing shows."""
    return {
        "id": custom_mode.pk,
        "key": "research",
        "displayName": "Research",
        "description": "Finding and comparing sources.",
        "whenToUse": "Use this mode when the user wants sources found, compared or summarised.",
        "isDefault": False,
        "humanRoleHints": [],
        "exampleUtterances": ["Find papers on retrieval-augmented generation."],
        "source": "custom",
        "status": "active",
        "switchTargets": [],
        "llmCanEnter": True,
    }


# --- GET /api/modes/ -----------------------------------------------------------------------------------------


def test_list_returns_the_seed_modes_and_the_catalog_revision(alice_client):
    response = alice_client.get("/api/modes/")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert list(body) == ["modes", "catalogRevision"]
    assert body == seed_listing()


@pytest.mark.parametrize(
    "query, arguments, keys, include_examples",
    [
        ("", {}, [*SEED_MODE_KEYS, "research"], False),
        ("?includeExamples=true", {"includeExamples": True}, [*SEED_MODE_KEYS, "research"], True),
        ("?includeExamples=false", {"includeExamples": False}, [*SEED_MODE_KEYS, "research"], False),
        ("?filter=DDR", {"filter": "DDR"}, ["ddr_authoring"], False),
        ("?filter=everyday&includeExamples=true", {"filter": "everyday", "includeExamples": True}, ["general"], True),
        ("?filter=", {"filter": ""}, [*SEED_MODE_KEYS, "research"], False),
        ("?filter=nothing+matches+this", {"filter": "nothing matches this"}, [], False),
        ("?filter=rEsEaRcH&includeExamples=1", {"filter": "rEsEaRcH", "includeExamples": True}, ["research"], True),
    ],
    ids=["none", "examples", "no-examples", "filter", "both", "empty-filter", "no-match", "custom-mode"],
)
def test_list_and_the_agent_list_modes_tool_give_the_tul_010_payload(
    alice_client, custom_mode, query, arguments, keys, include_examples
):
    modes = {**SEED_MODES, "research": research(custom_mode)}
    # The custom mode is the catalog's first change after the seed: revision 2.
    expected = listing(*(modes[key] for key in keys), include_examples=include_examples, catalog_revision=2)
    response = alice_client.get("/api/modes/" + query)
    assert response.status_code == 200
    assert response.json() == expected
    assert tool_payload(arguments) == expected


def test_list_include_examples_returns_the_seed_examples(alice_client):
    modes = alice_client.get("/api/modes/?includeExamples=true").json()["modes"]
    assert modes[0]["exampleUtterances"] == [
        "What is the difference between a workflow and a DDR?",
        "Summarize this paragraph for me.",
        "Explain how the agent decides which tools to use.",
    ]
    plain = alice_client.get("/api/modes/").json()["modes"]
    assert all(mode["exampleUtterances"] == [] for mode in plain)


def test_list_filter_ignores_case(alice_client):
    modes = alice_client.get("/api/modes/?filter=WORKFLOW%20AUTHORING").json()["modes"]
    assert [mode["key"] for mode in modes] == ["workflow_authoring"]


@pytest.mark.parametrize("query", ["?includeExamples=maybe", "?filter=" + "x" * 201], ids=["bad-bool", "long-filter"])
def test_list_refuses_bad_query_parameters_with_400(alice_client, query):
    response = alice_client.get("/api/modes/" + query)
    assert response.status_code == 400
    assert set(response.json()) <= {"includeExamples", "filter"}


# --- GET /api/modes/<key>/ ----------------------------------------------------------------------------------


def test_detail_returns_the_full_mode_in_camel_case(alice_client):
    response = alice_client.get("/api/modes/ddr_authoring/")
    assert response.status_code == 200
    body = response.json()
    for stamp in ("createdAt", "updatedAt"):
        datetime.fromisoformat(body.pop(stamp).replace("Z", "+00:00"))
    assert body == SEED_MODES["ddr_authoring"]


def test_detail_of_a_custom_mode(alice_client, custom_mode):
    body = alice_client.get("/api/modes/research/").json()
    assert (body["id"], body["source"], body["whenToUse"]) == (custom_mode.pk, "custom", custom_mode.when_to_use)


@pytest.mark.parametrize("suffix", ["", "tools/"], ids=["detail", "tools"])
def test_an_unknown_key_is_404_naming_it_and_listing_the_valid_keys(alice_client, suffix):
    response = alice_client.get(f"/api/modes/poetry/{suffix}")
    assert response.status_code == 404
    detail = response.json()["detail"]
    assert "'poetry'" in detail
    for key in SEED_MODE_KEYS:
        assert key in detail


def test_lookup_is_by_key_not_by_id(alice_client):
    assert alice_client.get("/api/modes/3F8E4F377F7A4C189C7F6A8B9F945C11/").status_code == 404


# --- Read-only ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["/api/modes/", "/api/modes/general/", "/api/modes/general/tools/", "/api/system-prompt/"])
@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_writes_are_405_and_leave_the_catalog_unchanged(alice_client, url, method):
    before = list(AgentMode.objects.order_by("pk").values())
    body = {"key": "general", "display_name": "Hacked", "when_to_use": "Never.", "is_default": False}
    response = getattr(alice_client, method)(url, body, format="json")
    assert response.status_code == 405
    assert list(AgentMode.objects.order_by("pk").values()) == before


# --- GET /api/modes/<key>/tools/ -----------------------------------------------------------------------------


def test_mode_tools_lists_the_tool_names_the_mode_enables(alice_client):
    response = alice_client.get("/api/modes/general/tools/")
    assert response.status_code == 200
    assert response.json() == {
        "mode": "general",
        "tools": ["agent_change_mode", "agent_list_modes", "agent_workflow_registry", "agent_hello_world"],
    }


def test_mode_tools_of_a_custom_mode(alice_client, custom_mode):
    assert alice_client.get("/api/modes/research/tools/").json() == {
        "mode": "research",
        "tools": ["agent_change_mode", "agent_list_modes"],
    }


# --- GET /api/system-prompt/ ---------------------------------------------------------------------------------


@pytest.mark.parametrize("key", SEED_MODE_KEYS)
def test_system_prompt_is_the_mode_catalog_block_as_plain_text(alice_client, key):
    response = alice_client.get(f"/api/system-prompt/?currentMode={key}")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    assert response.content.decode("utf-8") == seed_prompt(key)


@pytest.mark.parametrize("query", ["", "?currentMode=", "?currentMode=poetry"], ids=["absent", "empty", "unknown"])
def test_system_prompt_for_an_absent_or_unknown_mode_is_the_default_modes(alice_client, query):
    response = alice_client.get("/api/system-prompt/" + query)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    assert response.content.decode("utf-8") == seed_prompt("general")


def test_an_empty_include_examples_is_a_400_that_says_what_to_send(alice_client):
    response = alice_client.get("/api/modes/?includeExamples=")
    assert response.status_code == 400
    assert response.json() == {"includeExamples": ["Must be true or false; leave the parameter out for false."]}
