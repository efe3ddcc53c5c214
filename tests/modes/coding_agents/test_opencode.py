"""OpenCode's (and Kilo's) agents read into catalog entries and written back, every field reported."""

import pytest

from modes.coding_agents.base import APPROXIMATED, CARRIED, DROPPED, AgentFile, mode_id
from modes.coding_agents.markdown import read_markdown
from modes.coding_agents.opencode import (
    granted_groups, is_kilo_agent_file, is_opencode_file, read_opencode, strip_jsonc, write_opencode,
)
from modes.models import AgentMode

from .conftest import OPENCODE_AGENT, entry_of, fates

ALL_GROUPS = ["read", "edit", "command", "mcp", "modes", "browser"]
REGEX_EDIT = 'edit {"fileRegex": "\\\\.(md|mdx)$", "description": "Markdown files"}'
LONG = ("Use this agent to review pull requests before they merge. " * 8).strip()
PROMPT = """\
# Reviewer 🔍

You review code.

  1. Read the diff.
  2. Comment.

```sh
git diff --stat   # indentation and comments kept
```"""


def read(files: dict, format_name="opencode"):
    return read_opencode([AgentFile(path, content) for path, content in files.items()], format_name=format_name)


def agent(front: str, body="Body.") -> str:
    return f"---\n{front}\n---\n\n{body}\n"


@pytest.mark.parametrize("path", [
    ".opencode/agent/review.md", ".opencode/agents/review.md", ".opencode/agent/team/review.md",
    ".opencode/mode/review.md", "opencode.json", "opencode.jsonc", ".opencode/opencode.json",
])
def test_opencode_paths_are_recognized(path):
    assert is_opencode_file(path) and not is_kilo_agent_file(path)


@pytest.mark.parametrize("path", [
    ".kilo/agent/review.md", ".kilo/agents/review.md", ".kilocode/agent/review.md", "kilo.json", "kilo.jsonc",
    ".kilo/kilo.jsonc",
])
def test_kilo_paths_are_recognized(path):
    assert is_kilo_agent_file(path) and not is_opencode_file(path)


@pytest.mark.parametrize("path", [
    "review.md", "docs/agent/review.md", "src/.opencode/agent/review.md", ".opencode/agent/review.txt",
    ".opencode/mode/team/review.md", "package.json", ".kilocodemodes", ".claude/agents/review.md",
])
def test_other_paths_are_not_agent_files(path):
    assert not is_opencode_file(path) and not is_kilo_agent_file(path)


def test_an_agent_file_becomes_a_catalog_entry():
    reading = read({".opencode/agent/review.md": OPENCODE_AGENT})
    assert reading.problems == []
    [(path, entry)] = reading.modes
    assert path == ".opencode/agent/review.md"
    assert entry == {
        "id": mode_id("opencode", "review"),
        "key": "review",
        "display_name": "Review",
        "when_to_use": "Reviews code for quality and best practices",
        "description": "",
        "prompt": "You are in code review mode. Focus on:\n\n- Code quality and best practices\n"
                  "- Potential bugs and edge cases\n\n```js\n// a fence, kept as written\n```",
        "mode_instructions": [],
        "custom_instructions": "",
        "tool_group_hints": ["read", "mcp", "modes", "browser"],  # write, edit and bash denied
    }


def test_the_name_comes_from_the_file_unless_the_front_matter_names_the_agent():
    reading = read({
        ".opencode/agents/code-reviewer.md": agent("description: Reviews code."),
        ".opencode/agent/other.md": agent("name: security-auditor\ndescription: Audits."),
    })
    assert sorted(entry["key"] for _, entry in reading.modes) == ["code_reviewer", "security_auditor"]
    assert entry_of(reading, "code_reviewer")["display_name"] == "Code Reviewer"


def test_the_ids_depend_on_the_format_so_kilo_and_opencode_agents_of_one_name_differ():
    files = {".opencode/agent/review.md": OPENCODE_AGENT}
    assert entry_of(read(files, "kilo"), "review")["id"] == mode_id("kilo", "review") != mode_id("opencode", "review")


def test_a_nested_agents_name_holds_its_folder_and_cannot_become_a_key():
    reading = read({".opencode/agent/team/review.md": agent("description: Reviews.")})
    assert reading.modes == []
    assert reading.problems == [
        ".opencode/agent/team/review.md: mode 'team/review': 'team/review' cannot become a mode key: a key holds "
        "lower-case letters, digits and underscores only ('-' becomes '_')."
    ]


def test_a_missing_description_is_a_problem_naming_the_file_and_the_mode():
    reading = read({".opencode/agent/silent.md": agent("mode: subagent")})
    assert reading.modes == []
    [message] = reading.problems
    assert message.startswith(".opencode/agent/silent.md: mode 'silent': description: is missing or empty")


def test_a_file_without_front_matter_is_a_problem():
    reading = read({".opencode/agent/plain.md": "Just a prompt.\n"})
    assert reading.modes == [] and "no front matter" in reading.problems[0]


@pytest.mark.parametrize("front, field", [
    ("temperature: hot", "temperature"),
    ("mode: boss", "mode"),
    ("steps: 0", "steps"),
    ("hidden: maybe", "hidden"),
    ("tools:\n  bash: nope", "tools"),
    ("permission:\n  edit: maybe", "permission"),
    ("permission: [edit]", "permission"),
    ("description: [a, list]", "description"),
])
def test_a_field_of_the_wrong_type_is_a_problem_naming_it(front, field):
    front = front if front.startswith("description") else f"description: Reviews.\n{front}"
    reading = read({".opencode/agent/review.md": agent(front)})
    assert reading.modes == []
    assert any(f"mode 'review': {field}: " in message for message in reading.problems), reading.problems


def test_every_bad_file_is_reported_at_once_without_exceptions():
    reading = read({
        ".opencode/agent/tag.md": agent("description: !!python/object:os.system echo"),
        ".opencode/agent/unclosed.md": "---\ndescription: x\n",
        "opencode.json": '{"agent": {',
        ".opencode/agent/ok.md": agent("description: Fine."),
    })
    assert [entry["key"] for _, entry in reading.modes] == ["ok"]
    assert len(reading.problems) == 3
    for path in (".opencode/agent/tag.md", ".opencode/agent/unclosed.md", "opencode.json"):
        assert any(message.startswith(path) for message in reading.problems)


def test_an_agent_in_a_file_and_in_the_config_with_one_name_is_a_problem_naming_both():
    reading = read({
        ".opencode/agent/review.md": OPENCODE_AGENT,
        "opencode.json": '{"agent": {"review": {"description": "Reviews again.", "prompt": "Review."}}}',
    })
    [message] = reading.problems
    assert "opencode.json" in message and ".opencode/agent/review.md" in message


def test_names_that_become_one_key_are_a_problem():
    reading = read({".opencode/agent/code-review.md": agent("description: A."),
                    ".opencode/agent/code_review.md": agent("description: B.")})
    assert len(reading.problems) == 1 and "code_review" in reading.problems[0]


JSONC = """\
{
  "$schema": "https://opencode.ai/config.json",
  // Agents of this repository. "quotes" in comments are fine.
  "agent": {
    /* the reviewer,
       over two lines */
    "reviewer": {
      "description": "Reviews URLs like https://example.com // not a comment, nor /* this */",
      "prompt": "You review.\\nLine two: \\"quoted\\" // kept",
      "permission": {"edit": "deny",},  // trailing comma
    },
  },
}
"""


def test_a_jsonc_config_with_comments_and_trailing_commas_is_read_and_strings_keep_their_slashes():
    reading = read({"opencode.jsonc": JSONC})
    assert reading.problems == []
    entry = entry_of(reading, "reviewer")
    assert entry["when_to_use"] == "Reviews URLs like https://example.com // not a comment, nor /* this */"
    assert entry["prompt"] == 'You review.\nLine two: "quoted" // kept'
    assert entry["tool_group_hints"] == ["read", "command", "mcp", "modes", "browser"]


def test_stripping_jsonc_keeps_line_numbers_and_escaped_quotes():
    text = '{"a": "x\\" // y", // c\n "b": [1, 2,], /* d\n e */ "c": "/*"}'
    stripped = strip_jsonc(text)
    assert stripped.count("\n") == text.count("\n")
    assert '"x\\" // y"' in stripped and '"/*"' in stripped and "[1, 2]" in stripped


@pytest.mark.parametrize("text, reason", [
    ('{"agent": {} /* never closed', "never closed"),
    ('{"agent": {"a": {"description": "x"}} "extra"}', "not valid"),
    ('{"agent": {"a": 1}}', "must map agent names to objects"),
    ('["not", "an", "object"]', "must be a JSON object"),
    ('{"agent": {"a": {"description": "x"}, "a": {"description": "y"}}}', "given twice"),
])
def test_a_config_that_cannot_be_read_is_a_problem_naming_it(text, reason):
    reading = read({"opencode.jsonc": text})
    assert reading.modes == []
    assert reading.problems[0].startswith("opencode.jsonc: ") and reason in reading.problems[0]


def test_a_prompt_file_the_config_names_is_read_when_it_was_given():
    reading = read({
        ".opencode/opencode.json": '{"agent": {"docs": {"description": "Docs.", '
                                   '"prompt": "{file:./prompts/docs.md}"}}}',
        ".opencode/prompts/docs.md": "---\nnot: front matter here\n---\n\nWrite docs.\n",
    })
    assert reading.problems == []
    assert [entry["key"] for _, entry in reading.modes] == ["docs"]  # the prompt file is not read as an agent
    assert entry_of(reading, "docs")["prompt"] == "---\nnot: front matter here\n---\n\nWrite docs."
    assert "read from .opencode/prompts/docs.md" in next(line.how for line in reading.report if line.field == "prompt")


def test_a_prompt_file_the_config_names_but_was_not_given_is_dropped_and_said():
    reading = read({"opencode.json": '{"agent": {"docs": {"description": "Docs.", "prompt": "{file:./docs.txt}"}}}'})
    assert reading.problems == []
    assert "prompt" not in entry_of(reading, "docs")
    [line] = [line for line in reading.report if line.field == "prompt"]
    assert line.fate == DROPPED and "docs.txt, which was not given" in line.how


def test_a_config_entry_that_only_tunes_a_built_in_agent_is_not_a_mode():
    reading = read({"opencode.json": '{"agent": {"build": {"model": "anthropic/claude-sonnet-4"}}}'})
    assert (reading.modes, reading.problems) == ([], [])
    [line] = reading.report
    assert (line.field, line.fate) == ("build", DROPPED) and "own build agent" in line.how


@pytest.mark.parametrize("front, groups", [
    ("", ALL_GROUPS),
    ("tools:\n  write: false\n  edit: false", ["read", "command", "mcp", "modes", "browser"]),
    ("tools:\n  edit: false\n  write: true", ALL_GROUPS),  # OpenCode folds write into edit: the last one wins
    ("permission:\n  edit: ask\n  bash: deny\n  webfetch: deny\n  websearch: deny", ["read", "edit", "mcp", "modes"]),
    ("permission: deny", []),
    ("permission:\n  '*': deny\n  read: allow\n  grep: allow", ["read"]),
    ("permission:\n  read: allow\n  '*': deny", []),  # the last matching key wins
    ("permission:\n  bash:\n    '*': deny\n    'git status': allow", ALL_GROUPS),
    ("permission:\n  bash:\n    '*': deny", ["read", "edit", "mcp", "modes", "browser"]),
    ("permission:\n  'web*': deny\n  task: deny", ["read", "edit", "command", "mcp"]),
    ("tools:\n  bash: false\npermission:\n  bash: allow", ALL_GROUPS),  # permission over the older tools map
])
def test_tools_and_permissions_become_the_groups_a_mode_may_use(front, groups):
    reading = read({".opencode/agent/a.md": agent(f"description: A.\n{front}".strip())})
    assert entry_of(reading, "a")["tool_group_hints"] == groups


def test_a_tool_switched_off_with_no_is_refused_as_opencode_refuses_it_not_read_as_false():
    # OpenCode's YAML reads 'write: no' as the text 'no', and its schema takes only true or false for a tool: it
    # refuses the agent. PyYAML's YAML 1.1 read False, and the import took the edit group away without a word.
    reading = read({".opencode/agent/a.md": agent("description: A.\ntools:\n  write: no\n  bash: false")})
    assert reading.modes == []
    assert reading.problems == [".opencode/agent/a.md: mode 'a': tools: must be a mapping of tool names to true or "
                                "false: write's 'no' is text to the agent, as YAML 1.2 reads it; use false."]


def test_a_config_read_as_yaml_reads_a_tool_switched_off_with_no_as_front_matter_does_not_as_false():
    # Not JSON (an unquoted no), so read as YAML: as YAML 1.1 it was False, and the import took the edit group away
    # without a word, the silent reading agent files' YAML 1.2 ends in front matter.
    reading = read({"opencode.json": '{"agent": {"a": {"description": "A.", "prompt": "P.", "tools": {"write": no}}}}'})
    assert reading.modes == []
    assert reading.problems == ["opencode.json: mode 'a': tools: must be a mapping of tool names to true or false: "
                                "write's 'no' is text to the agent, as YAML 1.2 reads it; use false."]


def test_a_permission_key_yaml_1_1_reads_as_a_boolean_is_the_tool_name_opencode_reads():
    # 'no: deny' names a tool called no, which OpenCode does not have; YAML 1.1's False key was an uncaught error.
    reading = read({".opencode/agent/a.md": agent("description: A.\npermission:\n  no: deny\n  on: deny")})
    assert entry_of(reading, "a")["tool_group_hints"] == ALL_GROUPS
    [line] = [line for line in reading.report if line.field == "permission"]
    assert "no: deny: not a tool of OpenCode's own" in line.how and "on: deny: not a tool of OpenCode's own" in line.how


@pytest.mark.parametrize("front, field", [
    ("tools:\n  1: false", "tools"), ("permission:\n  true: deny", "permission"), ("permission:\n  ~: allow", "permission"),
])
def test_a_tool_named_by_a_number_a_boolean_or_null_is_a_problem_not_an_error(front, field):
    # YAML reads these keys as a number, true and null, not as tool names; matching them against tools was an
    # uncaught AttributeError.
    reading = read({".opencode/agent/a.md": agent(f"description: A.\n{front}")})
    assert reading.modes == []
    assert [message.split(": ")[2] for message in reading.problems] == [field]


def test_every_field_read_is_listed_once_with_its_fate():
    front = """\
name: auditor
description: Audits security.
mode: subagent
model: anthropic/claude-sonnet-4
variant: high
temperature: 0.2
top_p: 0.9
hidden: true
hidden_from_cycle: true
color: "#FF5733"
steps: 5
maxSteps: 5
disable: false
options:
  reasoningEffort: high
prompt: ignored
reasoningEffort: high
tools:
  write: false
permission:
  bash: ask
  todowrite: deny"""
    reading = read({".opencode/agent/auditor.md": agent(front)})
    assert reading.problems == []
    assert fates(reading) == {
        "name": CARRIED, "description": CARRIED, "body": CARRIED, "tools": CARRIED,
        "permission": APPROXIMATED,  # bash asks; todowrite has no group
        **{field: DROPPED for field in ("mode", "model", "variant", "temperature", "top_p", "hidden",
                                        "hidden_from_cycle", "color", "steps", "maxSteps", "disable", "options",
                                        "prompt", "reasoningEffort")},
    }
    assert len(reading.report) == len(fates(reading))


def test_a_long_description_is_shortened_to_its_first_sentence_and_kept_whole_as_the_description():
    reading = read({".opencode/agent/review.md": agent(f"description: {LONG}")})
    entry = entry_of(reading, "review")
    assert entry["when_to_use"] == "Use this agent to review pull requests before they merge."
    assert entry["description"] == LONG
    assert fates(reading)["description"] == APPROXIMATED


def test_an_agent_name_in_capitals_is_approximated_by_its_key():
    reading = read({".opencode/agent/Reviewer.md": agent("description: Reviews.")})
    assert entry_of(reading, "reviewer")["display_name"] == "Reviewer"
    assert fates(reading)["name"] == APPROXIMATED


# Writing


def mode(**fields) -> AgentMode:
    defaults = {"key": "code_reviewer", "display_name": "Code Reviewer", "when_to_use": "Use it to review code."}
    return AgentMode(**{**defaults, **fields})


def written(modes, format_name="opencode"):
    return write_opencode(modes, format_name=format_name)


def test_a_mode_is_written_where_each_tool_reads_agents():
    assert [file.path for file in written([mode()]).files] == [".opencode/agent/code-reviewer.md"]
    assert [file.path for file in written([mode()], "kilo").files] == [".kilo/agent/code-reviewer.md"]
    assert all(is_kilo_agent_file(file.path) for file in written([mode()], "kilo").files)


def test_a_plain_mode_is_written_as_opencode_writes_an_agent():
    [file] = written([mode(prompt="You review code.", tool_group_hints=["read", "command"])]).files
    assert file.content == """\
---
description: Use it to review code.
permission:
  '*': deny
  read: allow
  grep: allow
  glob: allow
  list: allow
  bash: allow
  question: allow
  todowrite: allow
  todoread: allow
---

You review code.
"""


def test_a_mode_with_every_group_is_written_without_permissions():
    [file] = written([mode(tool_group_hints=ALL_GROUPS)]).files
    assert read_markdown(file.content).fields == {"description": "Use it to review code."}


@pytest.mark.parametrize("format_name", ["opencode", "kilo"])
def test_a_mode_with_no_tool_group_denies_every_tool_but_questions_and_the_to_do_list(format_name):
    # A chat-only mode (Roo Code's 'groups: []'): an agent without permission would have every tool. Roo Code gives
    # every mode its questions and to-do list, whatever its groups; the rest is denied, MCP servers' tools too.
    writing = written([mode(tool_group_hints=[])], format_name)
    assert read_markdown(writing.files[0].content).fields["permission"] == {
        "*": "deny", "question": "allow", "todowrite": "allow", "todoread": "allow",
    }
    line = next(line for line in writing.report if line.field == "tool_group_hints")
    assert line.fate == CARRIED and "question, todowrite and todoread" in line.how


@pytest.mark.parametrize("format_name", ["opencode", "kilo"])
def test_a_mode_with_no_tool_group_reads_back_with_no_group(format_name):
    reading = read_files(written([mode(tool_group_hints=[])], format_name), format_name)
    assert entry_of(reading, "code_reviewer")["tool_group_hints"] == []


def test_a_mode_with_mcp_but_not_everything_denies_the_groups_it_lacks():
    [file] = written([mode(tool_group_hints=["read", "mcp"])]).files
    assert read_markdown(file.content).fields["permission"] == {
        "edit": "deny", "bash": "deny", "webfetch": "deny", "websearch": "deny", "task": "deny",
    }


def test_a_file_regex_is_not_turned_into_a_glob_the_agent_asks_and_the_comment_keeps_the_line():
    # Kilo's own migration made the regex a glob key of permission.edit, which matches nothing it meant.
    writing = written([mode(tool_group_hints=["read", REGEX_EDIT])])
    fields = read_markdown(writing.files[0].content).fields
    assert fields["permission"]["edit"] == "ask" and "\\.(md|mdx)$" not in str(fields["permission"])
    line = next(line for line in writing.report if line.field == "tool_group_hints")
    assert line.fate == APPROXIMATED and "asks before each edit" in line.how
    assert entry_of(read_files(writing), "code_reviewer")["tool_group_hints"] == ["read", REGEX_EDIT]


def test_the_when_to_use_and_the_description_both_survive_unlike_kilos_migration():
    writing = written([mode(description="Reviews code, the whole picture.")])
    entry = entry_of(read_files(writing), "code_reviewer")
    assert entry["when_to_use"] == "Use it to review code."
    assert entry["description"] == "Reviews code, the whole picture."


def read_files(writing, format_name="opencode"):
    return read_opencode(writing.files, format_name=format_name)


CARRIED_FIELDS = ("key", "display_name", "description", "when_to_use", "prompt", "mode_instructions",
                  "custom_instructions", "tool_group_hints")

ROUND_TRIPS = [
    mode(tool_group_hints=["read"]),
    mode(key="docs_writer", display_name="📝 Documentation Writer", description="Write and edit docs 📝",
         when_to_use="Use this mode for writing and editing documentation.", prompt=PROMPT,
         custom_instructions="Keep sentences short.\n\n- Use the active voice.", tool_group_hints=["read", REGEX_EDIT]),
    mode(key="long", display_name="Long", description=LONG, when_to_use="Use this agent to review pull requests "
         "before they merge.", prompt="One line.", mode_instructions=["First rule.", "Second: a rule."],
         tool_group_hints=["browser", "read"]),
    mode(key="mcp_only", display_name="MCP only", prompt="x", tool_group_hints=["mcp"]),
    mode(key="all_tools", display_name="All Tools", prompt="x", tool_group_hints=ALL_GROUPS),
    mode(key="chat_only", display_name="Chat Only", prompt="Talk.", tool_group_hints=[]),
    mode(key="roo_block", display_name="Roo Block", prompt="\nAs a YAML '|' block leaves it.\n",
         custom_instructions="Rules.\n\n", tool_group_hints=["read"]),
    mode(key="quoted", display_name="Quoted", when_to_use="Use it when: 'quotes', \"double\", #hash and yes.",
         prompt="Prompt\n\n<!-- a comment of the prompt's own -->", tool_group_hints=["read", "edit", "command"]),
]


@pytest.mark.parametrize("format_name", ["opencode", "kilo"])
@pytest.mark.parametrize("original", ROUND_TRIPS, ids=lambda mode: mode.key)
def test_a_written_mode_reads_back_with_the_same_carried_fields(original, format_name):
    writing = written([original], format_name)
    reading = read_files(writing, format_name)
    assert reading.problems == []
    [(_, entry)] = reading.modes
    assert {field: entry[field] for field in CARRIED_FIELDS} == {field: getattr(original, field)
                                                                  for field in CARRIED_FIELDS}
    assert written([AgentMode(**{field: entry[field] for field in CARRIED_FIELDS})], format_name).files == \
        writing.files


@pytest.mark.parametrize("field, value, fate", [
    ("display_name", "Code Reviewer", CARRIED),
    ("display_name", "🔍 Reviewer", APPROXIMATED),
    ("description", LONG, CARRIED),
    ("description", "Another text.", APPROXIMATED),
    ("prompt", "Review.", CARRIED),
    ("prompt", "Review.\n", CARRIED),  # its newline kept in the comment
    ("mode_instructions", ["Be brief."], APPROXIMATED),
    ("custom_instructions", "Be brief.", APPROXIMATED),
    ("tool_group_hints", ["read", "edit"], CARRIED),
    ("tool_group_hints", ["edit", "read"], APPROXIMATED),  # the order, kept in the comment
    ("tool_group_hints", [REGEX_EDIT], APPROXIMATED),
    ("tool_group_hints", [], CARRIED),  # no group: no tool of a group
    ("tool_group_hints", ["general"], DROPPED),
    ("behavior_hints", ["Calm."], DROPPED),
    ("human_role_hints", ["Reviewer"], DROPPED),
    ("example_utterances", ["Review this"], DROPPED),
    ("associated_tool_ids", ["agent_ddr_manager"], DROPPED),
    ("rag_scope_hints", ["docs"], DROPPED),
    ("strong_signals", ["review"], DROPPED),
    ("weak_signals", ["look"], DROPPED),
    ("switch_targets", ["general"], DROPPED),
    ("llm_can_enter", False, DROPPED),
    ("entry_confirmation", "user", DROPPED),
    ("status", "experimental", DROPPED),
    ("version", "v2", DROPPED),
    ("is_default", True, DROPPED),
])
def test_every_catalog_field_written_is_listed_with_its_fate(field, value, fate):
    base = {"description": LONG, "when_to_use": "Use this agent to review pull requests before they merge."}
    writing = written([mode(**{**base, field: value})])
    assert fates(writing)[field] == fate
    assert fates(writing)["key"] == fates(writing)["when_to_use"] == CARRIED


def test_a_mode_at_its_defaults_reports_only_what_it_writes():
    assert set(fates(written([mode(tool_group_hints=["read"])]))) == {
        "key", "display_name", "when_to_use", "tool_group_hints",
    }


def test_the_groups_written_are_the_groups_read():
    for groups in ([], ["read"], ["edit", "command"], ["mcp", "browser"], ["modes"], ALL_GROUPS):
        writing = written([mode(tool_group_hints=groups)])
        fields = read_markdown(writing.files[0].content).fields
        assert granted_groups(None, fields.get("permission")) == [g for g in ALL_GROUPS if g in groups]


# OpenCode's front matter, when its YAML fails, is read again with each unindented 'key: value' line whose value
# holds ':' (and does not start with a quote, nor is '|' or '>') as a literal block: its text
# (anomalyco/opencode packages/core/src/config/markdown.ts, sanitize).
@pytest.mark.parametrize("value", [
    "[Beta] Use it when: the docs change.", "**Docs** Use it when: the docs change.", "> Note: use it for the docs.",
    "{draft} Use it when: the docs change.", "&docs Use it when: the docs change.", "!Important use it when: the docs change.",
])
def test_a_description_that_is_not_yaml_is_text_whatever_it_starts_with_as_opencode_reads_it(value):
    reading = read({".opencode/agent/docs.md": agent(f"description: {value}")})
    assert reading.problems == []
    assert entry_of(reading, "docs")["when_to_use"] == value


def test_front_matter_that_is_not_yaml_gives_a_flow_mapping_holding_a_colon_as_text_as_opencode_reads_it():
    reading = read({".opencode/agent/docs.md": agent("description: Use it when: x.\npermission: {edit: deny}")})
    assert [problem for problem in reading.problems if "permission" in problem]
