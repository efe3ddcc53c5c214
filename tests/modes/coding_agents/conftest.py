"""A repository holding modes in every coding agent's format, written the way those tools write them."""

import pytest

ROOMODES = """\
customModes:
  - slug: docs-writer
    name: 📝 Documentation Writer
    roleDefinition: |
      You are Roo, a technical writer.

      You write docs that people finish reading:
        - short sentences
        - one idea per paragraph
    whenToUse: Use this mode for writing and editing documentation.
    description: Write and edit docs
    customInstructions: |-
      Keep sentences short.
    groups:
      - read
      - - edit
        - fileRegex: (?<!draft)\\.(md|mdx)$
          description: Markdown files only
    source: project
"""
ROO_RULES = "Use the active voice.\n"
KILOCODEMODES = """\
{
  "customModes": [
    {
      "slug": "translate",
      "name": "🌐 Translate",
      "roleDefinition": "You are Kilo Code, a linguist who translates the interface.",
      "whenToUse": "Use this mode for translating the user interface's strings.",
      "groups": ["read", ["edit", {"fileRegex": "(?=.*locales/).*\\\\.json$", "description": "Locale files"}]]
    }
  ]
}
"""
OPENCODE_AGENT = """\
---
description: Reviews code for quality and best practices
mode: subagent
model: anthropic/claude-sonnet-4-20250514
temperature: 0.1
tools:
  write: false
  edit: false
  bash: false
---

You are in code review mode. Focus on:

- Code quality and best practices
- Potential bugs and edge cases

```js
// a fence, kept as written
```
"""
CLAUDE_AGENT = """\
---
name: test-runner
description: Use proactively to run tests and fix failures.
tools: Read, Edit, Bash
model: sonnet
---

You are a test automation expert.

When you see code changes, run the tests.
"""

REPOSITORY = {
    ".roomodes": ROOMODES,
    ".roo/rules-docs-writer/01-style.md": ROO_RULES,
    ".kilocodemodes": KILOCODEMODES,
    ".opencode/agent/review.md": OPENCODE_AGENT,
    ".claude/agents/test-runner.md": CLAUDE_AGENT,
    "src/app.py": "print('not a mode file')\n",
}
# In the order an import creates them: by the paths of their files.
IMPORTED_KEYS = ["test_runner", "translate", "review", "docs_writer"]


def entry_of(reading, key):
    return next(entry for _, entry in reading.modes if entry["key"] == key)


def fates(reading_or_writing, mode=None):
    return {line.field: line.fate for line in reading_or_writing.report if mode is None or line.mode == mode}


def write_tree(root, files: dict) -> None:
    for path, content in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(content, encoding="utf-8")


@pytest.fixture
def repository(tmp_path):
    """A repository's folder with modes in all four formats, and a file that is not one."""
    root = tmp_path / "repository"
    write_tree(root, REPOSITORY)
    return root
