"""Roo Code's (and Kilo's legacy) custom modes read into catalog entries and written back, every field reported."""

import json
import re

import pytest
import yaml

from modes.coding_agents.base import APPROXIMATED, CARRIED, DROPPED, AgentFile, fidelity_text, mode_id
from modes.coding_agents.roo import (
    is_kilo_modes_file, is_roo_file, read_roo, write_roo,
)
from modes.models import AgentMode

from .conftest import KILOCODEMODES, ROOMODES, ROO_RULES, entry_of, fates

# A .roomodes as Roo Code writes it (the yaml package, lineWidth 0): block scalars, emoji, group pairs.
ARCHITECT = """\
customModes:
  - slug: api-architect
    name: 🏗️ API Architect
    roleDefinition: |-
      You are Roo, an API architect.

      ## How you work

      1. Read the routes first:
         ```ts
         app.get("/users/:id", handler)
         ```
      2. Then write the plan.
    whenToUse: Use this mode to design HTTP APIs before building them.
    description: Design APIs
    customInstructions: |-
      Keep endpoints plural.
    groups:
      - read
      - - edit
        - fileRegex: ^(?!.*\\.test\\.).*\\.(md|ya?ml)$
          description: Docs and specs, not tests
      - command
      - mcp
    source: project
"""
MARKDOWN_PROMPT = """\
# Reviewer 🔍

You review code.

  1. Read the diff.
\t2. Comment (a tab before it).

```sh
git diff --stat   # indentation and comments kept
```
A line ending in two spaces  
and the next."""
LOOKBEHIND = 'edit {"fileRegex": "(?<=(^|/)docs/(api|guides)/).*\\\\.mdx?$", "description": "Docs"}'
LOOKAHEAD = 'edit {"fileRegex": "^(?=.*\\\\/locales\\\\/)[^/]+\\\\.json$"}'


def read(files: dict, format_name="roo"):
    return read_roo([AgentFile(path, content) for path, content in files.items()], format_name=format_name)


def roomodes(*modes) -> str:
    return json.dumps({"customModes": list(modes)}, ensure_ascii=False)


def roo_mode(**fields) -> dict:
    """A mode as a .roomodes holds it, with what Roo Code needs; fields=None leaves a field out."""
    mode = {"slug": "reviewer", "name": "Reviewer", "roleDefinition": "You review.", "whenToUse": "Use to review.",
            "groups": ["read"], **fields}
    return {name: value for name, value in mode.items() if value is not None}


def catalog_mode(**fields) -> AgentMode:
    return AgentMode(**{"key": "reviewer", "display_name": "Reviewer", "when_to_use": "Use to review.", **fields})


# Paths


@pytest.mark.parametrize("path", [
    ".roomodes", "services/api/.roomodes", "custom_modes.yaml", ".roo/rules-docs-writer/01-style.md",
    ".roo/rules-docs-writer/nested/02.txt", "packages/web/.roo/rules-code/style.md",
])
def test_roo_code_paths_are_recognized(path):
    assert is_roo_file(path)


@pytest.mark.parametrize("path", [
    ".roo/rules/general.md", ".roo/rules-code/.DS_Store", ".roo/rules-code/notes.log", ".roo/rules-code/x.swp",
    ".roo/rules-code/Thumbs.db", ".roo/mcp.json", "roomodes", ".kilocodemodes", ".kilocode/rules-code/a.md",
    "docs/rules-code/a.md",
])
def test_other_paths_are_not_roo_code_files(path):
    assert not is_roo_file(path)


@pytest.mark.parametrize("path, expected", [
    (".kilocodemodes", True), ("apps/.kilocodemodes", True), (".kilocode/rules-translate/glossary.md", True),
    (".kilocode/rules/general.md", False), (".roomodes", False), (".roo/rules-translate/a.md", False),
    (".kilocode/rules-translate/cache.tmp", False),
])
def test_kilo_mode_files_and_rules_folders_are_recognized(path, expected):
    assert is_kilo_modes_file(path) is expected


# Reading


def test_a_roomodes_as_roo_code_writes_it_becomes_catalog_entries():
    reading = read({".roomodes": ARCHITECT})
    assert reading.problems == []
    assert reading.modes == [(".roomodes", {
        "id": mode_id("roo", "api-architect"),
        "key": "api_architect",
        "display_name": "🏗️ API Architect",
        "prompt": "You are Roo, an API architect.\n\n## How you work\n\n1. Read the routes first:\n   ```ts\n"
                  '   app.get("/users/:id", handler)\n   ```\n2. Then write the plan.',
        "when_to_use": "Use this mode to design HTTP APIs before building them.",
        "description": "Design APIs",
        "custom_instructions": "Keep endpoints plural.",
        "tool_group_hints": [
            "read", 'edit {"fileRegex": "^(?!.*\\\\.test\\\\.).*\\\\.(md|ya?ml)$", '
                    '"description": "Docs and specs, not tests"}', "command", "mcp",
        ],
    })]


def test_the_shared_repository_reads_with_its_rules_after_the_custom_instructions():
    reading = read({".roomodes": ROOMODES, ".roo/rules-docs-writer/01-style.md": ROO_RULES})
    entry = entry_of(reading, "docs_writer")
    assert entry["custom_instructions"] == (
        "Keep sentences short.\n\n# Rules from .roo/rules-docs-writer/01-style.md:\nUse the active voice."
    )
    assert entry["prompt"].startswith("You are Roo, a technical writer.\n\nYou write docs that people finish reading:\n"
                                      "  - short sentences\n")
    assert entry["tool_group_hints"][1] == \
        'edit {"fileRegex": "(?<!draft)\\\\.(md|mdx)$", "description": "Markdown files only"}'


def test_rules_files_follow_in_roo_codes_order_each_under_its_heading():
    files = {
        ".roomodes": roomodes(roo_mode(customInstructions="Be brief.\n")),
        ".roo/rules-reviewer/02-tests.md": "\n  Run the tests.\n\n",
        ".roo/rules-reviewer/01-Style.md": "\ufeffNo jargon.\n",
        ".roo/rules-reviewer/more/00-first.md": "Read it all.",
    }
    reading = read(files)
    assert entry_of(reading, "reviewer")["custom_instructions"] == (
        "Be brief.\n\n"
        "# Rules from .roo/rules-reviewer/more/00-first.md:\nRead it all.\n\n"
        "# Rules from .roo/rules-reviewer/01-Style.md:\nNo jargon.\n\n"
        "# Rules from .roo/rules-reviewer/02-tests.md:\nRun the tests."
    )
    for path in list(files)[1:]:
        line = next(line for line in reading.report if line.field == path)
        assert (line.path, line.mode, line.fate) == (path, "reviewer", APPROXIMATED)
        assert f"'# Rules from {path}:'" in line.how


def test_rules_without_custom_instructions_are_the_custom_instructions():
    reading = read({".roomodes": roomodes(roo_mode()), ".roo/rules-reviewer/a.md": "Rule."})
    assert entry_of(reading, "reviewer")["custom_instructions"] == "# Rules from .roo/rules-reviewer/a.md:\nRule."


def test_rules_beside_a_nested_mode_file_belong_to_its_modes_only():
    reading = read({
        "apps/web/.roomodes": roomodes(roo_mode()),
        "apps/web/.roo/rules-reviewer/a.md": "Web rule.",
        ".roo/rules-reviewer/b.md": "Top rule.",
    })
    assert entry_of(reading, "reviewer")["custom_instructions"] == "# Rules from .roo/rules-reviewer/a.md:\nWeb rule."
    top = next(line for line in reading.report if line.path == ".roo/rules-reviewer/b.md")
    assert top.fate == DROPPED


def test_rules_for_a_slug_no_mode_has_are_dropped_and_said_not_refused():
    reading = read({".roomodes": roomodes(roo_mode()), ".roo/rules-code/style.md": "Tabs.", ".roo/rules-x/e.md": ""})
    assert reading.problems == [] and [entry["key"] for _, entry in reading.modes] == ["reviewer"]
    line = next(line for line in reading.report if line.path == ".roo/rules-code/style.md")
    assert (line.mode, line.field, line.fate) == ("code", ".roo/rules-code/style.md", DROPPED)
    assert "'code'" in line.how and "Roo Code's own modes" in line.how


def test_an_empty_rules_file_is_dropped_as_roo_code_adds_nothing_of_it():
    reading = read({".roomodes": roomodes(roo_mode()), ".roo/rules-reviewer/empty.md": "  \n"})
    assert entry_of(reading, "reviewer")["custom_instructions"] == ""
    assert fates(reading)[".roo/rules-reviewer/empty.md"] == DROPPED


def test_a_json_roomodes_is_read_as_roo_code_falls_back_to_json():
    mode = roo_mode(name="🧪 Tester", groups=[["edit", {"fileRegex": "\\.test\\.ts$"}]])
    reading = read({".roomodes": roomodes(mode)})
    entry = entry_of(reading, "reviewer")
    assert entry["display_name"] == "🧪 Tester"
    assert entry["tool_group_hints"] == ['edit {"fileRegex": "\\\\.test\\\\.ts$"}']


def test_a_byte_order_mark_is_left_out_and_an_empty_file_holds_no_modes():
    reading = read({".roomodes": "\ufeff" + ARCHITECT, "custom_modes.yaml": "\n"})
    assert reading.problems == [] and [entry["key"] for _, entry in reading.modes] == ["api_architect"]


def test_a_file_of_another_name_is_read_as_a_mode_file():
    reading = read({"team-modes.yaml": ARCHITECT})
    assert reading.modes[0][0] == "team-modes.yaml" and reading.problems == []


def test_kilos_legacy_modes_and_rules_folder_are_read_with_kilos_ids_and_words():
    reading = read({".kilocodemodes": KILOCODEMODES, ".kilocode/rules-translate/glossary.md": "Keep 'mode' as is.",
                    ".kilocode/rules-translate/.DS_Store": "x"}, format_name="kilo")
    assert reading.problems == []
    ignored = next(line for line in reading.report if line.path == ".kilocode/rules-translate/.DS_Store")
    assert (ignored.mode, ignored.fate) == ("translate", DROPPED)
    entry = entry_of(reading, "translate")
    assert entry["id"] == mode_id("kilo", "translate") != mode_id("roo", "translate")
    assert entry["custom_instructions"] == "# Rules from .kilocode/rules-translate/glossary.md:\nKeep 'mode' as is."
    assert entry["tool_group_hints"] == [
        "read", 'edit {"fileRegex": "(?=.*locales/).*\\\\.json$", "description": "Locale files"}'
    ]
    unknown = read({".kilocodemodes": roomodes(roo_mode(model="globe"))}, format_name="kilo")
    assert next(line.how for line in unknown.report if line.field == "model") == "not a Kilo mode field"


def test_an_exported_modes_rules_files_join_its_custom_instructions():
    exported = """\
customModes:
  - slug: reviewer
    name: Reviewer
    roleDefinition: You review.
    whenToUse: Use to review.
    customInstructions: Be kind.
    groups: [read]
    source: project
    rulesFiles:
      - relativePath: 02-b.md
        content: Second.
      - relativePath: rules-reviewer/01-a.md
        content: First.
      - relativePath: empty.md
        content: ""
"""
    reading = read({"reviewer-export.yaml": exported, ".roo/rules-reviewer/02-b.md": "Old second."})
    assert entry_of(reading, "reviewer")["custom_instructions"] == (
        "Be kind.\n\n# Rules from .roo/rules-reviewer/01-a.md:\nFirst.\n\n"
        "# Rules from .roo/rules-reviewer/02-b.md:\nSecond."
    )
    line = next(line for line in reading.report if line.field == "rulesFiles")
    assert line.fate == APPROXIMATED and "1 empty ones left out" in line.how
    assert fates(reading)[".roo/rules-reviewer/02-b.md"] == DROPPED


def test_rules_files_that_leave_the_rules_folder_are_a_problem():
    reading = read({".roomodes": roomodes(roo_mode(rulesFiles=[{"relativePath": "../../.bashrc", "content": "x"}]))})
    assert reading.problems == [
        ".roomodes: mode 'reviewer': rulesFiles[0]: the relativePath '../../.bashrc' leaves the rules folder."
    ]


def test_when_to_use_comes_from_when_to_use_even_when_a_description_is_set():
    reading = read({".roomodes": roomodes(roo_mode(whenToUse="Use to review.", description="Reviews code"))})
    entry = entry_of(reading, "reviewer")
    assert (entry["when_to_use"], entry["description"]) == ("Use to review.", "Reviews code")
    assert fates(reading)["whenToUse"] == fates(reading)["description"] == CARRIED


def test_without_when_to_use_the_description_is_the_when_to_use_too():
    reading = read({".roomodes": roomodes(roo_mode(whenToUse=None, description="Reviews code\nbefore merging."))})
    entry = entry_of(reading, "reviewer")
    assert entry["when_to_use"] == "Reviews code before merging."
    assert entry["description"] == "Reviews code\nbefore merging."
    line = next(line for line in reading.report if line.field == "description")
    assert line.fate == APPROXIMATED and "joined onto one line" in line.how


def test_a_long_when_to_use_keeps_its_first_sentence_and_follows_the_description_whole():
    long = "Use this mode to review pull requests. " + "It reads every changed file and comments. " * 10
    reading = read({".roomodes": roomodes(roo_mode(whenToUse=long, description="Reviews code"))})
    entry = entry_of(reading, "reviewer")
    assert entry["when_to_use"] == "Use this mode to review pull requests."
    assert entry["description"] == f"Reviews code\n\n{long}"
    assert fates(reading)["whenToUse"] == APPROXIMATED


def test_a_mode_with_neither_when_to_use_nor_description_is_a_problem_naming_it():
    reading = read({".roomodes": roomodes(roo_mode(whenToUse="  "))})
    assert reading.modes == []
    assert reading.problems == [".roomodes: mode 'reviewer': needs a whenToUse or a description: the catalog shows "
                                "every mode with a one-line when-to-use sentence."]


def test_a_name_longer_than_the_catalog_takes_is_cut_and_said():
    reading = read({".roomodes": roomodes(roo_mode(name="🚀 " + "Reviewer " * 20))})
    name = entry_of(reading, "reviewer")["display_name"]
    assert len(name) == 100 and name.startswith("🚀 Reviewer") and name.endswith("…")
    assert fates(reading)["name"] == APPROXIMATED


def test_a_slug_in_capitals_becomes_a_lower_case_key_and_is_said():
    reading = read({".roomodes": roomodes(roo_mode(slug="Code-Review"))})
    assert entry_of(reading, "code_review")["id"] == mode_id("roo", "Code-Review")
    assert fates(reading)["slug"] == APPROXIMATED


def test_the_deprecated_browser_group_is_carried():
    reading = read({".roomodes": roomodes(roo_mode(groups=["read", "browser", ["browser", {}]]))})
    assert entry_of(reading, "reviewer")["tool_group_hints"] == ["read", "browser", "browser"]
    assert fates(reading)["groups"] == CARRIED


def test_group_options_roo_code_does_not_know_are_dropped_and_said():
    reading = read({".roomodes": roomodes(roo_mode(groups=[["edit", {"fileRegex": "\\.md$", "glob": "*.md"}]]))})
    assert entry_of(reading, "reviewer")["tool_group_hints"] == ['edit {"fileRegex": "\\\\.md$"}']
    line = next(line for line in reading.report if line.field == "groups")
    assert line.fate == APPROXIMATED and "edit glob" in line.how


# The fidelity report of an import: each Roo Code field of a mode, changed alone, listed once with its fate.
FIELD_FATES = [
    ("slug", "reviewer", CARRIED), ("name", "🔍 Reviewer", CARRIED),
    ("roleDefinition", "Line one.\n\nLine two.\n", CARRIED),
    ("whenToUse", "Use to review.", CARRIED), ("whenToUse", "Use to\nreview.", APPROXIMATED),
    ("description", "Reviews code", CARRIED), ("customInstructions", "Be kind.\n", CARRIED),
    ("groups", ["read", ["edit", {"fileRegex": "\\.md$", "description": "Markdown"}]], CARRIED),
    ("groups", [["edit", {"fileRegex": "\\.md$", "other": 1}]], APPROXIMATED),
    ("source", "global", DROPPED), ("source", "project", DROPPED),
    ("rulesFiles", [{"relativePath": "a.md", "content": "Rule."}], APPROXIMATED),
    ("model", "sonnet", DROPPED), ("iconName", "eye", DROPPED),
]


@pytest.mark.parametrize("field, value, fate", FIELD_FATES)
def test_every_field_read_is_listed_once_with_its_fate(field, value, fate):
    reading = read({".roomodes": roomodes(roo_mode(**{field: value}))})
    assert reading.problems == []
    lines = [line for line in reading.report if line.field == field]
    assert len(lines) == 1 and (lines[0].path, lines[0].mode, lines[0].fate) == (".roomodes", "reviewer", fate)
    assert bool(lines[0].how) is (fate != CARRIED)


def test_a_mode_lists_exactly_the_fields_it_has():
    reading = read({".roomodes": roomodes(roo_mode(), roo_mode(slug="other", description="Other", x=1))})
    assert [line.field for line in reading.report if line.mode == "reviewer"] == \
        ["slug", "name", "roleDefinition", "whenToUse", "groups"]
    assert [line.field for line in reading.report if line.mode == "other"] == \
        ["slug", "name", "roleDefinition", "whenToUse", "description", "groups", "x"]


def test_an_unknown_field_is_dropped_with_a_guess_at_what_was_meant():
    reading = read({".roomodes": roomodes(roo_mode(whenToUSE="Use it."))})
    line = next(line for line in reading.report if line.field == "whenToUSE")
    assert (line.fate, line.how) == (DROPPED, "not a Roo Code mode field; did you mean whenToUse?")


# Bad input: problems, never exceptions, all of them at once.


@pytest.mark.parametrize("text, expected", [
    ("customModes:\n  - slug: [unclosed\n", "not valid YAML or JSON"),
    ('{"customModes": [', "not valid YAML or JSON"),
    ("customModes: !!python/object/apply:os.system [echo hi]\n", "not valid YAML or JSON"),
    ("customModes:\n  - slug: a\n    slug: b\n", "given twice"),
    ("modes: []\n", "a mapping with a customModes list"),
    ("customModes: reviewer\n", "a mapping with a customModes list"),
    ("- slug: reviewer\n", "a mapping with a customModes list"),
    ("customModes:\n  - just text\n", "customModes[0]: a mode is a mapping"),
])
def test_a_file_that_cannot_be_read_is_a_problem_naming_it(text, expected):
    reading = read({"modes/.roomodes": text})
    assert reading.modes == [] and len(reading.problems) == 1
    assert reading.problems[0].startswith("modes/.roomodes: ") and expected in reading.problems[0]


@pytest.mark.parametrize("fields, expected", [
    ({"slug": None}, "mode 'customModes[0]': slug: every Roo Code mode needs one."),
    ({"slug": "code_review"}, "mode 'code_review': slug: Roo Code takes letters, digits and '-' only."),
    ({"slug": "x" * 65}, "cannot become a mode key"),
    ({"name": None}, "mode 'reviewer': name: every Roo Code mode needs one."),
    ({"name": ""}, "mode 'reviewer': name: must not be empty."),
    ({"name": True}, "mode 'reviewer': name: must be text (in YAML, put it in quotes)."),
    ({"roleDefinition": None}, "mode 'reviewer': roleDefinition: every Roo Code mode needs one."),
    ({"description": ["x"]}, "mode 'reviewer': description: must be text."),
    ({"groups": None}, "mode 'reviewer': groups: every Roo Code mode needs a groups list (it may be empty: [])."),
    ({"groups": "read"}, "mode 'reviewer': groups: must be a list of tool groups"),
    ({"groups": ["read", "write"]}, "mode 'reviewer': groups[1]: 'write' is not one of Roo Code's tool groups "
                                    "(read, edit, command, mcp, modes)."),
    ({"groups": ["edit", ["edit", {}]]}, "mode 'reviewer': groups[1]: 'edit' is given twice"),
    ({"groups": [["edit"]]}, "mode 'reviewer': groups[0]: a group with options is a pair"),
    ({"groups": [["edit", {"fileRegex": 3}]]}, "mode 'reviewer': groups[0]: fileRegex must be text."),
    ({"groups": [["edit", {"fileRegex": "(?<name>md"}]]},
     "mode 'reviewer': groups[0]: the fileRegex '(?<name>md' is not a regular expression JavaScript takes: "
     "Unterminated group."),
    ({"rulesFiles": "a.md"}, "mode 'reviewer': rulesFiles: must be a list of {relativePath, content} mappings."),
])
def test_a_bad_mode_is_a_problem_naming_the_file_the_mode_and_the_field(fields, expected):
    reading = read({".roomodes": roomodes(roo_mode(**fields))})
    assert reading.modes == []
    [problem] = reading.problems
    assert problem.startswith(".roomodes: ") and expected in problem


def test_yaml_text_is_read_as_roo_codes_yaml_1_2_reads_it_and_numbers_are_a_problem_saying_to_quote_them():
    reading = read({".roomodes": "customModes:\n  - slug: on-off\n    name: Yes\n    roleDefinition: 2024-01-01\n"
                                 "    description: 1_000\n    whenToUse: 'yes'\n    groups: []\n"
                                 "  - slug: numbers\n    name: 12\n    roleDefinition: 1e3\n    whenToUse:\n"
                                 "    groups: []\n"})
    entry = entry_of(reading, "on_off")
    assert (entry["display_name"], entry["prompt"], entry["description"], entry["when_to_use"]) == \
        ("Yes", "2024-01-01", "1_000", "yes")
    assert reading.problems == [
        ".roomodes: mode 'numbers': name: must be text (in YAML, put it in quotes).",
        ".roomodes: mode 'numbers': roleDefinition: must be text (in YAML, put it in quotes).",
        ".roomodes: mode 'numbers': whenToUse: is empty (null); give it text, or leave the field out.",
    ]


def test_a_groups_options_are_read_as_roo_codes_yaml_1_2_reads_them():
    # description: yes is text to Roo Code's yaml package; YAML 1.1 read True, and the import refused the mode.
    reading = read({".roomodes": "customModes:\n  - slug: docs\n    name: Docs\n    roleDefinition: You write.\n"
                                 "    whenToUse: Use it for docs.\n"
                                 "    groups:\n      - [edit, {fileRegex: 1_000, description: yes}]\n"})
    assert reading.problems == []
    assert entry_of(reading, "docs")["tool_group_hints"] == ['edit {"fileRegex": "1_000", "description": "yes"}']


def test_text_that_yaml_1_2_reads_as_a_number_is_written_in_quotes():
    modes = [catalog_mode(display_name=name, key=f"m{index}") for index, name in enumerate(["1e3", "0o17", "yes"])]
    content = write_roo(modes, format_name="roo").files[0].content
    assert "name: '1e3'" in content and "name: '0o17'" in content and "name: 'yes'" in content


def test_two_modes_of_one_slug_or_one_key_in_a_file_are_a_problem():
    reading = read({".roomodes": roomodes(roo_mode(), roo_mode(), roo_mode(slug="Reviewer"))})
    assert [entry["key"] for _, entry in reading.modes] == ["reviewer"]
    assert reading.problems == [
        ".roomodes: mode 'reviewer': slug: 'reviewer' is the slug of an earlier mode of this file; Roo Code refuses a "
        "file with two modes of one slug.",
        ".roomodes: mode 'reviewer': slug: 'Reviewer' becomes the key 'reviewer', as an earlier mode's slug of this "
        "file does.",
    ]


def test_every_problem_of_every_file_is_reported_at_once_without_exceptions():
    reading = read({
        ".roomodes": roomodes(roo_mode(), roo_mode(slug="bad_slug"), roo_mode(slug="ok", groups=["read", "browse"])),
        "custom_modes.yaml": "customModes: [",
        "other.yaml": "customModes:\n  - !!python/name:os.system\n",
    })
    assert [entry["key"] for _, entry in reading.modes] == ["reviewer"]
    assert len(reading.problems) == 4
    assert {problem.split(":")[0] for problem in reading.problems} == {".roomodes", "custom_modes.yaml", "other.yaml"}


def test_an_alias_bomb_is_refused_not_expanded():
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + level)}: &{chr(98 + level)} [{', '.join([f'*{chr(97 + level)}'] * 10)}]\n" for level in range(6)
    ) + "customModes: []\n"
    reading = read({".roomodes": bomb})
    assert reading.modes == [] and "expands, through its YAML aliases" in reading.problems[0]


# Writing


def test_modes_are_written_as_one_roomodes_as_roo_code_writes_it():
    mode = catalog_mode(
        display_name="🔍 Reviewer", description="Reviews code", prompt="You review.\n\n- Be kind.\n",
        custom_instructions="Cite lines.", tool_group_hints=["read", LOOKAHEAD, "command"],
    )
    writing = write_roo([mode], format_name="roo")
    assert [file.path for file in writing.files] == [".roomodes"]
    assert writing.files[0].content == """\
customModes:
  - slug: reviewer
    name: 🔍 Reviewer
    roleDefinition: |
      You review.

      - Be kind.
    whenToUse: Use to review.
    description: Reviews code
    customInstructions: Cite lines.
    groups:
      - read
      - - edit
        - fileRegex: ^(?=.*\\/locales\\/)[^/]+\\.json$
      - command
    source: project
"""


def test_kilo_gets_a_kilocodemodes():
    writing = write_roo([catalog_mode()], format_name="kilo")
    assert [file.path for file in writing.files] == [".kilocodemodes"]
    assert yaml.safe_load(writing.files[0].content)["customModes"][0]["slug"] == "reviewer"


def test_a_key_with_underscores_becomes_a_slug_with_dashes():
    document = yaml.safe_load(write_roo([catalog_mode(key="code_review_2")], format_name="roo").files[0].content)
    assert document["customModes"][0]["slug"] == "code-review-2"


def test_instruction_lines_open_the_custom_instructions_in_the_catalogs_order():
    mode = catalog_mode(prompt="You review.", mode_instructions=["Read the diff.", "Comment."],
                        custom_instructions="Cite lines.")
    writing = write_roo([mode], format_name="roo")
    written = yaml.safe_load(writing.files[0].content)["customModes"][0]
    assert written["customInstructions"] == "Read the diff.\nComment.\n\nCite lines."
    assert fates(writing)["mode_instructions"] == APPROXIMATED


def test_a_mode_without_a_prompt_has_its_instruction_lines_as_the_role_definition():
    writing = write_roo([catalog_mode(mode_instructions=["Read the diff.", "Comment."])], format_name="roo")
    written = yaml.safe_load(writing.files[0].content)["customModes"][0]
    assert written["roleDefinition"] == "Read the diff.\nComment." and "customInstructions" not in written
    line = next(line for line in writing.report if line.field == "mode_instructions")
    assert line.fate == APPROXIMATED and "roleDefinition" in line.how


def test_a_mode_with_neither_prompt_nor_instructions_has_its_when_to_use_as_the_role_definition():
    writing = write_roo([catalog_mode()], format_name="roo")
    assert yaml.safe_load(writing.files[0].content)["customModes"][0]["roleDefinition"] == "Use to review."
    assert fates(writing)["prompt"] == APPROXIMATED


def test_group_lines_roo_code_would_refuse_the_file_for_are_left_out_and_said():
    lines = ["read", "web search", "edit", 'edit {"fileRegex": "\\\\.md$"}', 'command {"fileRegex": "("}',
             'mcp {"servers": ["github"]}', "browser", "browser"]
    writing = write_roo([catalog_mode(tool_group_hints=lines)], format_name="roo")
    groups = yaml.safe_load(writing.files[0].content)["customModes"][0]["groups"]
    assert groups == ["read", "edit", "browser", "browser"]
    line = next(line for line in writing.report if line.field == "tool_group_hints")
    assert line.fate == APPROXIMATED
    for left_out in lines[1:2] + lines[3:6]:
        assert repr(left_out) in line.how
    nothing = write_roo([catalog_mode(tool_group_hints=["web search"])], format_name="roo")
    assert fates(nothing)["tool_group_hints"] == DROPPED
    assert yaml.safe_load(nothing.files[0].content)["customModes"][0]["groups"] == []


def test_the_browser_group_roo_code_strips_as_it_reads_is_not_reported_carried():
    writing = write_roo([catalog_mode(tool_group_hints=["read", "browser"])], format_name="roo")
    assert yaml.safe_load(writing.files[0].content)["customModes"][0]["groups"] == ["read", "browser"]
    line = next(line for line in writing.report if line.field == "tool_group_hints")
    assert line.fate == APPROXIMATED and "no longer has the browser group" in line.how
    only = write_roo([catalog_mode(tool_group_hints=["browser"])], format_name="roo")
    assert fates(only)["tool_group_hints"] == DROPPED
    # Kilo's modes still take it: it becomes their bash permission.
    assert fates(write_roo([catalog_mode(tool_group_hints=["read", "browser"])], format_name="kilo"))[
        "tool_group_hints"] == CARRIED


def test_kilo_which_keeps_the_browser_group_is_not_written_or_read_it_twice():
    """Only Roo Code strips browser as it reads: Kilo takes it as a group, so twice is a group given twice, which
    makes it refuse the whole file."""
    writing = write_roo([catalog_mode(tool_group_hints=["read", "browser", "browser"])], format_name="kilo")
    assert yaml.safe_load(writing.files[0].content)["customModes"][0]["groups"] == ["read", "browser"]
    line = next(line for line in writing.report if line.field == "tool_group_hints")
    assert line.fate == APPROXIMATED and "'browser'" in line.how
    reading = read({".kilocodemodes": roomodes(roo_mode(groups=["browser", "browser"]))}, format_name="kilo")
    assert reading.modes == []
    assert "groups[1]: 'browser' is given twice" in reading.problems[0]


# The fidelity report of an export: each catalog field the format has no place for, given, is one dropped line.
DROPPED_FIELDS = [
    ("behavior_hints", ["Be terse."]), ("human_role_hints", ["reviewer"]), ("example_utterances", ["review this"]),
    ("associated_tool_ids", ["agent_review"]), ("rag_scope_hints", ["src/"]), ("strong_signals", ["review"]),
    ("weak_signals", ["diff"]), ("switch_targets", ["code"]), ("llm_can_enter", False), ("entry_confirmation", "user"),
    ("status", "experimental"), ("version", "v2"), ("is_default", True),
]


@pytest.mark.parametrize("field, value", DROPPED_FIELDS)
def test_every_catalog_field_roo_code_has_no_place_for_is_reported_dropped_once(field, value):
    writing = write_roo([catalog_mode(**{field: value})], format_name="roo")
    lines = [line for line in writing.report if line.field == field]
    assert len(lines) == 1 and (lines[0].path, lines[0].mode, lines[0].fate) == (".roomodes", "reviewer", DROPPED)
    assert lines[0].how == "Roo Code has no field for it"


def test_a_mode_at_its_defaults_reports_only_what_it_writes():
    writing = write_roo([catalog_mode(prompt="You review.", tool_group_hints=["read"])], format_name="roo")
    assert fates(writing) == {"key": CARRIED, "display_name": CARRIED, "prompt": CARRIED, "when_to_use": CARRIED,
                              "tool_group_hints": CARRIED}
    assert all(fidelity_text(line).startswith(".roomodes: mode 'reviewer': ") for line in writing.report)


# Round trips: what write_roo writes, read_roo reads back the same, for every field the format carries.
CARRIED_FIELDS = ("key", "display_name", "prompt", "when_to_use", "description", "custom_instructions",
                  "tool_group_hints")
ROUND_TRIPS = [
    catalog_mode(prompt=MARKDOWN_PROMPT, tool_group_hints=["read", "edit", "command", "mcp", "modes"]),
    catalog_mode(key="docs_writer", display_name="📝 Documentation Writer ✍️", prompt="  Indented first line.\n\n\n",
                 description="Writes docs.\n\nLong form:\n  - guides\n", custom_instructions="Short.\r\nSentences.",
                 tool_group_hints=["read", LOOKBEHIND, "mcp"]),
    catalog_mode(key="translate", prompt="Translate.", when_to_use="Use for i18n: 'quotes', \"doubles\", #hash, a: b",
                 tool_group_hints=[LOOKAHEAD, 'command {"description": "Only npm"}', "browser"]),
    catalog_mode(key="x", display_name="yes", prompt="null", when_to_use="2024-01-01", description="12",
                 custom_instructions="- a list?\n- yes"),
    catalog_mode(key="breaks", display_name="1e3", prompt="line\u2028separator", description="next\x85line\nand more",
                 custom_instructions="para\u2029graph"),
]


@pytest.mark.parametrize("format_name", ["roo", "kilo"])
@pytest.mark.parametrize("original", ROUND_TRIPS, ids=lambda mode: mode.key)
def test_a_written_mode_reads_back_with_the_same_carried_fields(original, format_name):
    writing = write_roo([original], format_name=format_name)
    reading = read_roo(writing.files, format_name=format_name)
    assert reading.problems == []
    [(path, entry)] = reading.modes
    assert path == writing.files[0].path
    assert {name: entry[name] for name in CARRIED_FIELDS} == {name: getattr(original, name) for name in CARRIED_FIELDS}
    assert entry["id"] == mode_id(format_name, original.key.replace("_", "-"))


def roo_code_cleaned(text: str) -> str:
    """A mode file as Roo Code reads it: CustomModesManager.cleanInvisibleCharacters runs over it before YAML does."""
    for characters, replacement in (("\u00a0", " "), ("\u200b\u200c\u200d", ""), ("\u2018\u2019", "'"),
                                    ("\u201c\u201d", '"'), ("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-")):
        text = re.sub(f"[{characters}]", replacement, text)
    return text


def test_curly_quotes_dashes_and_invisible_spaces_reach_roo_code_as_written():
    original = catalog_mode(display_name="👩\u200d💻 Reviewer", prompt="Don’t guess — ask.\n\n“Then” act\u00a0now.",
                            when_to_use="Use it – for reviews.", custom_instructions="‘a’ \u2212 b")
    writing = write_roo([original], format_name="roo")
    content = writing.files[0].content
    assert roo_code_cleaned(content) == content  # nothing for Roo Code to rewrite: the characters are escaped
    [(_, entry)] = read_roo(writing.files, format_name="roo").modes
    assert {name: entry[name] for name in CARRIED_FIELDS} == {name: getattr(original, name) for name in CARRIED_FIELDS}
    assert set(fates(writing).values()) == {CARRIED}


def test_a_repository_with_rules_reads_writes_and_reads_back_the_same():
    first = read({".roomodes": ARCHITECT + ROOMODES.removeprefix("customModes:\n"),
                  ".roo/rules-docs-writer/01-style.md": ROO_RULES, ".roo/rules-api-architect/a.md": "REST.\n"})
    assert first.problems == []
    modes = [AgentMode(**entry) for _, entry in first.modes]
    again = read_roo(write_roo(modes, format_name="roo").files, format_name="roo")
    assert again.problems == [] and again.modes == first.modes


def test_a_mode_file_is_read_as_roo_code_reads_it_curly_quotes_dashes_and_invisible_spaces_rewritten():
    # Roo Code rewrites these characters in the whole file before YAML reads it (cleanInvisibleCharacters): its
    # model never saw "Don’t" or the quotes around “Docs”, and an export of what the file said would now show them.
    content = ("customModes:\n  - slug: docs\n    name: “Docs”\n    roleDefinition: Don’t guess — ask\u00a0first.\n"
               "    whenToUse: Use it for docs\u200b.\n    groups: [read]\n")
    reading = read({".roomodes": content})
    entry = entry_of(reading, "docs")
    assert (entry["display_name"], entry["prompt"], entry["when_to_use"]) == ("Docs", "Don't guess - ask first.",
                                                                             "Use it for docs.")
    assert fates(reading) | {"slug": CARRIED} == {"slug": CARRIED, "name": APPROXIMATED, "roleDefinition": APPROXIMATED,
                                                  "whenToUse": APPROXIMATED, "groups": CARRIED}
    assert entry == entry_of(read_roo(write_roo([AgentMode(**entry)], format_name="roo").files, format_name="roo"),
                             "docs")


def test_json_that_the_rewriting_breaks_is_read_as_written_as_roo_code_falls_back_to_it():
    content = roomodes(roo_mode(slug="docs", name="Say “hi”"))
    assert entry_of(read({".roomodes": content}), "docs")["display_name"] == "Say “hi”"


def test_yaml_that_the_rewriting_breaks_is_refused_as_roo_code_refuses_it():
    reading = read({".roomodes": "customModes:\n  - slug: docs\n    name: —\n    roleDefinition: R\n"
                                 "    whenToUse: W\n    groups: [read]\n"})
    assert reading.modes == [] and len(reading.problems) == 1


@pytest.mark.parametrize("source", ["banana", "organization", None, 1])
def test_a_source_roo_code_refuses_the_whole_file_for_is_a_problem(source):
    reading = read({".roomodes": roomodes(roo_mode(source=source) if source is not None else
                                          {**roo_mode(), "source": None})})
    assert reading.modes == [] and reading.problems == [
        ".roomodes: mode 'reviewer': source: Roo Code takes 'global' or 'project' only, and refuses the whole file "
        "for any other."]


def test_kilo_takes_an_organization_source_and_knows_its_own_fields():
    mode = roo_mode(source="organization", iconName="codicon-eye", preferredModelId="claude")
    reading = read({".kilocodemodes": roomodes(mode)}, format_name="kilo")
    assert reading.problems == []
    lines = {line.field: line for line in reading.report}
    assert lines["iconName"].fate == DROPPED and "not a Kilo mode field" not in lines["iconName"].how
    assert lines["preferredModelId"].fate == DROPPED and "the model it prefers" in lines["preferredModelId"].how
    assert "organization" in lines["source"].how


def test_a_modes_rules_are_written_back_to_its_rules_folder_where_roo_code_reads_them():
    # Written into customInstructions, they reached Roo Code twice once the export went back to the repository that
    # still holds the rules folder, and each import of it appended them again.
    first = read({".roomodes": ROOMODES, ".roo/rules-docs-writer/01-style.md": ROO_RULES,
                  ".roo/rules-docs-writer/nested/b.md": "Cite sources.\n"})
    writing = write_roo([AgentMode(**entry) for _, entry in first.modes], format_name="roo")
    files = {file.path: file.content for file in writing.files}
    assert files[".roo/rules-docs-writer/01-style.md"] == "Use the active voice.\n"
    assert files[".roo/rules-docs-writer/nested/b.md"] == "Cite sources.\n"
    assert yaml.safe_load(files[".roomodes"])["customModes"][0]["customInstructions"] == "Keep sentences short."
    again = read_roo(writing.files, format_name="roo")
    assert again.problems == [] and again.modes == first.modes
    line = next(line for line in writing.report if line.field == "custom_instructions")
    assert line.fate == CARRIED and ".roo/rules-docs-writer/" in line.how


@pytest.mark.parametrize("instructions", [
    "Be brief.\n\n# Rules from .roo/rules-reviewer/../../outside.md:\nNo.",  # a path that leaves the rules folder
    "Be brief.\n\n# Rules from .roo/rules-other/a.md:\nNot this mode's.",
    "# Rules from .roo/rules-reviewer/b.md:\nB.\n\n# Rules from .roo/rules-reviewer/a.md:\nA.",  # not Roo Code's order
    "Be brief.\n\n# Rules from .roo/rules-reviewer/a.md:\n  Indented.",  # a file's text is trimmed as it is read
])
def test_instructions_that_an_import_of_rules_files_would_not_give_back_stay_in_custom_instructions(instructions):
    writing = write_roo([catalog_mode(prompt="You review.", custom_instructions=instructions)], format_name="roo")
    assert [file.path for file in writing.files] == [".roomodes"]
    assert yaml.safe_load(writing.files[0].content)["customModes"][0]["customInstructions"] == instructions


def test_a_file_regex_the_rewriting_changes_is_reported_approximated():
    # An en dash in a character class becomes '-', a range: the regex Roo Code runs is not the one the file shows.
    content = ("customModes:\n  - slug: docs\n    name: Docs\n    roleDefinition: R\n    whenToUse: W\n"
               "    groups:\n      - - edit\n        - fileRegex: '[a\u2013z]+\\.md$'\n")
    reading = read({".roomodes": content})
    assert entry_of(reading, "docs")["tool_group_hints"] == ['edit {"fileRegex": "[a-z]+\\\\.md$"}']
    assert fates(reading)["groups"] == APPROXIMATED


def test_a_users_custom_modes_yaml_that_the_rewriting_breaks_is_refused_though_it_is_json():
    # Roo Code falls back to the file as written for a workspace's .roomodes only: a user's custom_modes.yaml whose
    # rewritten text is not YAML gives it no modes, whatever JSON the file held.
    content = roomodes(roo_mode(slug="docs", name="Say “hi”"))
    reading = read({"custom_modes.yaml": content})
    assert reading.modes == [] and len(reading.problems) == 1
