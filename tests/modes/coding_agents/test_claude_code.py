"""Claude Code's subagents read into catalog entries and written back, every field reported."""

import pytest

from modes.coding_agents.base import APPROXIMATED, CARRIED, DROPPED, AgentFile, mode_id
from modes.coding_agents.claude_code import granted_groups, is_claude_code_file, read_claude_code, write_claude_code
from modes.coding_agents.markdown import read_markdown
from modes.models import AgentMode

from .conftest import CLAUDE_AGENT, entry_of, fates

ALL_GROUPS = ["read", "edit", "command", "mcp", "modes", "browser"]
REGEX_EDIT = 'edit {"fileRegex": "\\\\.py$", "description": "Python files"}'
LONG = ("Use this agent when code has been written and needs a review before it merges. " * 5).strip()
# Written as Claude Code's own plugins write their agents: a description that is not strict YAML.
PLUGIN_AGENT = """\
---
name: conversation-analyzer
description: Use this agent when analyzing conversation transcripts. Examples: <example>Context: User is \
running /hookify\\nuser: "/hookify"\\nassistant: "I'll analyze the conversation"</example>
model: inherit
color: yellow
tools: ["Read", "Grep"]
---

You are a conversation analysis specialist.

**Your Core Responsibilities:**
1. Read and analyze user messages
   - look for frustration
"""


def read(files: dict):
    return read_claude_code([AgentFile(path, content) for path, content in files.items()])


def agent(front: str, body="You help.") -> str:
    return f"---\n{front}\n---\n\n{body}\n"


@pytest.mark.parametrize("path, recognized", [
    (".claude/agents/test-runner.md", True), (".claude/agents/review/security.md", True),
    (".claude/agents/notes.txt", False), (".claude/commands/test.md", False), ("agents/test-runner.md", False),
    ("sub/.claude/agents/test-runner.md", False), (".opencode/agent/test-runner.md", False),
])
def test_claude_code_paths_are_recognized(path, recognized):
    assert is_claude_code_file(path) is recognized


def test_a_subagent_becomes_a_catalog_entry():
    reading = read({".claude/agents/test-runner.md": CLAUDE_AGENT})
    assert reading.problems == []
    assert reading.modes == [(".claude/agents/test-runner.md", {
        "id": mode_id("claude-code", "test-runner"),
        "key": "test_runner",
        "display_name": "Test Runner",
        "when_to_use": "Use proactively to run tests and fix failures.",
        "description": "",
        "prompt": "You are a test automation expert.\n\nWhen you see code changes, run the tests.",
        "mode_instructions": [],
        "custom_instructions": "",
        "tool_group_hints": ["read", "edit", "command"],
    })]


def test_a_plugin_agent_with_a_colon_filled_description_is_read_as_claude_code_reads_it():
    reading = read({".claude/agents/conversation-analyzer.md": PLUGIN_AGENT})
    assert reading.problems == []
    entry = entry_of(reading, "conversation_analyzer")
    assert entry["when_to_use"].startswith("Use this agent when analyzing conversation transcripts. Examples: <ex")
    assert entry["prompt"].endswith("1. Read and analyze user messages\n   - look for frustration")
    # Its YAML failing, Claude Code quotes 'tools: ["Read", "Grep"]' too (not wholly quoted): the tools '["Read"'
    # and '"Grep"]', which it has not, so the subagent has none.
    assert entry["tool_group_hints"] == []
    description = next(line for line in reading.report if line.field == "description")
    assert "read as text, as Claude Code reads front matter that is not YAML" in description.how


@pytest.mark.parametrize("front", [
    "description: Reviews code.\\n\\nExamples: <example>review this</example>",
    "description: 'Reviews code.\\n\\nExamples: <example>review this</example>'",
])
def test_a_backslash_n_in_a_description_is_a_line_break_as_claude_code_reads_it(front):
    # Claude Code's agent loader (cli.js 2.1.112) replaces every \n in a description with a line break: its own
    # plugins write their examples so, in plain and single-quoted YAML, where \n is two characters.
    reading = read({".claude/agents/reviewer.md": agent(f"name: reviewer\n{front}")})
    description = next(line for line in reading.report if line.field == "description")
    assert entry_of(reading, "reviewer")["when_to_use"] == "Reviews code. Examples: <example>review this</example>"
    assert description.how.endswith("joined onto one line")


def test_the_name_in_the_front_matter_names_the_agent_whatever_the_file_is_called():
    reading = read({".claude/agents/whatever.md": agent("name: code-reviewer\ndescription: Reviews.")})
    assert entry_of(reading, "code_reviewer")["id"] == mode_id("claude-code", "code-reviewer")


@pytest.mark.parametrize("content, message", [
    (agent("name: silent"), "mode 'silent': description: is missing or empty"),
    (agent("name: silent\ndescription: ''"), "mode 'silent': description: is missing or empty"),
    (agent("description: No name."), "name: the agent needs a name"),
    (agent("name: Not a Key!\ndescription: x"), "cannot become a mode key"),
    ("You are a helper, without front matter.\n", "starts with front matter"),
    (agent("name: a\ndescription: x\ntools: 3"), "mode 'a': tools: must be tool names"),
    (agent("name: a\ndescription: x\nmaxTurns: many"), "mode 'a': maxTurns: must be a whole number"),
    (agent("name: a\ndescription: x\nhooks: [1]"), "mode 'a': hooks: must be a mapping"),
    (agent("name: a\ndescription: !!python/object/apply:os.system [ls]"), "not valid YAML"),
    (agent("name: a\nname: b\ndescription: x"), "given twice"),
    ("---\nname: a\ndescription: x\n", "never closed"),
])
def test_bad_subagents_are_problems_naming_the_file_and_the_mode(content, message):
    reading = read({".claude/agents/a.md": content})
    assert reading.modes == []
    assert any(problem.startswith(".claude/agents/a.md: ") and message in problem for problem in reading.problems), \
        reading.problems


def test_every_bad_file_is_reported_at_once_and_the_good_ones_still_read():
    reading = read({".claude/agents/silent.md": agent("name: silent"), ".claude/agents/ok.md": CLAUDE_AGENT,
                    ".claude/agents/odd.md": agent("name: odd\ndescription: !!python/name:os.system")})
    assert [entry["key"] for _, entry in reading.modes] == ["test_runner"]
    assert len(reading.problems) == 2


def test_two_subagents_with_one_name_are_a_problem_naming_both():
    reading = read({".claude/agents/a.md": agent("name: reviewer\ndescription: A."),
                    ".claude/agents/b.md": agent("name: reviewer\ndescription: B.")})
    [message] = reading.problems
    assert message.startswith(".claude/agents/b.md: mode 'reviewer': .claude/agents/a.md defines")


@pytest.mark.parametrize("front, groups", [
    ("", ALL_GROUPS),
    ("tools: Read, Grep, Glob", ["read"]),
    ("tools:\n  - Read\n  - Edit\n  - Bash", ["read", "edit", "command"]),
    ('tools: ["WebFetch", "WebSearch", "Task"]', ["modes", "browser"]),
    ("tools: Read, mcp__github__create_issue", ["read", "mcp"]),
    ("tools: Agent(worker, researcher), Bash(npm test:*)", ["command", "modes"]),
    ("tools: Read, TodoWrite, FancyNewTool", ["read"]),
    ("tools: ''", []),
    ("tools: []", []),
    ("tools:", []),  # empty: no tools to Claude Code, as its own /agents wrote "none selected"
    ("disallowedTools:", ALL_GROUPS),
    ("disallowedTools: Write, Edit, NotebookEdit", ["read", "command", "mcp", "modes", "browser"]),
    ("disallowedTools: Write", ALL_GROUPS),  # Edit is left: the edit group stays
    ("tools: Read, Bash\ndisallowedTools: Bash", ["read"]),
])
def test_tools_become_the_groups_a_mode_may_use(front, groups):
    reading = read({".claude/agents/a.md": agent(f"name: a\ndescription: A.\n{front}".strip())})
    assert entry_of(reading, "a")["tool_group_hints"] == groups


def test_disallowing_part_of_a_groups_tools_is_approximated():
    reading = read({".claude/agents/a.md": agent("name: a\ndescription: A.\ndisallowedTools: Write")})
    assert fates(reading)["disallowedTools"] == APPROXIMATED


def test_an_unknown_tool_is_dropped_and_named_not_a_problem():
    reading = read({".claude/agents/a.md": agent("name: a\ndescription: A.\ntools: Read, FancyNewTool")})
    assert reading.problems == []
    [line] = [line for line in reading.report if line.field == "tools"]
    assert line.fate == APPROXIMATED and "FancyNewTool: no tool group holds it, dropped" in line.how


def test_a_tool_listed_as_no_or_on_is_the_tool_name_claude_code_reads_not_a_boolean():
    # YAML 1.2 reads the list's no and on as text, tool names Claude Code does not know; YAML 1.1 read booleans, and the
    # import refused the subagent for a list that is not of tool names.
    reading = read({".claude/agents/a.md": agent("name: a\ndescription: A.\ntools:\n  - Read\n  - no\n"
                                                 "disallowedTools: [on]")})
    assert reading.problems == []
    assert entry_of(reading, "a")["tool_group_hints"] == ["read"]
    lines = {line.field: line.how for line in reading.report}
    assert "no: no tool group holds it, dropped" in lines["tools"]
    assert lines["disallowedTools"] == "on: no tool group holds it, dropped"


def test_tools_none_of_which_has_a_group_are_dropped():
    reading = read({".claude/agents/a.md": agent("name: a\ndescription: A.\ntools: TodoWrite, Skill")})
    assert fates(reading)["tools"] == DROPPED


def test_every_field_read_is_listed_once_with_its_fate():
    front = """\
name: auditor
description: Audits security.
tools: Read, Grep
disallowedTools: Bash
model: opus
color: red
permissionMode: plan
maxTurns: 10
skills: [security-review]
mcpServers: [github]
hooks:
  Stop: []
memory: project
background: false
effort: high
isolation: worktree
initialPrompt: Start.
disabled: false
favourite: true"""
    reading = read({".claude/agents/auditor.md": agent(front)})
    assert reading.problems == []
    assert fates(reading) == {
        "name": CARRIED, "description": CARRIED, "body": CARRIED, "tools": CARRIED, "disallowedTools": CARRIED,
        **{field: DROPPED for field in ("model", "color", "permissionMode", "maxTurns", "skills", "mcpServers",
                                        "hooks", "memory", "background", "effort", "isolation", "initialPrompt",
                                        "disabled", "favourite")},
    }
    assert len(reading.report) == len(fates(reading))


# Writing


def mode(**fields) -> AgentMode:
    defaults = {"key": "code_reviewer", "display_name": "Code Reviewer", "when_to_use": "Use it to review code."}
    return AgentMode(**{**defaults, **fields})


def test_a_mode_is_written_as_claude_code_writes_a_subagent():
    writing = write_claude_code([mode(prompt="You review code.\n\nBe kind.", tool_group_hints=["read", "command"])])
    assert [(file.path, file.content) for file in writing.files] == [(".claude/agents/code-reviewer.md", """\
---
name: code-reviewer
description: Use it to review code.
tools: Read, Grep, Glob, Bash
---

You review code.

Be kind.
""")]


def test_every_group_is_written_without_tools_so_the_subagent_inherits_all():
    [file] = write_claude_code([mode(tool_group_hints=ALL_GROUPS)]).files
    assert "tools" not in read_markdown(file.content).fields


def test_a_mode_with_no_tool_group_is_written_with_no_tools_not_every_tool():
    # A chat-only mode (Roo Code's 'groups: []'): a subagent without tools would inherit every tool. Claude Code
    # reads an empty list as none (cli.js 2.1.112: x56 returns [] for it, undefined only for a missing field).
    writing = write_claude_code([mode(tool_group_hints=[])])
    assert read_markdown(writing.files[0].content).fields["tools"] == []
    line = next(line for line in writing.report if line.field == "tool_group_hints")
    assert line.fate == CARRIED and "no tools" in line.how


def test_a_mode_with_no_tool_group_reads_back_with_no_group():
    reading = read_claude_code(write_claude_code([mode(tool_group_hints=[])]).files)
    assert entry_of(reading, "code_reviewer")["tool_group_hints"] == []


def test_mcp_without_every_group_is_written_as_the_tools_disallowed():
    [file] = write_claude_code([mode(tool_group_hints=["read", "mcp"])]).files
    fields = read_markdown(file.content).fields
    assert "tools" not in fields
    assert fields["disallowedTools"] == "Edit, Write, NotebookEdit, Bash, WebFetch, WebSearch, Task"


def test_the_groups_written_are_the_groups_read():
    for groups in ([], ["read"], ["edit", "command"], ["mcp", "browser"], ["modes"], ALL_GROUPS):
        fields = read_markdown(write_claude_code([mode(tool_group_hints=groups)]).files[0].content).fields
        assert granted_groups(fields.get("tools"), fields.get("disallowedTools")) == \
            [group for group in ALL_GROUPS if group in groups]


CARRIED_FIELDS = ("key", "display_name", "description", "when_to_use", "prompt", "mode_instructions",
                  "custom_instructions", "tool_group_hints")
PROMPT = "# Tester 🧪\n\nRun the tests.\n\n```python\ndef test():\n    assert True\n```\n\n  Indented closing line."
ROUND_TRIPS = [
    mode(tool_group_hints=["read", "edit", "command"]),
    mode(key="docs_writer", display_name="📝 Documentation Writer", description="Write and edit docs",
         when_to_use="Use this mode for writing documentation.", prompt=PROMPT,
         custom_instructions="Keep sentences short.", mode_instructions=["One.", "Two: three."],
         tool_group_hints=["read", REGEX_EDIT]),
    mode(key="long", display_name="Long", description=LONG, when_to_use="Use this agent when code has been written "
         "and needs a review before it merges.", prompt="x", tool_group_hints=["mcp", "read"]),
    mode(key="everything", display_name="Everything", prompt="x", tool_group_hints=ALL_GROUPS),
    mode(key="yes", display_name="Yes", when_to_use="yes", prompt="no", tool_group_hints=["browser"]),
    mode(key="chat_only", display_name="Chat Only", prompt="Talk.", tool_group_hints=[]),
]


@pytest.mark.parametrize("original", ROUND_TRIPS, ids=lambda mode: mode.key)
def test_a_written_mode_reads_back_with_the_same_carried_fields(original):
    writing = write_claude_code([original])
    reading = read_claude_code(writing.files)
    assert reading.problems == []
    [(_, entry)] = reading.modes
    assert {field: entry[field] for field in CARRIED_FIELDS} == {field: getattr(original, field)
                                                                  for field in CARRIED_FIELDS}
    assert write_claude_code([AgentMode(**{field: entry[field] for field in CARRIED_FIELDS})]).files == writing.files


def test_a_file_regex_is_reported_as_widened_and_kept_for_the_catalog():
    writing = write_claude_code([mode(tool_group_hints=["read", REGEX_EDIT])])
    line = next(line for line in writing.report if line.field == "tool_group_hints")
    assert line.fate == APPROXIMATED and "may edit any file" in line.how


@pytest.mark.parametrize("field, value, fate", [
    ("display_name", "Code Reviewer", CARRIED),
    ("display_name", "🔍 Reviewer", APPROXIMATED),
    ("description", "Another text.", APPROXIMATED),
    ("prompt", "Review.", CARRIED),
    ("mode_instructions", ["Be brief."], APPROXIMATED),
    ("custom_instructions", "Be brief.", APPROXIMATED),
    ("tool_group_hints", ["read", "edit"], CARRIED),
    ("tool_group_hints", [REGEX_EDIT], APPROXIMATED),
    ("tool_group_hints", ["general"], DROPPED),
    ("human_role_hints", ["Reviewer"], DROPPED),
    ("example_utterances", ["Review this"], DROPPED),
    ("switch_targets", ["general"], DROPPED),
    ("llm_can_enter", False, DROPPED),
    ("entry_confirmation", "none", DROPPED),
    ("status", "deprecated", DROPPED),
    ("version", "v3", DROPPED),
    ("associated_tool_ids", ["agent_ddr_manager"], DROPPED),
])
def test_every_catalog_field_written_is_listed_with_its_fate(field, value, fate):
    writing = write_claude_code([mode(**{field: value})])
    assert fates(writing)[field] == fate
    assert [line.path for line in writing.report] == [".claude/agents/code-reviewer.md"] * len(writing.report)


def test_tabs_between_the_words_of_a_line_of_front_matter_are_read_as_yaml_reads_them():
    # An editor's tab after a colon, inside a value or at the end of a line: YAML (Claude Code's and OpenCode's
    # parsers) takes them; PyYAML's scanner refused the whole file.
    front = "name:\tr\ndescription: Reviews\tcode.\t\ntools: [Read,\tGrep]\t# read only"
    reading = read({".claude/agents/r.md": agent(front)})
    assert reading.problems == []
    entry = entry_of(reading, "r")
    assert (entry["when_to_use"], entry["tool_group_hints"]) == ("Reviews code.", ["read"])


@pytest.mark.parametrize("front", [
    "name: r\ndescription: Reviews code --- never edits",
    "name: r\n# --- who it is ---\ndescription: Reviews code.",
    "name: r\ndescription: |\n  Reviews code.\n  ---\n  Never edits.",
])
def test_front_matter_holding_dashes_claude_code_ends_it_at_is_a_problem_naming_the_line(front):
    # Claude Code ends the front matter at the first '---' wherever it is: it reads such an agent cut short (the rest
    # of the front matter as its prompt), so importing what the file meant would change what Claude Code does.
    reading = read({".claude/agents/r.md": agent(front)})
    assert reading.modes == []
    [problem] = reading.problems
    line = next(number for number, text in enumerate(front.split("\n"), start=2) if "---" in text)
    assert problem.startswith(".claude/agents/r.md: ") and f"line {line}" in problem and "'---'" in problem


# Claude Code's front matter, when its YAML fails, is read again with each 'key: value' line whose value holds one of
# {}[]*&#!|>%@` or ': ' (and is not wholly quoted) written in double quotes: its text (cli.js 2.1.112, parseFrontmatter).
@pytest.mark.parametrize("value", [
    "[Beta] Use it when: the docs change.", "**Docs** Use it when: the docs change.", "> Note: use it for the docs.",
    "{draft} Use it when: the docs change.", "&docs Use it when: the docs change.", "!Important use it when: the docs change.",
    "*docs* Use it when: the docs change.", "Use it when: the docs say \"\\n\" or 'quote'.",
])
def test_a_description_that_is_not_yaml_is_text_whatever_it_starts_with_as_claude_code_reads_it(value):
    reading = read({".claude/agents/docs.md": agent(f"name: docs\ndescription: {value}")})
    assert reading.problems == []
    # A \n is a line break to Claude Code, joined onto the one line of the when-to-use.
    assert entry_of(reading, "docs")["when_to_use"] == value.replace("\\n", " ")


def test_front_matter_that_is_not_yaml_gives_an_unquoted_list_of_tools_as_text_as_claude_code_reads_it():
    # Claude Code quotes every such line once the YAML fails: '[Read, Grep]' names the tools '[Read' and 'Grep]',
    # which it has not, so the subagent gets none of them; a wholly quoted value is left as it is.
    unquoted = read({".claude/agents/docs.md": agent("name: docs\ndescription: Use it when: x.\ntools: [Read, Grep]")})
    assert unquoted.problems == []
    assert entry_of(unquoted, "docs")["tool_group_hints"] == []
    quoted = read({".claude/agents/docs.md": agent('name: docs\ndescription: Use it when: x.\ntools: "Read, Grep"')})
    assert entry_of(quoted, "docs")["tool_group_hints"] == ["read"]
