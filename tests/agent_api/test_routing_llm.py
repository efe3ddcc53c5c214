"""
The llm routing scorer, through manage.py eval_routing and the openai SDK, against a local Chat Completions server
that answers with recorded completions: a proposal, small talk, a switch made without asking (TUL-007 §4.3), a reply
naming two modes, a timeout, a 429, and a refused key.
"""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from modes.catalog import published_catalog
from modes.models import RoutingCase, RoutingEvaluation

pytestmark = pytest.mark.django_db

KEY = "sk-recorded"


def text_reply(content):
    return {"role": "assistant", "content": content}


def change_mode_call(mode):
    call = {"id": "call_1", "type": "function",
            "function": {"name": "agent_change_mode", "arguments": json.dumps({"mode": mode, "reason": "asked"})}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


# The recorded completions, by the user's message; any other message gets small talk.
RECORDED = {
    "Is anyone there?": None,  # no choice at all, as after a content filter
    "Help me write a DDR about caching.": text_reply(
        "That is what **DDR Authoring** mode is for. Would you like to switch to it?"
    ),
    "Thanks, that is all.": text_reply("You're welcome!"),
    "Build an onboarding workflow.": change_mode_call("workflow_authoring"),
    "Compare a DDR and a workflow.": text_reply("Either ddr_authoring or Workflow Authoring could help."),
}
SLOW, BUSY = "Take your time.", "Are you there?"
# Answers that are no chat completion, by the user's message: (content type, body).
MALFORMED = {
    "Reply in plain text.": ("text/plain", b"hello"),
    "Reply in broken JSON.": ("application/json", b"{not json"),
    "Reply with other JSON.": ("application/json", b'{"foo": 1}'),
    "Reply with a string of choices.": ("application/json", b'{"choices": "abc"}'),
    "Reply with no message.": ("application/json", b'{"choices": [{"message": null}]}'),
    "Reply with a number.": ("application/json", b'{"choices": [{"message": {"role": "assistant", "content": 7}}]}'),
    "Reply with a bare tool call.": (
        "application/json", b'{"choices": [{"message": {"role": "assistant", "tool_calls": [{"function": null}]}}]}',
    ),
}


class CompletionsServer(BaseHTTPRequestHandler):
    requests = []  # each request's JSON body, in order

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(body)
        utterance = body["messages"][-1]["content"]
        if self.headers["Authorization"] != f"Bearer {KEY}":
            return self.answer(401, {"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error"}})
        if utterance == BUSY:
            return self.answer(429, {"error": {"message": "Rate limit reached.", "type": "requests"}})
        if utterance == SLOW:
            time.sleep(1.0)
        if utterance in MALFORMED:
            return self.answer(200, *MALFORMED[utterance])
        message = RECORDED.get(utterance, text_reply("Sure, happy to help with that."))
        choices = [{"index": 0, "message": message, "finish_reason": "stop"}] if message else []
        self.answer(200, {
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"], "choices": choices,
        })

    def answer(self, status, body, content_type="application/json"):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except BrokenPipeError:  # the client gave up waiting (the timeout case)
            pass

    def log_message(self, *args):
        pass


@pytest.fixture
def completions(settings):
    CompletionsServer.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), CompletionsServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    settings.ROUTING_EVAL_BASE_URL = f"http://127.0.0.1:{server.server_port}/v1"
    settings.ROUTING_EVAL_MODEL = "recorded-model"
    settings.ROUTING_EVAL_API_KEY = KEY
    settings.ROUTING_EVAL_TIMEOUT = 0.5
    yield CompletionsServer.requests
    server.shutdown()
    server.server_close()


@pytest.fixture
def cases():
    RoutingCase.objects.bulk_create([
        RoutingCase(utterance="Help me write a DDR about caching.", expected="ddr_authoring"),
        RoutingCase(utterance="Thanks, that is all.", current_mode="workflow_authoring", expected="stay"),
        RoutingCase(utterance="Build an onboarding workflow.", expected="workflow_authoring"),
        RoutingCase(utterance="Compare a DDR and a workflow.", expected="stay"),
        RoutingCase(utterance=SLOW, expected="stay"),
        RoutingCase(utterance=BUSY, expected="stay"),
        RoutingCase(utterance="Is anyone there?", expected="stay"),
    ])


def evaluate(*arguments):
    out = StringIO()
    call_command("eval_routing", "--scorer", "llm", *arguments, stdout=out, stderr=StringIO())
    return out.getvalue(), RoutingEvaluation.objects.get()


def failure_of(evaluation, utterance):
    return next(failure for failure in evaluation.result["failures"] if failure["utterance"] == utterance)


def test_each_case_is_sent_as_an_agent_sends_a_sessions_first_message(completions, cases, alice_client):
    evaluate()
    sent = next(body for body in completions if body["messages"][-1]["content"] == "Thanks, that is all.")
    context = published_context_of("workflow_authoring", alice_client)
    assert sent["model"] == "recorded-model"
    assert sent["messages"] == [
        {"role": "system", "content": "\n\n".join(filter(None, (context["modeInstructions"], context["systemPrompt"])))},
        {"role": "user", "content": "Thanks, that is all."},
    ]
    assert sent["tools"] == context["tools"]


def published_context_of(mode_key, client):
    """A session's context in mode_key, openai-chat format, as an agent back-end fetches it."""
    session = client.post("/api/sessions/", {"mode": mode_key}, format="json").json()
    return client.get(f"/api/sessions/{session['id']}/context/?toolFormat=openai-chat").json()


def test_replies_are_judged_by_the_modes_they_name_and_a_switch_without_asking_is_a_violation(completions, cases):
    table, evaluation = evaluate()
    result = evaluation.result
    failing = {failure["utterance"] for failure in result["failures"]}
    assert "Help me write a DDR about caching." not in failing  # named by display name: proposed
    assert "Thanks, that is all." not in failing  # names no mode: stay
    assert result["violations"] == [{
        "utterance": "Build an onboarding workflow.", "current_mode": "general", "expected": "workflow_authoring",
        "predicted": "workflow_authoring", "called": "workflow_authoring",
    }]
    assert "Build an onboarding workflow." in failing  # the right mode, but switched into unasked
    assert failure_of(evaluation, "Compare a DDR and a workflow.")["error"] == (
        "The reply names several modes: ddr_authoring, workflow_authoring."
    )
    assert "Violations of TUL-007 §4.3 (1):" in table
    assert "called agent_change_mode with 'workflow_authoring'" in table


def test_a_timeout_and_a_429_are_reported_per_case_and_the_run_goes_on(completions, cases):
    _, evaluation = evaluate()
    assert failure_of(evaluation, SLOW)["error"] == "No answer within ROUTING_EVAL_TIMEOUT (0.5 s)."
    assert failure_of(evaluation, BUSY)["error"] == "Rate limited (429): the endpoint asks for fewer requests."
    assert failure_of(evaluation, "Is anyone there?")["error"] == "The endpoint answered no choice."
    assert evaluation.result["errors"] == 4  # and the reply naming two modes
    # Every case was asked, once: none is retried behind the operator's back.
    scored = evaluation.result["cases"]
    assert len(completions) == scored and scored > len(RoutingCase.objects.all())


def test_an_answer_that_is_no_chat_completion_fails_its_case_saying_so_and_the_run_goes_on(completions):
    RoutingCase.objects.bulk_create([RoutingCase(utterance=utterance, expected="stay") for utterance in MALFORMED])
    table, evaluation = evaluate()
    for utterance in MALFORMED:
        assert failure_of(evaluation, utterance)["error"] == (
            "The endpoint answered something other than a chat completion."
        ), utterance
    assert evaluation.result["errors"] == len(MALFORMED)
    assert "Revision 1, llm scorer:" in table


def test_an_agent_change_mode_call_whose_arguments_are_not_json_text_is_a_violation_naming_no_mode(completions):
    RECORDED["Switch, oddly."] = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "agent_change_mode", "arguments": None}}
    ]}
    RoutingCase.objects.create(utterance="Switch, oddly.", expected="stay")
    try:
        _, evaluation = evaluate()
    finally:
        del RECORDED["Switch, oddly."]
    assert [violation["called"] for violation in evaluation.result["violations"]] == ["(no mode)"]


def test_a_refused_key_fails_every_case_saying_so(completions, cases, settings):
    settings.ROUTING_EVAL_API_KEY = "sk-wrong"
    _, evaluation = evaluate()
    assert evaluation.result["passed"] == 0
    assert {failure["error"] for failure in evaluation.result["failures"]} == {
        "The endpoint refused ROUTING_EVAL_API_KEY (401)."
    }


def test_without_an_endpoint_the_command_says_what_to_set_in_one_line(settings, cases):
    settings.ROUTING_EVAL_BASE_URL = None
    settings.ROUTING_EVAL_MODEL = None
    with pytest.raises(CommandError) as refused:
        call_command("eval_routing", "--scorer", "llm")
    assert str(refused.value) == (
        "The llm scorer needs ROUTING_EVAL_BASE_URL and ROUTING_EVAL_MODEL: the endpoint and model to ask."
    )
    assert not RoutingEvaluation.objects.exists()
    assert published_catalog().revision  # the catalog is untouched


@pytest.mark.parametrize(
    "url, timeout, refusal",
    [
        ("http://[::1", 30, "ROUTING_EVAL_BASE_URL must be an http:// or https:// URL, such as https://api.openai.com/v1."),
        ("http://localhost:port/v1", 30, "ROUTING_EVAL_BASE_URL must be an http:// or https:// URL"),
        ("ftp://example.com/v1", 30, "ROUTING_EVAL_BASE_URL must be an http:// or https:// URL"),
        ("api.openai.com/v1", 30, "ROUTING_EVAL_BASE_URL must be an http:// or https:// URL"),
        # A host with an empty or overlong label: the socket's lookup raised UnicodeError, a traceback at the first case.
        ("https://api..example.com/v1", 30, "ROUTING_EVAL_BASE_URL must be an http:// or https:// URL"),
        (f"https://{'a' * 64}.example.com/v1", 30, "ROUTING_EVAL_BASE_URL must be an http:// or https:// URL"),
        # A control character: httpx's InvalidURL as the client was built.
        ("https://api.example.com/v1\x7f", 30, "ROUTING_EVAL_BASE_URL must be an http:// or https:// URL"),
        ("https://api.example.com/v1", 0.0, "ROUTING_EVAL_TIMEOUT must be more than 0 and at most 3,600 seconds; it is 0."),
        ("https://api.example.com/v1", float("inf"), "ROUTING_EVAL_TIMEOUT must be more than 0 and at most 3,600 seconds"),
    ],
)
def test_an_endpoint_that_cannot_be_called_is_refused_in_one_line_before_any_case_is_sent(
    settings, cases, url, timeout, refusal
):
    settings.ROUTING_EVAL_BASE_URL, settings.ROUTING_EVAL_MODEL, settings.ROUTING_EVAL_TIMEOUT = url, "m", timeout
    settings.ROUTING_EVAL_API_KEY = KEY
    with pytest.raises(CommandError) as refused:
        call_command("eval_routing", "--scorer", "llm", stdout=StringIO(), stderr=StringIO())
    assert str(refused.value).startswith(refusal)
    assert KEY not in str(refused.value)
    assert not RoutingEvaluation.objects.exists()


def test_a_longer_name_is_read_before_a_shorter_one_inside_it(db):
    from agent_api.routing_llm import proposed_modes
    from modes.catalog import Catalog
    from modes.models import AgentMode

    catalog = Catalog(1, (
        AgentMode(key="general", display_name="General", is_default=True, when_to_use="Anything."),
        AgentMode(key="ddr", display_name="DDR", when_to_use="Short DDR questions."),
        AgentMode(key="ddr_authoring", display_name="DDR Authoring", when_to_use="Writing DDRs."),
    ))
    assert proposed_modes(catalog, "Switch to DDR Authoring?", current="general") == ["ddr_authoring"]
    assert proposed_modes(catalog, "Ask DDR, or ddr_authoring?", current="general") == ["ddr", "ddr_authoring"]
    assert proposed_modes(catalog, "In general, fine.", current="general") == []
