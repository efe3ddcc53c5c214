"""python manage.py invoke_tool: the same envelope as POST /api/tools/<name>/invoke/, from the command line."""

import json
import uuid
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from modes.catalog import published_release
from sessions_app.models import AgentSession, ModeChange

from ..expected import DDR_ID, GENERAL_ID, change_mode_result, hello_result, seed_listing, tool_error

pytestmark = pytest.mark.django_db


def invoke_tool(*args, **options):
    out = StringIO()
    call_command("invoke_tool", *args, stdout=out, **options)
    return json.loads(out.getvalue())


def result_of(envelope):
    """The result an envelope carries, parsed, once it is seen to be a success."""
    assert list(envelope) == ["successful", "result", "errorMessage"], envelope
    assert (envelope["successful"], envelope["errorMessage"]) == (True, None), envelope
    return json.loads(envelope["result"])


def invoke_tool_failing(*args, **options):
    out = StringIO()
    with pytest.raises(CommandError) as caught:
        call_command("invoke_tool", *args, stdout=out, **options)
    return str(caught.value), out.getvalue()


def test_prints_the_same_envelope_as_the_endpoint(alice, alice_client, alice_session):
    arguments = '{"name": "Ada"}'
    printed = invoke_tool(
        "agent_hello_world", arguments=arguments, session=str(alice_session.pk), conversation="c-1", user="alice"
    )
    response = alice_client.post(
        "/api/tools/agent_hello_world/invoke/",
        {"arguments": arguments, "sessionId": str(alice_session.pk), "conversationId": "c-1"},
        format="json",
    )
    expected = hello_result("Ada", session_id=str(alice_session.pk), conversation_id="c-1")
    assert result_of(printed) == result_of(response.json()) == expected


def test_list_modes_without_arguments(alice, alice_client):
    printed = invoke_tool("agent_list_modes", user="alice")
    response = alice_client.post("/api/tools/agent_list_modes/invoke/", {}, format="json")
    assert result_of(printed) == result_of(response.json()) == seed_listing()


def test_list_modes_with_arguments_matches_the_endpoint(alice, alice_client):
    arguments = {"filter": "ddr", "includeExamples": True}
    printed = invoke_tool("agent_list_modes", arguments=json.dumps(arguments), user="alice")
    response = alice_client.post("/api/tools/agent_list_modes/invoke/", {"arguments": arguments}, format="json")
    expected = seed_listing("ddr_authoring", include_examples=True)
    assert result_of(printed) == result_of(response.json()) == expected


def test_change_mode_changes_the_users_session_and_records_the_user(alice, alice_session):
    printed = invoke_tool(
        "agent_change_mode",
        arguments='{"mode": "ddr_authoring", "branch": false, "reason": "From the shell."}',
        session=str(alice_session.pk),
        user="alice",
    )
    assert result_of(printed) == change_mode_result("ddr_authoring", branch=False, reason="From the shell.")
    assert AgentSession.objects.get(pk=alice_session.pk).mode_id == DDR_ID
    change = ModeChange.objects.get()
    assert (change.changed_by, change.org) == (alice, alice.membership.organization)


def test_runs_from_the_command_line_argument_list(alice):
    out = StringIO()
    call_command("invoke_tool", "agent_hello_world", "--arguments", '{"name": "Bo"}', "--user", "alice", stdout=out)
    assert result_of(json.loads(out.getvalue())) == hello_result("Bo")


def test_an_unknown_user_is_a_command_error(alice):
    message, printed = invoke_tool_failing("agent_hello_world", arguments='{"name": "Ada"}', user="mallory")
    assert (message, printed) == ("No user is named 'mallory'.", "")


def test_an_inactive_user_runs_nothing_as_over_the_api(alice):
    # Their token is refused over REST; the command ran the tool as them.
    alice.is_active = False
    alice.save(update_fields=["is_active"])
    message, printed = invoke_tool_failing("agent_hello_world", arguments='{"name": "Ada"}', user="alice")
    assert (message, printed) == (
        "User 'alice' is inactive, so nothing is done as them; make them active first.", ""
    )


def test_an_unknown_tool_is_a_command_error(alice):
    message, printed = invoke_tool_failing("agent_time_travel", user="alice")
    assert (message, printed) == ("No tool is registered or declared under the name 'agent_time_travel'.", "")


@pytest.mark.parametrize("which", ["nonexistent", "another-users", "malformed"])
def test_a_session_that_is_not_the_users_is_a_command_error_and_changes_nothing(alice, bob_session, which):
    session = {"nonexistent": str(uuid.uuid4()), "another-users": str(bob_session.pk), "malformed": "abc"}[which]
    message, printed = invoke_tool_failing(
        "agent_change_mode",
        arguments='{"mode": "ddr_authoring", "branch": true, "reason": "x"}',
        session=session,
        user="alice",
    )
    assert (message, printed) == (
        "sessionId: 'abc' is not a session id; session ids are UUIDs."
        if which == "malformed"
        else f"No session {session} was found for you.",
        "",
    )
    assert AgentSession.objects.get(pk=bob_session.pk).mode_id == GENERAL_ID
    assert ModeChange.objects.count() == 0
    assert AgentSession.objects.count() == 1


def test_another_users_session_reads_exactly_like_a_nonexistent_one(alice, bob_session):
    args = dict(arguments='{"name": "Ada"}', session=str(bob_session.pk), user="alice")
    for_bobs = invoke_tool_failing("agent_hello_world", **args)
    bob_session.delete()
    assert invoke_tool_failing("agent_hello_world", **args) == for_bobs


def test_a_tool_not_enabled_by_the_sessions_mode_is_a_command_error(alice, new_mode):
    from sessions_app.services import create_session

    new_mode("quiet", when_to_use="Use this mode for tests.", associated_tool_ids=[])
    session = create_session(release=published_release(), owner=alice, org=None, mode_key="quiet")
    message, printed = invoke_tool_failing(
        "agent_hello_world", arguments='{"name": "Ada"}', session=str(session.pk), user="alice"
    )
    assert (message, printed) == ("Mode 'quiet' of this session does not enable the tool 'agent_hello_world'.", "")


def test_a_failed_tool_prints_the_envelope_then_raises_a_command_error(alice):
    message, printed = invoke_tool_failing("agent_hello_world", arguments='{"name": ""}', user="alice")
    assert message == "HelloWorldTool requires a non-empty 'name' string."
    assert json.loads(printed) == tool_error(message)


def test_arguments_that_are_not_a_json_object_are_a_command_error(alice):
    message, printed = invoke_tool_failing("agent_hello_world", arguments="[1, 2]", user="alice")
    assert (message, printed) == ("arguments: Must be a JSON object, or a string holding a JSON object.", "")


def test_user_is_required(alice):
    with pytest.raises(CommandError, match=r"^Error: the following arguments are required: --user$"):
        call_command("invoke_tool", "agent_hello_world", stdout=StringIO())
