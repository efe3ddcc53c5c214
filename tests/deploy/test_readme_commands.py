"""The docs' commands tables name commands that exist: the docs an admin follows in the first hour."""

import re
from pathlib import Path

from django.core.management import get_commands

ROOT = Path(__file__).resolve().parents[2]
# The files whose "## Commands" section holds a table of commands, by topic.
COMMAND_TABLES = [ROOT / "docs" / "catalog.md", ROOT / "docs" / "rest.md"]


def commands_in_the_tables() -> list[str]:
    listed = []
    for doc in COMMAND_TABLES:
        section = doc.read_text(encoding="utf-8").split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
        listed += re.findall(r"^\| `([a-z_]+)", section, re.M)
    return listed


def test_every_command_the_docs_list_exists():
    listed = commands_in_the_tables()
    assert {"changepassword", "create_token", "revoke_tokens", "create_agent_user", "import_modes"} <= set(listed)
    assert sorted(set(listed) - set(get_commands())) == []
