"""Text helpers shared by the apps: compact JSON, and spotting text from outside that the database or a
UTF-8 encoder would refuse later (with a 500 instead of a 400)."""

import json


def compact_json(payload) -> str:
    """JSON text as the API renders it: no spaces, Unicode kept as it is."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))



def unstorable_text(value) -> str | None:
    """What is wrong with the first unstorable string in value (dict keys and nested values too), or None."""
    if isinstance(value, str):
        if "\x00" in value:
            return "NUL characters"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "invalid Unicode (a lone surrogate)"
        return None
    if isinstance(value, dict):
        items = [*value.keys(), *value.values()]
    elif isinstance(value, list):
        items = value
    else:
        return None
    for item in items:
        problem = unstorable_text(item)
        if problem:
            return problem
    return None
