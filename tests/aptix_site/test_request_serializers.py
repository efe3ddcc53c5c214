"""
Request serializers (aptix_site.api.RequestSerializer) are plain DRF serializers: each request gets its own values
and its own errors, however many are validated at once, and a subclass's fields leave its base's alone.
"""

from concurrent.futures import ThreadPoolExecutor

from agent_api.serializers import Invocation, SessionContextQuery, ToolFormatQuery


def validated(serializer_class, data):
    serializer = serializer_class(data=data)
    return serializer.validated_data if serializer.is_valid() else serializer.errors


def test_requests_validated_at_once_each_get_their_own_values_and_errors():
    def body(n):
        if n % 3 == 0:
            return {"sessionId": n}
        return {"arguments": {"n": n}, "sessionId": f"session-{n}", "conversationId": f"conversation-{n}"}

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda n: validated(Invocation, body(n)), range(600)))

    for n, result in enumerate(results):
        if n % 3 == 0:
            assert result == {"sessionId": ["Not a valid string."]}, n
        else:
            assert result == {"arguments": {"n": n}, "sessionId": f"session-{n}", "conversationId": f"conversation-{n}"}


def test_a_subclass_has_its_own_fields_and_its_base_keeps_its_own():
    assert validated(SessionContextQuery, {"revision": "2"}) == {"toolFormat": None, "revision": 2}
    assert validated(ToolFormatQuery, {"toolFormat": "mcp"}) == {"toolFormat": "mcp"}
    assert validated(SessionContextQuery, {"toolFormat": "x"}) == {
        "toolFormat": ['"x" is not a tool format; use one of: openai-chat, openai-responses, anthropic, mcp.']
    }
