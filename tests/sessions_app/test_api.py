"""/api/sessions/: creating and listing your sessions, their detail, mode changes and context."""

from datetime import datetime
from io import StringIO

import pytest
from django.core.management import call_command

from agent_tools.formats import TOOL_FORMATS
from modes.catalog import get_mode, published_catalog, published_release
from modes.models import AgentMode
from sessions_app.models import AgentSession
from sessions_app.services import ask_mode_change, create_session, set_session_mode
from sessions_app.tools import answer_mode_change

from ..agent_calls import change

from ..conftest import through_the_services
from ..expected import (
    DDR_ID,
    GENERAL_ID,
    SEED_MODE_KEYS,
    SEED_REVISION,
    SEED_WHEN_TO_USE,
    prompt_with,
    seed_instructions,
    seed_prompt,
    session_schemas,
)

pytestmark = pytest.mark.django_db

SESSION_KEYS = {"id", "mode", "modeId", "title", "org", "parentId", "createdAt", "updatedAt"}


# --- POST /api/sessions/ ---------------------------------------------------------------------------------------


def test_create_defaults_to_the_default_mode_and_the_callers_organization(alice, alice_client):
    response = alice_client.post("/api/sessions/", {}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert set(body) == SESSION_KEYS
    assert (body["mode"], body["modeId"], body["title"], body["org"], body["parentId"]) == (
        "general",
        GENERAL_ID,
        "",
        "acme",
        None,
    )
    session = AgentSession.objects.get(pk=body["id"])
    assert session.owner == alice
    assert session.org == alice.membership.organization
    assert session.mode_id == GENERAL_ID


def test_create_with_an_empty_body_works_too(alice_client):
    response = alice_client.post("/api/sessions/")
    assert response.status_code == 201
    assert response.json()["mode"] == "general"


def test_create_in_a_named_mode_with_a_title(alice_client):
    response = alice_client.post("/api/sessions/", {"mode": "ddr_authoring", "title": "Spec work"}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert (body["mode"], body["modeId"], body["title"]) == ("ddr_authoring", DDR_ID, "Spec work")


def test_create_with_an_empty_mode_uses_the_default(alice_client):
    assert alice_client.post("/api/sessions/", {"mode": ""}, format="json").json()["mode"] == "general"


def test_create_with_an_unknown_mode_is_400_naming_it_and_creates_nothing(alice_client):
    response = alice_client.post("/api/sessions/", {"mode": "poetry"}, format="json")
    assert response.status_code == 400
    message = response.json()["mode"][0]
    assert "'poetry'" in message
    for key in ("general", "ddr_authoring", "workflow_authoring"):
        assert key in message
    assert AgentSession.objects.count() == 0


@pytest.mark.parametrize("field", ["user", "owner", "org", "organization", "modeId", "parentId", "id"])
def test_create_refuses_identity_and_read_only_fields_in_the_body(alice_client, bob, field):
    response = alice_client.post("/api/sessions/", {field: str(bob.pk)}, format="json")
    assert response.status_code == 400
    assert field in response.json()
    assert AgentSession.objects.count() == 0


def test_a_user_outside_any_organization_creates_sessions_without_one(django_user_model):
    from rest_framework.test import APIClient

    loner = django_user_model.objects.create_user(username="loner")
    client = APIClient()
    client.force_authenticate(loner)
    body = client.post("/api/sessions/", {}, format="json").json()
    assert body["org"] is None
    assert AgentSession.objects.get(pk=body["id"]).org is None


# --- GET /api/sessions/ ----------------------------------------------------------------------------------------


def test_list_shows_only_your_own_sessions(alice_client, alice_session, bob_session):
    response = alice_client.get("/api/sessions/")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"next", "previous", "results"}
    assert [item["id"] for item in body["results"]] == [str(alice_session.pk)]
    assert set(body["results"][0]) == SESSION_KEYS


def test_list_is_paged_by_cursor_50_at_a_time(alice, alice_client, bob_session):
    org = alice.membership.organization
    mode = AgentMode.objects.get(key="general")
    AgentSession.objects.bulk_create(
        [AgentSession(owner=alice, org=org, mode=mode, title=f"s{index}") for index in range(51)]
    )

    first = alice_client.get("/api/sessions/").json()
    assert len(first["results"]) == 50
    assert first["next"] is not None and "cursor=" in first["next"]
    assert first["previous"] is None

    second = alice_client.get(first["next"]).json()
    assert len(second["results"]) == 1
    assert second["next"] is None
    assert second["previous"] is not None
    ids = {item["id"] for item in first["results"]} | {item["id"] for item in second["results"]}
    assert ids == {str(pk) for pk in AgentSession.objects.filter(owner=alice).values_list("pk", flat=True)}


def test_list_is_newest_first(alice, alice_client):
    older = create_session(release=published_release(), owner=alice, org=None, title="older")
    newer = create_session(release=published_release(), owner=alice, org=None, title="newer")
    AgentSession.objects.filter(pk=older.pk).update(created_at=newer.created_at.replace(year=2020))
    assert [item["title"] for item in alice_client.get("/api/sessions/").json()["results"]] == ["newer", "older"]


# --- GET /api/sessions/<id>/ -----------------------------------------------------------------------------------


def test_detail_returns_exactly_the_published_keys(alice_client, alice_session):
    response = alice_client.get(f"/api/sessions/{alice_session.pk}/")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == SESSION_KEYS
    assert body["id"] == str(alice_session.pk)
    assert body["mode"] == "general"
    assert body["modeId"] == GENERAL_ID
    assert body["title"] == "Alice's session"
    assert body["org"] == "acme"
    assert body["parentId"] is None
    datetime.fromisoformat(body["createdAt"].replace("Z", "+00:00"))
    datetime.fromisoformat(body["updatedAt"].replace("Z", "+00:00"))


def test_detail_follows_a_mode_change(alice, alice_client, alice_session):
    set_session_mode(
        catalog=published_catalog(), session_id=alice_session.pk, mode=get_mode("ddr_authoring"), reason="r", user=alice
    )
    body = alice_client.get(f"/api/sessions/{alice_session.pk}/").json()
    assert (body["mode"], body["modeId"]) == ("ddr_authoring", DDR_ID)


@pytest.mark.parametrize("method", ["put", "patch", "delete"])
def test_sessions_cannot_be_edited_or_deleted_through_the_api(alice_client, alice_session, method):
    response = getattr(alice_client, method)(
        f"/api/sessions/{alice_session.pk}/", {"mode": "ddr_authoring", "title": "x"}, format="json"
    )
    assert response.status_code == 405
    session = AgentSession.objects.get(pk=alice_session.pk)
    assert (session.mode_id, session.title) == (GENERAL_ID, "Alice's session")


# --- GET /api/sessions/<id>/mode-changes/ ------------------------------------------------------------------------


def test_mode_changes_are_listed_oldest_first(alice, alice_client, alice_session):
    for key, reason in (("ddr_authoring", "first"), ("workflow_authoring", "second"), ("general", "third")):
        set_session_mode(
            catalog=published_catalog(), session_id=alice_session.pk, mode=get_mode(key), reason=reason, user=alice
        )

    response = alice_client.get(f"/api/sessions/{alice_session.pk}/mode-changes/")
    assert response.status_code == 200
    body = response.json()
    assert (body["next"], body["previous"]) == (None, None)
    results = body["results"]
    assert list(results[0]) == [
        "id", "fromMode", "toMode", "reason", "branch", "branchSessionId", "changedBy", "catalogRevision", "changedAt",
        "confirmation",
    ]
    row = {
        "branch": False, "branchSessionId": None, "changedBy": "alice", "catalogRevision": SEED_REVISION,
        "confirmation": MODEL_CONFIRMED,
    }
    assert [{key: value for key, value in item.items() if key not in ("id", "changedAt")} for item in results] == [
        {"fromMode": "general", "toMode": "ddr_authoring", "reason": "first", **row},
        {"fromMode": "ddr_authoring", "toMode": "workflow_authoring", "reason": "second", **row},
        {"fromMode": "workflow_authoring", "toMode": "general", "reason": "third", **row},
    ]


def test_mode_changes_made_through_the_tool_endpoint_show_up(alice_client, alice_session):
    alice_client.post(
        "/api/tools/agent_change_mode/invoke/",
        {
            "arguments": {"mode": "ddr_authoring", "branch": True, "reason": "Branching out."},
            "sessionId": str(alice_session.pk),
        },
        format="json",
    )
    results = alice_client.get(f"/api/sessions/{alice_session.pk}/mode-changes/").json()["results"]
    assert len(results) == 1
    assert results[0]["branch"] is True
    child = AgentSession.objects.get(parent=alice_session)
    assert results[0]["branchSessionId"] == str(child.pk)


def test_a_session_without_changes_has_an_empty_history(alice_client, alice_session):
    body = alice_client.get(f"/api/sessions/{alice_session.pk}/mode-changes/").json()
    assert body == {"next": None, "previous": None, "results": []}


MODEL_CONFIRMED = {"by": "model", "channel": None, "id": None}


def confirmations_listed(client, session_id):
    response = client.get(f"/api/sessions/{session_id}/mode-changes/")
    assert response.status_code == 200, response.content
    return [(item["toMode"], item["confirmation"]) for item in response.json()["results"]]


def test_a_change_the_user_confirmed_over_rest_names_the_question_they_answered(settings, alice_client, alice_session):
    settings.MODE_CHANGE_CONFIRMATION = "user"
    asked = change(alice_client, alice_session.pk, "ddr_authoring", branch=False)
    assert asked.status_code == 200, asked.content
    question = asked.json()["confirmation"]["id"]
    answered = alice_client.post(
        f"/api/sessions/{alice_session.pk}/confirmations/{question}/", {"choice": "switch"}, format="json"
    )
    assert answered.status_code == 200, answered.content
    assert confirmations_listed(alice_client, alice_session.pk) == [
        ("ddr_authoring", {"by": "user", "channel": "rest", "id": question}),
    ]
    # A question answered "stay" changed nothing, so the list shows no row for it.
    asked = change(alice_client, alice_session.pk, "general")
    stay = asked.json()["confirmation"]["id"]
    assert alice_client.post(
        f"/api/sessions/{alice_session.pk}/confirmations/{stay}/", {"choice": "stay"}, format="json"
    ).status_code == 200
    assert len(confirmations_listed(alice_client, alice_session.pk)) == 1


def test_a_change_confirmed_over_mcp_by_the_model_or_by_nobody_says_so(settings, alice, alice_client, alice_session,
                                                                        new_mode):
    new_mode("scratch", entry_confirmation="none")  # nobody confirms entering it, whatever the setting
    settings.MODE_CHANGE_CONFIRMATION = "user"
    catalog = published_catalog()
    question = ask_mode_change(
        catalog=catalog, session_id=alice_session.pk, mode=catalog.mode("ddr_authoring"), reason="Agreed.",
        user=alice, branch=False, channel="mcp",
    )
    answer = answer_mode_change(
        catalog=catalog, session_id=alice_session.pk, confirmation_id=question.pk, user=alice, choice="switch",
        channel=question.channel,
    )
    assert answer.successful, answer.error_message
    assert change(alice_client, alice_session.pk, "scratch").status_code == 200  # asks nobody
    settings.MODE_CHANGE_CONFIRMATION = "model"
    assert change(alice_client, alice_session.pk, "general").status_code == 200

    assert confirmations_listed(alice_client, alice_session.pk) == [
        ("ddr_authoring", {"by": "user", "channel": "mcp", "id": str(question.pk)}),
        ("scratch", {"by": "none", "channel": None, "id": None}),
        ("general", MODEL_CONFIRMED),
    ]


def test_the_mode_change_list_costs_the_same_queries_for_one_change_or_a_page_of_confirmed_ones(
    settings, alice, alice_client, alice_session, django_assert_num_queries
):
    settings.MODE_CHANGE_CONFIRMATION = "user"
    url = f"/api/sessions/{alice_session.pk}/mode-changes/"

    def confirmed_change(key):
        catalog = published_catalog()
        question = ask_mode_change(
            catalog=catalog, session_id=alice_session.pk, mode=catalog.mode(key), reason="Agreed.", user=alice,
            branch=False, channel="rest",
        )
        answer_mode_change(
            catalog=catalog, session_id=alice_session.pk, confirmation_id=question.pk, user=alice, choice="switch",
            channel=question.channel,
        )

    confirmed_change("ddr_authoring")
    alice_client.get(url)
    # The token with its user, the session, the page (its keys, names and channels by subqueries).
    with django_assert_num_queries(3):
        assert len(alice_client.get(url).json()["results"]) == 1
    for key in ("general", "workflow_authoring", "general") * 3:
        confirmed_change(key)
    with django_assert_num_queries(3):
        results = alice_client.get(url).json()["results"]
    assert len(results) == 10 and {item["confirmation"]["channel"] for item in results} == {"rest"}


# --- GET /api/sessions/<id>/context/ -----------------------------------------------------------------------------


def test_context_is_the_system_prompt_and_the_tools_of_the_sessions_mode(alice_client, alice_session):
    response = alice_client.get(f"/api/sessions/{alice_session.pk}/context/")
    assert response.status_code == 200
    body = response.json()
    assert list(body) == [
        "catalogRevision", "systemPrompt", "modeInstructions", "tools", "clientTools", "unresolvedToolIds"
    ]
    assert body == {
        "catalogRevision": SEED_REVISION,
        "systemPrompt": seed_prompt("general"),
        "modeInstructions": seed_instructions("general"),
        # general enables agent_change_mode, agent_list_modes, agent_hello_world and a tool nobody declared.
        "tools": session_schemas("agent_change_mode", "agent_hello_world", "agent_list_modes"),
        "clientTools": [],
        "unresolvedToolIds": ["agent_workflow_registry"],
    }


def test_context_follows_the_sessions_current_mode(alice, alice_client, alice_session):
    set_session_mode(
        catalog=published_catalog(), session_id=alice_session.pk, mode=get_mode("ddr_authoring"), reason="r", user=alice
    )
    body = alice_client.get(f"/api/sessions/{alice_session.pk}/context/").json()
    assert body == {
        "catalogRevision": SEED_REVISION,
        "systemPrompt": seed_prompt("ddr_authoring"),
        "modeInstructions": seed_instructions("ddr_authoring"),
        "tools": session_schemas("agent_change_mode", "agent_list_modes"),
        "clientTools": [],
        "unresolvedToolIds": ["agent_workflow_registry", "agent_ddr_manager"],
    }


@pytest.mark.parametrize(
    "tool_ids, expected",
    [
        ([], ["agent_change_mode"]),
        (["agent_hello_world"], ["agent_change_mode", "agent_hello_world"]),
        (["agent_list_modes", "not_a_registered_tool"], ["agent_change_mode", "agent_list_modes"]),
    ],
    ids=["no-tools", "hello-only", "unregistered"],
)
def test_context_always_includes_agent_change_mode(alice, alice_client, new_mode, tool_ids, expected):
    new_mode("narrow", when_to_use="Use this mode for tests.", associated_tool_ids=tool_ids)
    session = create_session(release=published_release(), owner=alice, org=None, mode_key="narrow")
    body = alice_client.get(f"/api/sessions/{session.pk}/context/").json()
    assert [schema["name"] for schema in body["tools"]] == expected
    assert body["tools"] == session_schemas(*expected, mode_keys=[*SEED_MODE_KEYS, "narrow"])
    assert body["unresolvedToolIds"] == [name for name in tool_ids if name == "not_a_registered_tool"]
    assert body["systemPrompt"] == prompt_with("narrow", *SEED_WHEN_TO_USE, ("narrow", "Use this mode for tests."))


@pytest.mark.parametrize("tool_format", [None, *TOOL_FORMATS])
def test_context_carries_the_modes_own_instructions_beside_an_unchanged_mode_catalog_block(
    alice, alice_client, new_mode, tool_format
):
    prompt = "# Architect\n\nPlan first.\n\n```python\n    indented()\n```\n"
    new_mode(
        "architect", prompt=prompt, mode_instructions=["Name the trade-offs."], custom_instructions="Write ADRs.\n"
    )
    session = create_session(release=published_release(), owner=alice, org=None, mode_key="architect")
    query = {"toolFormat": tool_format} if tool_format else {}
    body = alice_client.get(f"/api/sessions/{session.pk}/context/", query).json()
    # In the mode's order: the prompt as written (its ends trimmed), the instruction lines, the custom instructions.
    assert body["modeInstructions"] == (
        "# Architect\n\nPlan first.\n\n```python\n    indented()\n```\n\nName the trade-offs.\n\nWrite ADRs."
    )
    when_to_use = ("architect", "Use this mode for architect.")
    assert body["systemPrompt"] == prompt_with("architect", *SEED_WHEN_TO_USE, when_to_use)


def test_context_follows_a_published_edit_on_the_next_request(alice_client, alice_session):
    # The context is built once per published revision: an edit published must show at once, tools and prompt alike.
    url = f"/api/sessions/{alice_session.pk}/context/"
    seed_tools = ["agent_change_mode", "agent_hello_world", "agent_list_modes"]
    assert [tool["name"] for tool in alice_client.get(url).json()["tools"]] == seed_tools
    general = AgentMode.objects.get(key="general")
    general.when_to_use, general.associated_tool_ids = "Use this mode for anything else.", ["agent_list_modes"]
    through_the_services(general.save)  # a revision, published at once with CATALOG_APPROVALS = 0
    body = alice_client.get(url).json()
    assert body["catalogRevision"] == SEED_REVISION + 1
    assert "- general: Use this mode for anything else." in body["systemPrompt"]
    assert [tool["name"] for tool in body["tools"]] == ["agent_change_mode", "agent_list_modes"]


def test_context_is_not_served_a_change_past_the_services_until_it_is_recorded(alice_client, alice_session):
    url = f"/api/sessions/{alice_session.pk}/context/"
    served = alice_client.get(url).json()
    AgentMode.objects.filter(key="general").update(
        when_to_use="Use this mode for anything else.", associated_tool_ids=["agent_list_modes"]
    )
    assert alice_client.get(url).json() == served  # in no revision: agents are not served it
    call_command("record_revision", stdout=StringIO())  # through the services' rules, published at once
    body = alice_client.get(url).json()
    assert body["catalogRevision"] == SEED_REVISION + 1
    assert "- general: Use this mode for anything else." in body["systemPrompt"]
    assert [tool["name"] for tool in body["tools"]] == ["agent_change_mode", "agent_list_modes"]
