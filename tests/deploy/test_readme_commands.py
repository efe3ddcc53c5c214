"""The README's commands table names commands that exist: the docs an admin follows in the first hour."""

import re
from pathlib import Path

from django.core.management import get_commands

README = Path(__file__).resolve().parents[2] / "README.md"


def commands_in_the_table() -> list[str]:
    section = README.read_text(encoding="utf-8").split("## Commands", 1)[1].split("\n### ", 1)[0]
    return re.findall(r"^\| `([a-z_]+)", section, re.M)


def test_every_command_the_readme_lists_exists():
    listed = commands_in_the_table()
    assert {"changepassword", "create_token", "revoke_tokens", "create_agent_user", "import_modes"} <= set(listed)
    assert sorted(set(listed) - set(get_commands())) == []
