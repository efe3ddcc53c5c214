"""
manage.py run as an operator runs it, in a fresh process: missing or bad configuration, and a database that
cannot be used, end any command with one line that says what to set or run, and exit code 1, never a traceback.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..servers import scratch_database

ROOT = Path(__file__).resolve().parents[2]


def manage(*args, env):
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    "command",
    [
        ["list_modes"],
        ["export_modes"],
        ["import_modes", "modes.yaml"],
        ["mode_prompt"],
        ["invoke_tool", "agent_hello_world", "--user", "admin"],
        ["create_local_admin"],
        ["create_agent_user", "planner"],
        ["check"],
        ["migrate"],
    ],
    ids=lambda command: command[0],
)
def test_a_command_without_debug_or_secret_key_says_what_to_set_in_one_line(command):
    result = manage(*command, env={})
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        "Configuration error: SECRET_KEY must be set when DEBUG is off. For a local run, set DEBUG=1.\n"
    )


@pytest.mark.parametrize(
    "variables, message",
    [
        (
            {"LOGIN_FAILURE_LIMIT": "many"},
            "Configuration error: LOGIN_FAILURE_LIMIT must be a whole number, 0 or more; it is 'many'.\n",
        ),
        (
            {"API_MAX_BODY_BYTES": "-1"},
            "Configuration error: API_MAX_BODY_BYTES must be a whole number, 0 or more; it is '-1'.\n",
        ),
        (
            {"API_MAX_BODY_BYTES": "٣"},  # an Arabic-Indic three: a digit, but not ASCII
            "Configuration error: API_MAX_BODY_BYTES must be a whole number, 0 or more; it is '٣'.\n",
        ),
        (
            {"API_MAX_BODY_BYTES": "9" * 5000},  # past what int() reads
            f"Configuration error: API_MAX_BODY_BYTES must be a whole number, 0 or more; it is '{'9' * 5000}'.\n",
        ),
        (
            {"DATABASE_URL": "mongodb://admin:hunter2@db.example.com/modes"},
            "Configuration error: DATABASE_URL is not a database URL this service can use (UnknownSchemeError); "
            "write it as postgres://user:password@host:5432/name, or leave it unset for SQLite.\n",
        ),
    ],
    ids=["not-a-number", "negative", "not-ascii", "thousands-of-digits", "unknown-scheme"],
)
def test_a_bad_setting_is_named_in_one_line(variables, message):
    result = manage("list_modes", env={"DEBUG": "1", **variables})
    assert (result.returncode, result.stdout, result.stderr) == (1, "", message)
    assert "hunter2" not in result.stderr


def test_a_database_without_tables_says_to_migrate(tmp_path):
    result = manage("list_modes", env={"DEBUG": "1", "DATABASE_URL": f"sqlite:///{tmp_path / 'new.sqlite3'}"})
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == "Database error: no such table: modes_cataloghead (run 'manage.py migrate' first)\n"


def test_a_database_that_does_not_exist_says_to_check_database_url():
    url = "postgres://postgres@127.0.0.1:5432/aptix_no_such_database"
    result = manage("list_modes", env={"DEBUG": "1", "DATABASE_URL": url})
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.startswith("Database error: connection failed: ")
    assert result.stderr.endswith(
        'database "aptix_no_such_database" does not exist (check DATABASE_URL and that the database server is up)\n'
    )
    assert result.stderr.count("\n") == 1


def test_bad_input_to_a_command_is_one_line_too(tmp_path):
    result = manage("import_modes", str(tmp_path / "missing.yaml"), env={"DEBUG": "1", "DATABASE_URL": "sqlite://:memory:"})
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == f"CommandError: {tmp_path / 'missing.yaml'}: cannot be read (No such file or directory).\n"


def test_traceback_is_still_there_when_asked_for():
    result = manage("list_modes", "--traceback", env={})
    assert result.returncode == 1
    assert result.stderr.startswith("Traceback (most recent call last):")


@pytest.mark.parametrize("command", [["create_token", "u\udcff", "--name", "x"], ["import_modes", "/tmp/m\udcff.yaml"]])
def test_an_argument_that_is_not_utf8_is_refused_in_one_line(command):
    # Python keeps its bytes as lone surrogates: a user name like it was a traceback from the database driver.
    result = manage(*command, env={"DEBUG": "1", "DATABASE_URL": "sqlite://:memory:"})
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == f"Arguments must be UTF-8 text; {os.fsencode(command[1])!r} is not.\n"


@pytest.mark.either_database(reason="what a command prints of a file name is the same on both")
def test_a_file_name_that_is_not_utf8_is_printed_as_its_bytes_not_a_traceback(tmp_path):
    agents = tmp_path / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "x\udcff.md").write_text("---\nname: xff\ndescription: Use this mode for x.\n---\nDo x.\n")
    with scratch_database() as env:
        # As under a UTF-8 locale, whose streams refuse lone surrogates.
        result = subprocess.run(
            [sys.executable, "manage.py", "import_modes", str(tmp_path), "--dry-run"], cwd=ROOT,
            env={**env, "PYTHONIOENCODING": "utf-8"}, capture_output=True, timeout=60,
        )
    assert (result.returncode, result.stderr) == (0, b"")
    assert b".claude/agents/x\xff.md: mode 'xff': name: carried" in result.stdout  # the name's own bytes


def test_a_refused_write_is_not_called_a_connection_problem():
    write_twice = (
        "from django.db import connection; cursor = connection.cursor(); "
        "cursor.execute('CREATE TEMP TABLE t (a int PRIMARY KEY)'); "
        "cursor.execute('INSERT INTO t VALUES (1)'); cursor.execute('INSERT INTO t VALUES (1)')"
    )
    result = manage("shell", "-v0", "-c", write_twice, env={"DEBUG": "1", "DATABASE_URL": "sqlite://:memory:"})
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == "Database error: UNIQUE constraint failed: t.a\n"
