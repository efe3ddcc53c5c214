"""Markdown agent files: front matter read safely (and as leniently as the coding agents read it), bodies verbatim."""

import math
import re

import pytest
import yaml

from modes.coding_agents.base import YAML12Loader
from modes.coding_agents.claude_code import claude_code_line
from modes.coding_agents.formats import FORMATS
from modes.coding_agents.markdown import (
    body_text, display_name_of, join_body, read_markdown, split_body, split_front_matter, write_markdown,
)
from modes.coding_agents.opencode import opencode_line
from modes.models import AgentMode
from modes.portable import PortableFileError

PROMPT = """\
# Reviewer 🔍

You review code. Check:

  - naming
  - tests

```python
def f():
    return 1  # indentation kept
```

---

A rule above is Markdown, not front matter."""


def test_the_front_matter_and_the_body_are_split_at_the_two_fence_lines():
    agent = read_markdown(f"---\ndescription: Reviews code\nmode: subagent\n---\n\n{PROMPT}\n")
    assert agent.fields == {"description": "Reviews code", "mode": "subagent"}
    assert agent.body == PROMPT


def test_the_body_keeps_blank_lines_indentation_and_fences_losing_only_the_blank_lines_around_it():
    agent = read_markdown(f"---\ndescription: x\n---\n\n\n  {PROMPT}\n\n\n")
    assert agent.body == f"  {PROMPT}"


def test_windows_line_endings_and_a_byte_order_mark_are_read_as_plain_newlines():
    agent = read_markdown("\ufeff---\r\ndescription: x\r\n---\r\n\r\nLine one.\r\n\r\nLine two.\r\n")
    assert (agent.fields, agent.body) == ({"description": "x"}, "Line one.\n\nLine two.")


def test_a_file_without_front_matter_is_all_body():
    agent = read_markdown("You are a helper.\n")
    assert (agent.fields, agent.body) == (None, "You are a helper.")


def test_an_empty_front_matter_is_an_empty_mapping():
    assert read_markdown("---\n---\nBody\n").fields == {}


def test_a_front_matter_never_closed_is_refused():
    with pytest.raises(PortableFileError, match="never closed"):
        split_front_matter("---\ndescription: x\n\nBody\n")


@pytest.mark.parametrize("front, reason", [
    ("description: !!python/object/apply:os.system ['echo hi']", "not valid YAML"),
    ("description: !!python/object:os.system echo", "not valid YAML"),
    ("description: one\ndescription: two", "given twice"),
    ("- a list\n- not a mapping", "must be a mapping"),
    ("description: [unclosed", "not valid YAML"),
])
def test_front_matter_that_is_not_a_plain_mapping_is_refused(front, reason):
    with pytest.raises(PortableFileError, match=reason):
        read_markdown(f"---\n{front}\n---\nBody\n")


@pytest.mark.parametrize("front, reason", [
    ("description:\tone\ndescription: two", "not valid YAML: The field 'description' is given twice"),
    ("description:\t!!python/object:os.system echo", "not valid YAML: could not determine a constructor"),
])
def test_front_matter_with_a_tab_is_refused_for_what_is_wrong_with_it_not_taken_for_a_syntax_error(front, reason):
    # A tab YAML takes is no syntax error: the refusal names the repeated key or the tag, with no hint of quotes.
    with pytest.raises(PortableFileError, match=re.escape(reason)):
        read_markdown(f"---\n{front}\n---\nBody\n")


REWRITES = [claude_code_line, opencode_line]


def test_front_matter_that_is_not_yaml_is_refused_where_no_agent_rewrites_it():
    with pytest.raises(PortableFileError, match="not valid YAML"):
        read_markdown("---\ndescription: Use it when: x.\n---\nBody\n")


@pytest.mark.parametrize("rewrite", REWRITES)
def test_a_description_holding_colons_is_read_as_text_as_claude_code_and_opencode_read_it(rewrite):
    # How Claude Code's own plugins write their agents: a plain value with ': ' and '\n' in it, not valid YAML.
    text = ('---\nname: reviewer\ndescription: Use this agent after a change. Examples: <example>Context: a user '
            'wrote code\\nuser: "Review it"</example>\nmodel: opus\n---\n\nBody\n')
    agent = read_markdown(text, rewrite=rewrite)
    assert agent.fields["description"].startswith("Use this agent after a change. Examples: <example>Context: a user")
    assert agent.fields["model"] == "opus"
    assert agent.lenient == {"description"}


@pytest.mark.parametrize("rewrite", REWRITES)
@pytest.mark.parametrize("written", ["yes", "off", "2024-01-01", "1:20"])
def test_a_plain_value_yaml_1_2_reads_as_text_is_text_as_claude_code_and_opencode_read_it(written, rewrite):
    # PyYAML reads YAML 1.1, where these are a boolean, a date and a number; the coding agents' YAML 1.2 reads text.
    for colon in ("", " Use it: now."):  # strict YAML, and the lenient reading of a value holding ': '
        front = f"name: {written}\ndescription: {written}\nmodel: opus{colon}"
        agent = read_markdown(f"---\n{front}\n---\nBody\n", rewrite=rewrite)
        assert agent.fields == {"name": written, "description": written, "model": f"opus{colon}"}


@pytest.mark.parametrize(
    "front", ['{\n\t"name": "a",\n\t"description": "Tabs."\n}', '{"name": "a", "description": "Deep.", "x": ' + "[" * 600 + "]" * 600 + "}"]
)
def test_front_matter_written_as_json_that_yaml_cannot_read_is_read_as_json(front):
    # Tab indents, or nesting YAML's composer cannot follow: the JSON reading stands (it has no plain scalars), as it
    # did before front matter was read as YAML 1.2; composing it again as YAML was an uncaught ScannerError.
    assert read_markdown(f"---\n{front}\n---\nBody\n").fields["name"] == "a"


# How YAML 1.2, the agents' YAML, reads plain values that PyYAML's YAML 1.1 reads otherwise (no: False, 0o17: text,
# 1_000: 1000, 1:30: 90), and two it reads alike (~, .inf), which must stay so.
YAML_12_READINGS = [
    ("no", "no"), ("yes", "yes"), ("on", "on"), ("off", "off"), ("~", None), ("0o17", 15), ("1_000", "1_000"),
    ("1:30", "1:30"), (".inf", math.inf),
]


@pytest.mark.parametrize("written, value", YAML_12_READINGS)
def test_a_value_nested_in_mappings_and_lists_is_read_as_the_agents_yaml_1_2_reads_it(written, value):
    front = (f"tools:\n  write: {written}\npermission: {{edit: {written}}}\nskills:\n  - {written}\n"
             f"listed: [{written}]\nhooks:\n  - matcher: [{{x: {written}}}]\n{written}: key")
    fields = read_markdown(f"---\ndescription: Reviews.\n{front}\n---\nBody\n").fields
    assert fields == {"description": "Reviews.", "tools": {"write": value}, "permission": {"edit": value},
                      "skills": [value], "listed": [value], "hooks": [{"matcher": [{"x": value}]}], value: "key"}


@pytest.mark.parametrize("written, value", YAML_12_READINGS)
def test_nested_values_written_back_mean_to_yaml_1_1_and_1_2_readers_what_the_agent_read(written, value):
    # An agent file read and written again (an import, then an export) keeps what its agent read: 'write: no' must
    # not come back as 'write: false', which the agent would read as a boolean.
    agent = read_markdown(f"---\noptions:\n  write: {written}\n  list: [{written}]\n---\nB\n")
    text = write_markdown(agent.fields, agent.body)
    front = split_front_matter(text)[0]
    expected = {"options": {"write": value, "list": [value]}}
    assert yaml.safe_load(front) == yaml.load(front, Loader=YAML12Loader) == read_markdown(text).fields == expected


def test_text_nested_in_mappings_and_lists_is_written_so_that_yaml_1_1_and_1_2_read_it_as_text():
    texts = ["no", "Yes", "on", "OFF", "~", "null", "0o17", "017", "1_000", "1:30", ".inf", "1e3", "+.5", "2024-01-01"]
    fields = {"permission": {text: text for text in texts}, "tools": texts}
    front = split_front_matter(write_markdown(fields, "Body"))[0]
    assert yaml.safe_load(front) == yaml.load(front, Loader=YAML12Loader) == fields


def test_a_plain_value_yaml_1_2_reads_as_a_number_or_a_boolean_stays_one():
    agent = read_markdown("---\ndescription: true\ntemperature: 0.2\nsteps: 12\n---\nBody\n")
    assert agent.fields == {"description": True, "temperature": 0.2, "steps": 12}


def test_a_tag_in_front_matter_that_is_yaml_is_refused_where_the_agents_rewriting_reads_its_line_as_text():
    # Once the YAML fails, both agents rewrite the tag's line too (a value holding '!' or ':'): they read its text.
    for rewrite in REWRITES:
        with pytest.raises(PortableFileError, match="could not determine a constructor"):
            read_markdown("---\ndescription: a\ncolor: !!python/name:os.system\n---\nBody\n", rewrite=rewrite)
        agent = read_markdown("---\ndescription: a: b\ncolor: !!python/name:os.system\n---\nBody\n", rewrite=rewrite)
        assert agent.fields["color"] == "!!python/name:os.system"


def test_the_comment_kept_for_the_catalog_is_read_back():
    text = write_markdown({"description": "x"}, "Body", {"display_name": "📝 Writer"})
    assert read_markdown(text).kept == {"display_name": "📝 Writer"}
    assert read_markdown(text).fields == {"description": "x"}


def test_a_kept_comment_that_is_not_a_json_object_is_refused():
    with pytest.raises(PortableFileError, match="aptix-modes"):
        read_markdown("---\n# aptix-modes: [1, 2]\ndescription: x\n---\nBody\n")


def test_writing_then_reading_gives_the_fields_and_body_back_and_writing_again_the_same_text():
    fields = {
        "name": "docs-writer",
        "description": "Use it when: the docs need work. 'Quotes', \"double\", #hash, yes, 0.1, [brackets]",
        "tools": ["Read", "Edit"],
        "permission": {"*": "deny", "bash": {"git *": "allow"}},
    }
    text = write_markdown(fields, PROMPT, {"display_name": "📝 Docs"})
    agent = read_markdown(text)
    assert (agent.fields, agent.body, agent.kept) == (fields, PROMPT, {"display_name": "📝 Docs"})
    assert write_markdown(agent.fields, agent.body, agent.kept) == text


def test_a_description_over_several_lines_is_written_as_a_block_and_read_back_as_written():
    fields = {"description": "First paragraph.\n\nSecond: with a colon."}
    text = write_markdown(fields, "Body")
    assert "description: |-\n  First paragraph.\n\n  Second: with a colon.\n" in text
    assert read_markdown(text).fields == fields


def test_sections_after_the_prompt_are_split_off_by_their_marker_lines():
    body = join_body(PROMPT, {"mode_instructions": "Line one.\nLine two.", "custom_instructions": "Be brief."})
    assert "\n\n<!-- aptix-modes: mode_instructions -->\nLine one.\nLine two.\n\n" in body
    sections = {"mode_instructions": "Line one.\nLine two.", "custom_instructions": "Be brief."}
    assert split_body(body) == (PROMPT, sections)


def test_a_body_without_markers_is_all_prompt_and_a_marker_out_of_order_stays_text():
    assert split_body(PROMPT) == (PROMPT, {})
    body = "Prompt\n\n<!-- aptix-modes: custom_instructions -->\nA\n\n<!-- aptix-modes: mode_instructions -->\nB"
    assert split_body(body) == ("Prompt", {"custom_instructions": "A\n\n<!-- aptix-modes: mode_instructions -->\nB"})


def test_only_custom_instructions_and_no_prompt():
    body = join_body("", {"mode_instructions": "", "custom_instructions": "Only this."})
    assert split_body(body) == ("", {"custom_instructions": "Only this."})


def test_body_text_strips_only_the_blank_lines_at_either_end():
    assert body_text("\n \n  indented\n\ntext  \n\n \n") == "  indented\n\ntext  "


@pytest.mark.parametrize("name, display", [
    ("code-reviewer", "Code Reviewer"), ("docs_writer", "Docs Writer"), ("review", "Review"), ("a-b-c", "A B C"),
])
def test_a_display_name_is_made_from_the_agents_name(name, display):
    assert display_name_of(name) == display


@pytest.mark.parametrize("text", ["1e3", "1e-3", "0o17", "+.5"])
def test_text_that_yaml_1_2_reads_as_a_number_is_written_in_quotes(text):
    # PyYAML (YAML 1.1) reads these as text and wrote them plain; the agents' parsers read an agent named 1e3 as 1000.
    written = write_markdown({"name": text, "description": text}, "Body.")
    assert f"name: '{text}'\ndescription: '{text}'\n" in written
    assert read_markdown(written).fields == {"name": text, "description": text}


# Claude Code ends the front matter at the first '---' after the opening line, wherever it is (its frontmatter
# regex, /^---\s*\n([\s\S]*?)---\s*\n?/): a value holding one cut the front matter short, and the agent was not loaded.
CLAUDE_CODE_FRONT_MATTER = re.compile(r"---\s*\n([\s\S]*?)---\s*\n?")


@pytest.mark.parametrize("format_name", ["claude-code", "opencode"])
def test_an_exported_front_matter_holds_no_dashes_that_claude_code_would_end_it_at(format_name):
    mode = AgentMode(key="a___b", display_name="Before --- after", when_to_use="Use it --- carefully.",
                     description="Use it --- carefully.\n\n---\n\n" + "Details. " * 40, prompt="You help.\n\n---\n\nMore.",
                     tool_group_hints=['edit {"fileRegex": "^a---b$"}'])
    writing = FORMATS[format_name].write([mode])
    [file] = writing.files
    front, _ = split_front_matter(file.content)
    assert CLAUDE_CODE_FRONT_MATTER.match(file.content).group(1) == f"{front}\n"
    assert "---" not in front
    [(_, entry)] = FORMATS[format_name].read(writing.files).modes
    assert {name: entry[name] for name in ("key", "display_name", "when_to_use", "description", "prompt")} == {
        "key": "a___b", "display_name": "Before --- after", "when_to_use": "Use it --- carefully.",
        "description": mode.description, "prompt": mode.prompt}
