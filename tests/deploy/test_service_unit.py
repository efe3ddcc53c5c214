"""
The systemd unit shipped in deploy/ is one systemd accepts (`systemd-analyze verify`, with the project's path
where the unit has /srv/aptix-modes), and it runs the serve script as a user of its own, restarts it when it
fails, reloads it with SIGHUP and takes the settings from a file.
"""

import shutil
import subprocess

import pytest

from ..servers import ROOT

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
