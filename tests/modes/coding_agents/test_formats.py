"""The formats by name: each export's report is checked against what an import of its files gives back."""

import pytest

from modes.coding_agents.base import APPROXIMATED, CARRIED
from modes.coding_agents.formats import FORMATS
from modes.models import AgentMode


def prompt_fate(prompt: str, format_name: str):
    mode = AgentMode(key="odd", display_name="Odd", when_to_use="Use it.", prompt=prompt)
    [line] = [line for line in FORMATS[format_name].write([mode]).report if line.field == "prompt"]
    return line.fate, line.how


@pytest.mark.parametrize("format_name", ["kilo", "opencode", "claude-code"])
@pytest.mark.parametrize("prompt, changed_at", [
    ("Line one\r\nLine two", 9),  # a body's line ends are read as '\n'
    ("Plan first.\n\n<!-- aptix-modes: custom_instructions -->\nNot instructions.", 12),  # read as a marker
])
def test_a_prompt_an_agent_file_cannot_give_back_is_reported_approximated_where_it_changes(format_name, prompt,
                                                                                           changed_at):
    fate, how = prompt_fate(prompt, format_name)
    assert fate == APPROXIMATED
    assert how.endswith(f"an import of the file gives it back changed, from its character {changed_at} on")


@pytest.mark.parametrize("format_name", list(FORMATS))
def test_a_prompt_given_back_unchanged_is_reported_carried(format_name):
    assert prompt_fate("Plan first.\n\n- one\n  - two", format_name)[0] == CARRIED


@pytest.mark.parametrize("format_name", ["kilo", "opencode", "claude-code"])
def test_a_mode_with_no_tool_group_exported_and_imported_again_has_no_group(format_name):
    # Written without a restriction, the agent had every tool and an import gave the mode all six groups.
    mode = AgentMode(key="chat", display_name="Chat", when_to_use="Use it to talk.", prompt="Talk.")
    writing = FORMATS[format_name].write([mode])
    [(_, entry)] = FORMATS[format_name].read(writing.files).modes
    assert entry["tool_group_hints"] == []
    [line] = [line for line in writing.report if line.field == "tool_group_hints"]
    assert line.fate == CARRIED
