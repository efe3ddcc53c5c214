"""Text helpers shared by the apps: compact JSON, spotting text from outside that the database or a
UTF-8 encoder would refuse later (with a 500 instead of a 400), JSON objects that give a key twice, what is wrong
with JSON that Python cannot read, and whole numbers written in a URL, a query or a command's argument."""

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
    elif isinstance(value, (dict, list)):
        items = [*value.keys(), *value.values()] if isinstance(value, dict) else value
        for item in items:
            if problem := unstorable_text(item):
                return problem
    return None


class DuplicateKey(ValueError):
    def __init__(self, key):
        self.key = key
        super().__init__(f"the key {key!r} appears twice in one object")


def refuse_duplicate_keys(pairs):
    """json's object_pairs_hook: an object as a dict, unless a key comes twice (json would keep the last)."""
    data = {}
    for key, value in pairs:
        if key in data:
            raise DuplicateKey(key)
        data[key] = value
    return data


# Deeper than any request needs (a tool's parameters nest 40 levels at most: modes.validators), and far below Python's
# recursion limit. json.load itself stops only at that limit, so JSON it took one level short of it overflowed the
# limit again in whatever read it next, deeper in the stack (a serializer's json.dumps): a 500.
MAX_JSON_NESTING = 100


class NestedTooDeeply(ValueError):
    def __init__(self):
        super().__init__(f"nested more than {MAX_JSON_NESTING} levels deep")


def check_nesting(value) -> None:
    """NestedTooDeeply if the lists and objects of value (as json.load gives it) nest past MAX_JSON_NESTING levels."""
    if nested_past(value, limit=MAX_JSON_NESTING):
        raise NestedTooDeeply()


def nested_past(value, *, limit: int) -> bool:
    """Whether the lists and objects of value (as json.load gives it) nest more than limit levels. Level by level,
    without recursion, so that it holds however deep value is."""
    level, depth = [value], 0
    while level := [item for item in level if isinstance(item, (dict, list))]:
        depth += 1
        if depth > limit:
            return True
        level = [child for item in level for child in (item.values() if isinstance(item, dict) else item)]
    return False


def json_problem(error: ValueError | RecursionError, *, subject: str) -> str | None:
    """
    What json.loads (or check_nesting) found wrong with subject ("the body"), in plain words, where Python's own words
    name its internals (nesting past its recursion limit, an integer of thousands of digits:
    sys.set_int_max_str_digits()); None where its own words serve.
    """
    if isinstance(error, (RecursionError, NestedTooDeeply)):
        return f"{subject} is nested too deeply"
    return f"a number in {subject} has too many digits" if "int_max_str_digits" in str(error) else None


def whole_number(text: str, *, at_most: int) -> int | None:
    """The whole number text writes in ASCII digits, from 1 to at_most; else None ('+5', ' 5' and '5.0' are not)."""
    # The length first (leading zeros aside): int() refuses strings of thousands of digits with a ValueError.
    digits = text.lstrip("0")
    number = int(digits) if text.isascii() and text.isdigit() and 0 < len(digits) <= len(str(at_most)) else 0
    return number if 1 <= number <= at_most else None
