"""
What `make serve` refuses before anything starts, for any user it is started as: a setting the app cannot use, or
a database it cannot reach, is said in the one line a management command says it in (manage.py), not a traceback.
Nothing is served, so each costs one load of the settings.
"""

import os
import re
import subprocess
import sys

from ..servers import ROOT, free_port, production_env

# PostgreSQL where none listens: nothing on disk for the app's user to write, whatever the suite's database.
UNREACHABLE = {"DATABASE_URL": f"postgres://postgres@127.0.0.1:{free_port()}/aptix_modes"}


def refusal(env) -> list[str]:
    """What make serve writes to stderr as it refuses to start (it must), make's own last line left out ("make: ***",
    or "make[2]: ***" under make test)."""
    finished = subprocess.run(
        ["make", "-s", "serve", f"PORT={free_port()}", f"PYTHON={sys.executable}"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )
    assert finished.returncode != 0
    return [line for line in finished.stderr.splitlines() if not re.match(r"make(\[\d+\])?: \*\*\*", line)]


def test_a_setting_the_app_cannot_use_is_refused_in_one_line():
    env = production_env(os.environ, **UNREACHABLE, TOOL_INVOKE_RATE="lots")
    assert refusal(env) == [
        "Configuration error: TOOL_INVOKE_RATE must be requests per sec, min, hour or day, as 120/min; it is 'lots'."
    ]


def test_a_database_out_of_reach_at_start_is_refused_in_one_line_naming_what_to_check():
    [line] = refusal(production_env(os.environ, **UNREACHABLE))
    assert line.startswith("Database error: connection failed: ") and line.endswith(
        "(check DATABASE_URL and that the database server is up)"
    ), line
