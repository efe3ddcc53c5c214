"""
The systemd unit shipped in deploy/ is one systemd accepts (`systemd-analyze verify`, with the project's path
where the unit has /srv/aptix-modes), and it runs the serve script as a user of its own, restarts it when it
fails, reloads it with SIGHUP and takes the settings from a file. The serve script starts with its output on a
socket, as systemd hands it the journal, nginx's access log reaches it, and a stop is no failure.
"""

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import requests

from ..servers import ROOT, START_TIMEOUT, free_port, production_env, scratch_database

pytestmark = pytest.mark.either_database(reason="the unit is the same on either database")
UNIT = ROOT / "deploy" / "aptix-modes.service"
INSTALLED_AT = "/srv/aptix-modes"


def directives() -> dict:
    """The unit's directives, section.Key: value (each is given once)."""
    found, section = {}, ""
    for line in UNIT.read_text().splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
        elif line and not line.startswith("#"):
            key, value = line.split("=", 1)
            assert f"{section}.{key}" not in found, f"{key} given twice"
            found[f"{section}.{key}"] = value
    return found


@pytest.mark.skipif(
    shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed (apt-get install systemd)"
)
def test_systemd_accepts_the_unit(tmp_path):
    unit = tmp_path / UNIT.name
    unit.write_text(UNIT.read_text().replace(INSTALLED_AT, str(ROOT)))
    verified = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", str(unit)], capture_output=True, text=True, timeout=60
    )
    # verify answers 0 even for a directive it ignores; what it says is the finding.
    assert (verified.returncode, verified.stdout + verified.stderr) == (0, "")


def test_the_unit_runs_the_serve_script_as_a_user_restarts_it_and_reloads_it_with_sighup():
    unit = directives()
    assert unit["Service.ExecStart"] == f"{INSTALLED_AT}/deploy/serve"
    assert unit["Service.ExecReload"] == "/bin/kill -HUP $MAINPID"
    assert unit["Service.Restart"] == "on-failure"
    assert unit["Service.User"] not in ("root", "0")
    assert unit["Service.EnvironmentFile"].startswith("/etc/")
    assert unit["Service.KillMode"] == "mixed"  # SIGTERM to deploy/serve, which stops nginx and the app itself


@contextlib.contextmanager
def unit_serving(journal):
    """The serve script as the unit starts it (itself, from the project's folder), its output on journal, answering
    on its port; yields the process and the port. Stopped afterwards as systemd stops it: SIGTERM to the script
    alone (KillMode=mixed), which stops the rest, then SIGKILL to whatever is left."""
    port = free_port()
    with scratch_database() as env:
        server = subprocess.Popen(
            ["deploy/serve"], cwd=ROOT, env={**production_env(env), "PORT": str(port), "WORKERS": "1"},
            stdout=journal, stderr=journal, start_new_session=True,
        )
        journal.close()
        try:
            deadline = time.monotonic() + START_TIMEOUT
            while server.poll() is None and time.monotonic() < deadline:
                try:
                    requests.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
                    break
                except (requests.ConnectionError, requests.Timeout):
                    time.sleep(0.2)
            assert server.poll() is None, "the serve script did not start"
            yield server, port
        finally:
            server.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                server.wait(timeout=30)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=10)


def test_the_serve_script_serves_and_logs_with_its_output_on_a_socket_as_systemd_gives_it():
    # systemd's StandardOutput=journal is a stream socket, which no process can open by a path (/dev/stdout).
    journal, reader = socket.socketpair()
    reader.settimeout(10)  # nginx writes its access log at least once a second
    logged = b""
    try:
        with unit_serving(journal) as (server, port):
            assert requests.get(f"http://127.0.0.1:{port}/healthz", timeout=10).status_code == 200
            while b'"GET /healthz HTTP/1.1" 200' not in logged:
                chunk = reader.recv(65536)
                assert chunk, logged.decode(errors="replace")  # not closed before the line came
                logged += chunk
    except AssertionError:
        reader.settimeout(1)
        with contextlib.suppress(OSError):
            logged += reader.recv(65536)
        raise AssertionError(logged.decode(errors="replace")) from None
    # It exits 143 on SIGTERM, as a shell does: `systemctl stop` must not leave the unit failed.
    assert str(server.returncode) in directives()["Service.SuccessExitStatus"].split()


def test_the_serve_script_exits_when_nginx_dies_for_systemd_to_start_it_again_leaving_the_port_free():
    journal, reader = socket.socketpair()
    with unit_serving(journal) as (server, port):
        [master] = [
            pid for pid in map(int, subprocess.run(
                ["pgrep", "-P", str(server.pid)], capture_output=True, text=True, timeout=10
            ).stdout.split())
            if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"nginx: master")
        ]
        os.kill(master, signal.SIGKILL)
        assert server.wait(timeout=15) not in (0, 143)  # a failure: Restart=on-failure starts it again
        # nginx's workers outlive their master: one left would hold the port, answering every request 503, and the
        # script started again could not listen on it. (Whatever is left, unit_serving ends with the script's group.)
        with pytest.raises(requests.ConnectionError):
            requests.get(f"http://127.0.0.1:{port}/healthz", timeout=5)
