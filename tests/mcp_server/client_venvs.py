"""
The virtualenvs the MCP client tests run their clients in: one per pin file tests/mcp_server/mcp_clients/requirements-<name>.txt,
built with pip from PyPI the first time (a minute or two) and cached outside the checkout, in
~/.cache/aptix-modes/mcp-clients/<name>-<hash of the pins and the Python>, so that later runs, and a fresh clone
on the same machine, reuse it. A changed pin file is a new hash, so a new virtualenv; old ones are left for
whoever clears the cache.
"""

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

PINS = Path(__file__).resolve().parent / "mcp_clients"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "aptix-modes" / "mcp-clients"
# The interpreter the suite's own virtualenv was made from: a client venv made from the suite's venv would see
# the suite's packages through it.
BASE_PYTHON = Path(getattr(sys, "_base_executable", sys.executable))
BUILD_TIMEOUT = 900
COMPLETE = ".complete"  # written last: a venv without it was interrupted and is built again


def client_python(name: str) -> Path:
    """The Python of the virtualenv for requirements-<name>.txt, built first if no cached one has these pins."""
    pins = PINS / f"requirements-{name}.txt"
    python_version = subprocess.run(
        [BASE_PYTHON, "-c", "import sys; print(sys.version)"], check=True, capture_output=True, text=True
    ).stdout
    digest = hashlib.sha256(f"{BASE_PYTHON}\n{python_version}\n{pins.read_text()}".encode()).hexdigest()[:16]
    venv = CACHE / f"{name}-{digest}"
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{name}.lock", "w") as lock:  # another test process may be building the same one
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (venv / COMPLETE).exists():
            _build(venv, pins)
    return venv / "bin" / "python"


def _build(venv: Path, pins: Path) -> None:
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([BASE_PYTHON, "-m", "venv", venv], check=True, timeout=120)
    pip = [venv / "bin" / "python", "-m", "pip", "--disable-pip-version-check", "--quiet"]
    try:
        subprocess.run([*pip, "install", "-r", pins], check=True, timeout=BUILD_TIMEOUT, capture_output=True, text=True)
        subprocess.run([*pip, "check"], check=True, timeout=120, capture_output=True, text=True)
    except subprocess.CalledProcessError as error:
        raise RuntimeError(f"pip could not build the client venv {venv.name}:\n{error.stdout}\n{error.stderr}") from None
    (venv / COMPLETE).touch()
