"""
Hostile files an attacker's review found: each a clear problem or a quick answer, never a 500 or a stuck worker.
Quick is timed in this process's CPU time, which other work on the machine does not stretch as it stretches the clock.
"""

import time

import pytest

from modes.coding_agents.base import AgentFile
from modes.coding_agents.claude_code import read_claude_code
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
    started = time.process_time()
    assert action("webfetch", {"*" * 60 + "z": "deny"}) == "allow"
    assert action("webfetch", {"web*": "deny", "[x]": "allow"}) == "deny"
    assert time.process_time() - started < 1


def test_a_body_of_many_blank_looking_lines_is_trimmed_in_linear_time():
    body = "x" + " \n" * 200_000 + "x\n \n\t\n"
    started = time.process_time()
    assert body_text("\n \n" + body) == "x" + " \n" * 200_000 + "x"
    assert time.process_time() - started < 2


def test_front_matter_that_is_not_yaml_with_a_long_run_of_spaces_is_read_again_in_linear_time():
    # Claude Code's rewriting reads 'key:', spaces and a value up to the line's end: a value a carriage return cuts
    # short must fail once, not once for each split of the run of spaces between the colon and the value.
    content = f"---\nname: a\ndescription: Use it when: x.\nmodel:{' ' * 100_000}x\ry\n---\nBody\n"
    started = time.process_time()
    read_claude_code([AgentFile(".claude/agents/a.md", content)])
    assert time.process_time() - started < 2


def test_a_kept_display_name_with_a_unicode_line_break_reads_back():
    from modes.coding_agents.opencode import write_opencode
    from modes.models import AgentMode

    mode = AgentMode(key="odd", display_name="Odd\u2028Name", when_to_use="Use it for odd things.")
    [file] = write_opencode([mode], format_name="opencode").files
    assert read_markdown(file.content).kept["display_name"] == "Odd\u2028Name"
    reading = read_opencode([file], format_name="opencode")
    assert reading.problems == [] and reading.modes[0][1]["display_name"] == "Odd\u2028Name"


ROO_MODE = '{"slug": "a", "name": "A", "roleDefinition": "r", "whenToUse": "w", "groups": []'


def roo_problems(text: str) -> list[str]:
    return read_roo([AgentFile(".roomodes", text)], format_name="roo").problems


@pytest.mark.parametrize("escape, unstorable", [("\\ud800", "invalid Unicode (a lone surrogate)"),
                                                ("\\u0000", "NUL characters")])
def test_a_lone_surrogate_or_a_nul_written_as_an_escape_is_a_problem_of_the_file(escape, unstorable):
    for text in ['{"customModes": [' + ROO_MODE + ', "' + escape + '": 1}]}',
                 '{"customModes": [' + ROO_MODE.replace('"A"', '"' + escape + '"') + "}]}"]:
        assert roo_problems(text) == [f".roomodes: The file holds {unstorable}, which no mode can store."]


def test_a_yaml_alias_bomb_through_pairs_is_refused_quickly():
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for level in range(8):  # !!pairs builds tuples: 10^9 values out of a kilobyte
        below, name = chr(97 + level), chr(98 + level)
        lines.append(f"{name}: &{name} !!pairs [" + ", ".join([f"{{k: *{below}}}"] * 10) + "]")
    started = time.process_time()
    assert roo_problems("\n".join(lines)) == [
        ".roomodes: The file expands, through its YAML aliases, to more than 1,000,000 values; a mode file is far smaller."
    ]
    assert time.process_time() - started < 5


def test_json_nested_almost_as_deep_as_the_parser_allows_is_a_problem_not_a_crash():
    for depth in (900, 990, 5000):
        text = '{"customModes": ' + "[" * depth + "]" * depth + "}"
        assert len(roo_problems(text)) == 1


@pytest.mark.parametrize("depth", [900, 5000])
def test_front_matter_nested_past_the_stack_is_a_problem_not_a_crash(depth):
    from modes.coding_agents.claude_code import read_claude_code

    text = f"---\nname: x\ndescription: d\ntools: {'[' * depth}{']' * depth}\n---\nbody\n"
    [problem] = read_claude_code([AgentFile(".claude/agents/x.md", text)]).problems
    assert problem.startswith(".claude/agents/x.md: ")


def test_a_scalar_tagged_binary_is_not_read_as_the_text_of_its_base64():
    text = "customModes:\n- slug: a\n  name: !!binary aGVsbG8=\n  roleDefinition: r\n  whenToUse: w\n  groups: []\n"
    assert roo_problems(text) == [".roomodes: mode 'a': name: must be text."]


def test_a_kept_comment_nested_past_the_stack_is_a_problem_not_a_crash():
    kept = '{"tool_group_hints": ' + "[" * 5000 + "]" * 5000 + "}"
    [problem] = read_opencode(
        [AgentFile(".opencode/agent/a.md", f"---\n# aptix-modes: {kept}\ndescription: d\n---\nbody\n")],
        format_name="opencode",
    ).problems
    assert problem.startswith(".opencode/agent/a.md: The '# aptix-modes:' comment cannot be read: ")


def test_a_kept_group_line_roo_code_would_refuse_grants_nothing_and_exports_nothing_broken():
    from modes.coding_agents.roo import write_roo
    from modes.models import AgentMode

    kept = '{"tool_group_hints": ["edit {\\"fileRegex\\": \\"(\\"}", "read {\\"color\\": \\"red\\"}", "edit"]}'
    reading = read_opencode(
        [AgentFile(".opencode/agent/a.md", f"---\n# aptix-modes: {kept}\ndescription: d\n---\nbody\n")],
        format_name="opencode",
    )
    [(_, entry)] = reading.modes
    assert entry["tool_group_hints"][:1] == ["edit"]  # the bad fileRegex line does not stand for the granted group
    mode = AgentMode(key="a", display_name="A", when_to_use="w", tool_group_hints=["edit [" * 5000, "read"])
    [file] = write_roo([mode], format_name="roo").files  # a line stored by hand, nested past the stack
    assert "- read\n" in file.content


def test_rules_files_of_many_modes_are_matched_to_their_modes_in_linear_time():
    modes = ", ".join(ROO_MODE.replace('"a"', f'"m{index}"') + "}" for index in range(5000))
    files = [AgentFile(".roomodes", '{"customModes": [' + modes + "]}")]
    files += [AgentFile(f".roo/rules-m{index}/rule.md", "Be brief.") for index in range(5000)]
    started = time.process_time()
    reading = read_roo(files, format_name="roo")
    assert reading.problems == [] and len(reading.modes) == 5000
    assert time.process_time() - started < 5


@pytest.mark.parametrize("pattern", [
    "{" * 100_000, "".join(f"(?<a{index}>x)" for index in range(10_000)), "|".join(["(?<a>x)"] * 10_000),
])
def test_regexes_of_many_braces_or_named_groups_are_checked_in_linear_time(pattern):
    started = time.process_time()
    assert javascript_regex_problem(pattern) is None
    assert time.process_time() - started < 2
