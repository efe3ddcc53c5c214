"""Hostile files an attacker's review found: each a clear problem or a quick answer, never a 500 or a stuck worker."""

import time

import pytest

from modes.coding_agents.base import AgentFile
from modes.coding_agents.javascript_regex import javascript_regex_problem
from modes.coding_agents.markdown import body_text, read_markdown
from modes.coding_agents.opencode import action, read_opencode
from modes.coding_agents.roo import read_roo


def test_a_regex_nested_past_the_stack_is_a_problem_not_a_crash():
    assert javascript_regex_problem("(" * 3000) == "Groups nested too deeply to be checked"


@pytest.mark.parametrize("text", ['{"customModes": ' + "1" * 5000 + "}", "customModes: " + "1" * 5000])
def test_a_number_of_thousands_of_digits_is_a_problem(text):
    reading = read_roo([AgentFile(".roomodes", text)], format_name="roo")
    assert reading.problems == [".roomodes: The file holds a number too long to read; a mode file has none."]


def test_stars_in_an_opencode_permission_key_take_no_time():
    started = time.perf_counter()
    assert action("webfetch", {"*" * 60 + "z": "deny"}) == "allow"
    assert action("webfetch", {"web*": "deny", "[x]": "allow"}) == "deny"
    assert time.perf_counter() - started < 1


def test_a_body_of_many_blank_looking_lines_is_trimmed_in_linear_time():
    body = "x" + " \n" * 200_000 + "x\n \n\t\n"
    started = time.perf_counter()
    assert body_text("\n \n" + body) == "x" + " \n" * 200_000 + "x"
    assert time.perf_counter() - started < 2


def test_a_kept_display_name_with_a_unicode_line_break_reads_back():
    from modes.coding_agents.opencode import write_opencode
    from modes.models import AgentMode

    mode = AgentMode(key="odd", display_name="Odd\u2028Name", when_to_use="Use it for odd things.")
    [file] = write_opencode([mode], format_name="opencode").files
    assert read_markdown(file.content).kept["display_name"] == "Odd\u2028Name"
    reading = read_opencode([file], format_name="opencode")
    assert reading.problems == [] and reading.modes[0][1]["display_name"] == "Odd\u2028Name"
