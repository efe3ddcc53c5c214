"""
Property-based tests (Hypothesis) for the code that reads untrusted input: tool arguments, the catalog's
format validators and the portable mode file reader.

Each property holds for every input Hypothesis can think of, so these tests fail only on a real bug.
"""

import json
import string

import pytest
import yaml
from django.core.cache import cache
from django.core.exceptions import ValidationError
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from agent_tools.contract import AgentToolExecutionContext, ToolArgumentError, load_arguments
from agent_tools.registry import registry
from aptix_site.text import unstorable_text
from modes.catalog import published_catalog
from modes.portable import PORTABLE_FIELDS, PortableFileError, read_document
from modes.validators import validate_mode_id, validate_mode_key, validate_string_list
from sessions_app.models import AgentSession, ModeChange

# Modest budgets: the whole suite stays fast. The database-backed properties get fewer examples.
PURE = settings(max_examples=150, deadline=None)
WITH_DATABASE = settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)

# Any text, lone surrogates and NUL included.
ANY_CHARACTER = st.characters(exclude_categories=())
ANY_TEXT = st.text(ANY_CHARACTER, max_size=40)
JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | ANY_TEXT
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(ANY_TEXT, children, max_size=4),
    max_leaves=12,
)


def arguments_texts(keys=()):
    """Text a caller could send as arguments: JSON of any value (often an object using the tool's own keys),
    JSON with lone surrogates written as escapes, or text that is no JSON at all."""
    own = st.fixed_dictionaries({}, optional={key: JSON_VALUES | ANY_TEXT for key in keys}) if keys else JSON_VALUES
    objects = st.one_of(own, st.dictionaries(ANY_TEXT, JSON_VALUES, max_size=4), JSON_VALUES)
    return st.one_of(
        objects.map(json.dumps),
        objects.map(lambda value: json.dumps(value, ensure_ascii=False)),
        st.none(),
        ANY_TEXT,
        st.integers(0, 3000).map(lambda depth: "[" * depth + "]" * depth),
    )


# --- agent_tools.contract.load_arguments ------------------------------------------------------------------


@PURE
@given(text=arguments_texts(), empty_message=st.none() | st.just("Give me arguments."))
def test_load_arguments_returns_a_storable_object_or_raises_a_tool_argument_error_with_a_message(text, empty_message):
    try:
        arguments = load_arguments(text, empty_message=empty_message, label="Tool")
    except ToolArgumentError as error:
        assert str(error).strip()
        if text is None or not text.strip():
            assert str(error) == empty_message
        return
    assert isinstance(arguments, dict)
    assert unstorable_text(arguments) is None
    if text is None or not text.strip():
        assert arguments == {} and empty_message is None
    else:
        assert arguments == json.loads(text)


@PURE
@given(value=st.dictionaries(st.text(max_size=10), JSON_VALUES, max_size=5))
def test_load_arguments_reads_back_any_storable_object_exactly(value):
    assume(unstorable_text(value) is None)
    assert load_arguments(json.dumps(value), empty_message=None, label="Tool") == value
    assert load_arguments(json.dumps(value, ensure_ascii=False), empty_message="x", label="Tool") == value


@PURE
@given(value=JSON_VALUES.filter(lambda value: not isinstance(value, dict)))
def test_load_arguments_refuses_json_that_is_not_an_object_with_the_same_message(value):
    with pytest.raises(ToolArgumentError, match=r"^Tool arguments must be a JSON object\.$"):
        load_arguments(json.dumps(value), empty_message=None, label="Tool")


# --- The three tools' execute() ---------------------------------------------------------------------------


def _context(user, session_id):
    return AgentToolExecutionContext(
        user=user, session_id=session_id, conversation_id="conversation", load_catalog=published_catalog
    )


def _database_state():
    return list(AgentSession.objects.order_by("pk").values_list("pk", "mode_id")), ModeChange.objects.count()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "tool_name, keys",
    [
        ("agent_hello_world", ("name",)),
        ("agent_list_modes", ("includeExamples", "filter")),
        ("agent_change_mode", ("mode", "branch", "reason")),
    ],
)
def test_a_tool_never_raises_and_a_refusal_says_why_and_changes_nothing(alice, alice_session, tool_name, keys):
    tool = registry.get(tool_name)

    @WITH_DATABASE
    @given(text=arguments_texts(keys), with_session=st.booleans())
    def run(text, with_session):
        before = _database_state()
        result = tool.execute(text, _context(alice, str(alice_session.pk) if with_session else None))
        assert not result.server_fault, result.error_message
        if result.successful:
            assert result.error_message is None
            assert isinstance(json.loads(result.result), dict)
        else:
            assert result.result is None
            assert isinstance(result.error_message, str) and result.error_message.strip()
            assert _database_state() == before

    run()


@pytest.mark.django_db
def test_change_mode_with_valid_arguments_always_lands_in_the_requested_mode(alice, alice_session):
    tool = registry.get("agent_change_mode")

    @WITH_DATABASE
    @given(
        mode=st.sampled_from(["general", "ddr_authoring", "workflow_authoring"]),
        branch=st.booleans(),
        reason=st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=1000).filter(
            str.strip
        ),
    )
    def run(mode, branch, reason):
        cache.clear()  # each branch spends the session-create limit (30/min); the limit is not this property
        changes = ModeChange.objects.count()
        arguments = json.dumps({"mode": mode, "branch": branch, "reason": reason})
        result = tool.execute(arguments, _context(alice, str(alice_session.pk)))
        assert result.successful, result.error_message
        alice_session.refresh_from_db()
        assert alice_session.mode.key == mode
        change = ModeChange.objects.latest("id")
        assert ModeChange.objects.count() == changes + 1
        assert (change.reason, change.branch, change.to_mode.key) == (reason, branch, mode)

    run()


# --- modes.validators -------------------------------------------------------------------------------------

HEX_UPPER = "0123456789ABCDEF"
KEY_CHARACTERS = string.ascii_lowercase + string.digits + "_"


def accepts(validator, value):
    try:
        validator(value)
    except ValidationError:
        return False
    return True


def near_mode_ids():
    """Strings around the id language: right length or not, upper or lower case, odd digits, trailing newline."""
    valid = st.text(st.sampled_from(HEX_UPPER), min_size=32, max_size=32)
    return st.one_of(
        valid,
        valid.map(lambda value: value + "\n"),
        valid.map(str.lower),
        st.text(st.sampled_from(HEX_UPPER + "abcdefG\n -٣０"), min_size=30, max_size=34),
        ANY_TEXT,
    )


def near_mode_keys():
    return st.one_of(
        st.text(st.sampled_from(KEY_CHARACTERS), min_size=1, max_size=30),
        st.text(st.sampled_from(KEY_CHARACTERS), min_size=1, max_size=30).map(lambda value: value + "\n"),
        st.text(st.sampled_from(KEY_CHARACTERS + "A-. \n\tǅß٣é"), max_size=30),
        ANY_TEXT,
    )


@PURE
@given(value=near_mode_ids())
def test_validate_mode_id_accepts_exactly_32_upper_case_hexadecimal_characters(value):
    expected = len(value) == 32 and all(character in HEX_UPPER for character in value)
    assert accepts(validate_mode_id, value) is expected


@PURE
@given(value=near_mode_keys())
def test_validate_mode_key_accepts_exactly_non_empty_snake_case(value):
    expected = len(value) > 0 and all(character in KEY_CHARACTERS for character in value)
    assert accepts(validate_mode_key, value) is expected


LIST_ITEMS = st.one_of(
    st.text(st.characters(exclude_categories=("Cs",)), max_size=20),
    st.sampled_from(["", " ", "\t", "a\nb", "a\rb", "a\u2028b", "a\x85", "\x00", "ok\x00", "fine", "\u3000", "emoji 🙂"]),
)
# Every character Python (and a reader of the system prompt) takes for the end of a line.
LINE_BREAKS = set("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")


@PURE
@given(value=st.one_of(st.lists(LIST_ITEMS, max_size=5), st.lists(JSON_VALUES, max_size=3), JSON_VALUES))
def test_validate_string_list_accepts_exactly_lists_of_non_blank_single_line_strings_without_nul(value):
    expected = isinstance(value, list) and all(
        isinstance(item, str)
        and item.strip() != ""
        and "\x00" not in item
        and not LINE_BREAKS & set(item)
        for item in value
    )
    assert accepts(validate_string_list, value) is expected


# --- modes.portable.read_document -------------------------------------------------------------------------

FIELD_NAMES = st.sampled_from([*PORTABLE_FIELDS, "source", "created_at", "unknown"])
YAML_SCALARS = st.one_of(JSON_SCALARS, st.dates(), st.binary(max_size=8))
YAML_VALUES = st.recursive(
    YAML_SCALARS,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=10,
)
MODE_ENTRIES = st.one_of(st.dictionaries(FIELD_NAMES, YAML_VALUES, max_size=8), YAML_VALUES)
DOCUMENTS = st.one_of(
    st.fixed_dictionaries(
        {"modes": st.lists(MODE_ENTRIES, max_size=3)},
        optional={"format": YAML_VALUES | st.just("aptix-modes"), "version": YAML_VALUES | st.just(1), "extra": YAML_VALUES},
    ),
    YAML_VALUES,
)


def _yaml(document):
    try:
        return yaml.safe_dump(document, allow_unicode=True)
    except yaml.YAMLError:  # a lone surrogate cannot be written
        return yaml.safe_dump(document, allow_unicode=False)


def file_texts():
    return st.one_of(
        DOCUMENTS.map(_yaml),
        DOCUMENTS.map(lambda document: json.dumps(document, default=str)),
        ANY_TEXT,
        st.text(st.sampled_from("[]{}:,-!&*?|>'\"#%@`\n modes"), max_size=60),
        st.integers(0, 60).map(lambda depth: "modes: " + "[" * depth + "]" * depth),
    )


@PURE
@given(text=file_texts())
def test_read_document_returns_checked_entries_or_raises_only_portable_file_error(text):
    try:
        mode_file = read_document(text)
    except PortableFileError as error:
        assert error.problems and all(isinstance(problem, str) and problem for problem in error.problems)
        return
    assert all(isinstance(problem, str) and problem for problem in mode_file.problems)
    for entry in mode_file.entries:
        assert entry.fields is not None or entry.problems
        assert set(entry.fields or {}) <= set(PORTABLE_FIELDS)
        assert not set(entry.fields or {}) & entry.rejected


@pytest.mark.parametrize(
    "text",
    [
        "[" * 1500 + "]" * 1500,
        "{" * 1500,
        "modes: " + "[" * 1500 + "]" * 1500,
        '{"modes": [{"mode_instructions": ' + "[" * 1500 + "]" * 1500 + "}]}",
        "modes:\n" + "- " * 1500 + "x",
    ],
    ids=["json-arrays", "unclosed-braces", "yaml-flow", "json-in-a-field", "yaml-block"],
)
def test_read_document_refuses_deeply_nested_files_with_portable_file_error(text):
    # Found by the property above: the YAML parser recurses once per level and runs out of stack.
    with pytest.raises(PortableFileError) as refused:
        read_document(text)
    assert refused.value.problems == ["The file is nested too deeply to be a mode file."]


@st.composite
def mode_graphs(draw):
    """Up to 8 modes, the first the default, each with switch targets among the keys (or none: any) and llm_can_enter."""
    from modes.models import AgentMode

    keys = [f"m{index}" for index in range(draw(st.integers(1, 8)))]
    return [
        AgentMode(
            id=f"{index:032X}", key=key, is_default=index == 0, llm_can_enter=draw(st.booleans()),
            switch_targets=draw(st.lists(st.sampled_from(keys), max_size=3, unique=True)),
        )
        for index, key in enumerate(keys)
    ]


@PURE
@given(mode_graphs())
def test_stuck_modes_are_those_no_chain_of_allowed_switches_leads_from_to_the_default(modes):
    # What stuck_modes computes in one pass over each target's sources, by its definition: a fixed point of may_switch.
    from modes.graph import may_switch, stuck_modes

    reached, grew = {modes[0].pk}, True
    while grew:
        grew = False
        for mode in modes:
            if mode.pk not in reached and any(may_switch(mode, target) for target in modes if target.pk in reached):
                reached.add(mode.pk)
                grew = True
    assert stuck_modes(modes, modes[0]) == [mode for mode in modes if mode.pk not in reached]
