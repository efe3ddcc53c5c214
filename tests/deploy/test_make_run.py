"""`make run` serves on HOST:PORT as `make serve` does, so a newcomer whose port 8000 is taken can still start it."""

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def make_run_commands(*variables: str) -> str:
    """What `make run` would run (make -n: nothing is run, installed or served)."""
    env = {name: value for name, value in os.environ.items() if name not in {"HOST", "PORT", "MAKEFLAGS", "MFLAGS"}}
    return subprocess.run(
        ["make", "-n", "--no-print-directory", "run", *variables], cwd=ROOT, env=env, capture_output=True, text=True,
        check=True,
    ).stdout


def test_make_run_serves_on_127_0_0_1_8000_by_default():
    assert "manage.py runserver 127.0.0.1:8000" in make_run_commands()


def test_make_run_takes_the_port_and_host_make_serve_takes():
    assert "manage.py runserver 127.0.0.1:8765" in make_run_commands("PORT=8765")
    assert "manage.py runserver 0.0.0.0:8001" in make_run_commands("HOST=0.0.0.0", "PORT=8001")
