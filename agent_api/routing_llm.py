"""
The llm scorer of routing evaluations (modes.routing): each case sent to an OpenAI-compatible Chat Completions
endpoint through the openai SDK, as an agent back-end sends a session's first message: the context of a session in the
case's current mode (llm_context, in openai-chat format; the system message as docs/rest.md composes it) and the
utterance as the user's message. The reply proposes mode X when it names X (its key or display name) and no other mode
but the current one; naming none is stay. Calling agent_change_mode in a one-message case is a switch that no user has
confirmed (TUL-007 §4.3): reported apart, and the case fails. A failed call is reported per case, and the run goes on.
"""

import json
import re
from urllib.parse import urlsplit

import openai
from django.conf import settings

from aptix_site.service_errors import InvalidInput
from modes.catalog import Catalog
from modes.models import ROUTING_STAY
from modes.routing.cases import Case
from modes.routing.evaluation import Outcome

from .services import llm_context

CHANGE_MODE = "agent_change_mode"


class LlmScorerNotConfigured(InvalidInput):
    """ROUTING_EVAL_BASE_URL or ROUTING_EVAL_MODEL is not set."""


class LlmScorer:
    name = "llm"

    def __init__(self):
        missing = [name for name in ("ROUTING_EVAL_BASE_URL", "ROUTING_EVAL_MODEL") if not getattr(settings, name)]
        if missing:
            raise LlmScorerNotConfigured(f"The llm scorer needs {' and '.join(missing)}: the endpoint and model to ask.")
        if problem := configuration_problem(settings.ROUTING_EVAL_BASE_URL, settings.ROUTING_EVAL_TIMEOUT):
            raise LlmScorerNotConfigured(problem)
        self.model = settings.ROUTING_EVAL_MODEL
        self.client = openai.OpenAI(
            base_url=settings.ROUTING_EVAL_BASE_URL, api_key=settings.ROUTING_EVAL_API_KEY or "none",
            timeout=settings.ROUTING_EVAL_TIMEOUT, max_retries=0,  # a case that fails is reported; no hidden waits
        )

    def outcomes(self, catalog: Catalog, cases: list[Case]):
        for case in cases:
            yield self.outcome(catalog, case)

    def outcome(self, catalog: Catalog, case: Case) -> Outcome:
        context = llm_context(catalog=catalog, mode_id=catalog.mode(case.current_mode).pk, tool_format="openai-chat")
        system = "\n\n".join(text for text in (context["modeInstructions"], context["systemPrompt"]) if text)
        try:
            reply = self.client.chat.completions.create(
                model=self.model, tools=context["tools"],
                messages=[{"role": "system", "content": system}, {"role": "user", "content": case.utterance}],
            )
        except openai.APIError as error:
            return Outcome(None, error=failure(error))
        except json.JSONDecodeError:  # a JSON content type, and a body that is not JSON
            return Outcome(None, error=NOT_A_COMPLETION)
        if getattr(reply, "choices", None) == []:  # a content filter, say
            return Outcome(None, error="The endpoint answered no choice.")
        if (message := first_message(reply)) is None:
            return Outcome(None, error=NOT_A_COMPLETION)
        content, calls = message
        for name, arguments in calls:
            if name == CHANGE_MODE:
                called = called_mode(arguments)
                return Outcome(called if called in catalog.by_key else None, called=called)
        named = proposed_modes(catalog, content, current=case.current_mode)
        if len(named) > 1:
            return Outcome(None, error=f"The reply names several modes: {', '.join(named)}.")
        return Outcome(named[0] if named else ROUTING_STAY)


NOT_A_COMPLETION = "The endpoint answered something other than a chat completion."


def first_message(reply) -> tuple[str, list[tuple[str, object]]] | None:
    """The first choice's text and tool calls [(name, arguments)]; None if reply lacks their shape. The SDK does not
    validate what it reads (an OpenAI-compatible endpoint may leave fields out), so any JSON, or a page of text, comes
    back as the reply."""
    choices = getattr(reply, "choices", None)
    message = getattr(choices[0], "message", None) if isinstance(choices, list) and choices else None
    content, tool_calls = getattr(message, "content", None), getattr(message, "tool_calls", None)
    if message is None or not isinstance(content, str | None) or not isinstance(tool_calls, list | None):
        return None
    functions = [getattr(call, "function", None) for call in tool_calls or ()]
    if not all(isinstance(getattr(function, "name", None), str) for function in functions):
        return None
    return content or "", [(function.name, function.arguments) for function in functions]


MAX_TIMEOUT = 3600  # seconds: more than any model takes to answer (past some 9e9, a socket cannot take the number)


def configuration_problem(base_url: str, timeout: float) -> str | None:
    """Why the llm scorer cannot call base_url with this timeout, in a line, before any case is sent; None if it can.
    The key is never named: it is not shown anywhere."""
    try:
        url = urlsplit(base_url)
        url.port  # noqa: B018  (a port that is not a number raises here)
        (url.hostname or "").encode("idna")  # an empty or overlong label: the socket's lookup raises UnicodeError
    except ValueError:  # UnicodeError is one
        url = None
    if url is None or url.scheme not in ("http", "https") or not url.hostname or not base_url.isprintable():
        return "ROUTING_EVAL_BASE_URL must be an http:// or https:// URL, such as https://api.openai.com/v1."
    if not 0 < timeout <= MAX_TIMEOUT:
        return f"ROUTING_EVAL_TIMEOUT must be more than 0 and at most {MAX_TIMEOUT:,} seconds; it is {timeout:g}."
    return None


def proposed_modes(catalog: Catalog, text: str, *, current: str) -> list[str]:
    """The keys of the modes text names by key or display name (as a whole word, any case), but the current one. The
    longest names are looked for first, and what they match is not read again: "DDR Authoring" is not also "DDR"."""
    names = sorted(((name, mode.key) for mode in catalog.modes for name in {mode.key, mode.display_name}),
                   key=lambda pair: -len(pair[0]))
    named = set()
    for name, key in names:
        text, found = re.subn(rf"(?<!\w){re.escape(name)}(?!\w)", " ", text, flags=re.IGNORECASE)
        if found:
            named.add(key)
    return [mode.key for mode in catalog.modes if mode.key in named and mode.key != current]


def called_mode(arguments) -> str:
    """The mode an agent_change_mode call names, as the model wrote it (its arguments are a JSON text, or not)."""
    try:
        mode = json.loads(arguments).get("mode")
    except (ValueError, TypeError, AttributeError, RecursionError):
        mode = None
    return mode if isinstance(mode, str) else "(no mode)"


def failure(error: openai.APIError) -> str:
    """A failed call, in a line: what an operator needs to act on it."""
    if isinstance(error, openai.APITimeoutError):
        return f"No answer within ROUTING_EVAL_TIMEOUT ({settings.ROUTING_EVAL_TIMEOUT:g} s)."
    if isinstance(error, openai.RateLimitError):
        return "Rate limited (429): the endpoint asks for fewer requests."
    if isinstance(error, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return f"The endpoint refused ROUTING_EVAL_API_KEY ({error.status_code})."
    if isinstance(error, openai.APIStatusError):
        return f"The endpoint answered {error.status_code}."
    return f"No connection to ROUTING_EVAL_BASE_URL: {error.message}"
