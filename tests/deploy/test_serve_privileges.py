"""
`make serve` started as root (as this machine's sessions and CI run it): Granian and nginx's workers run as
SERVE_USER (nobody), the app's socket and its folder are that user's alone, nginx's configuration is out of
that user's reach, and a client cannot make the app believe it came over HTTPS (nginx sets X-Forwarded-Proto
itself). One live server, on a scratch database of the suite's kind; and what it refuses before starting
anything (root as SERVE_USER, a SQLite folder that user cannot write, a project it could change) is said in one line.
"""

import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import requests

from ..servers import ROOT, SERVE_USER, free_port, production_env, scratch_database, serving

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="make serve drops privileges only when started as root")

# Another unprivileged user of every Debian system: a local user who is not the app's.
OTHER_USER = "daemon"


@pytest.fixture(scope="module")
def served():
    # Behind a TLS proxy that sets the header: the app believes X-Forwarded-Proto, and redirects plain HTTP.
    with scratch_database() as env:
        settings = production_env(env, SECURE_PROXY_SSL_HEADER="1", SECURE_SSL_REDIRECT="1")
        with serving("make-serve", settings, "WORKERS=1") as server:
            yield server


def session_processes(leader: int) -> dict[int, str]:
    """The command line of every process of the session that `leader` started, by pid."""
    processes = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()  # after the command's name
            if int(fields[3]) == leader:
                processes[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (FileNotFoundError, ProcessLookupError):  # exited meanwhile
            continue
    return processes


def status(pid: int, field: str) -> int:
    """The first number of a field of /proc/<pid>/status (Uid: the real user id)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} line for {pid}")


def runtime_folder(processes) -> Path:
    master = next(command for command in processes.values() if command.startswith("nginx: master process"))
    return Path(master.split(" -c ")[1].split()[0]).parent


def test_the_app_and_nginxs_workers_run_as_serve_user_and_only_nginxs_master_as_root(served):
    processes = session_processes(served.process.pid)
    app = [pid for pid, command in processes.items() if "granian" in command and "setpriv" not in command]
    workers = [pid for pid, command in processes.items() if command.startswith("nginx: worker process")]
    master = [pid for pid, command in processes.items() if command.startswith("nginx: master process")]
    assert len(app) == 2 and len(workers) == 1 and len(master) == 1, processes  # Granian's main and 1 worker
    serve_uid = pwd.getpwnam(SERVE_USER).pw_uid
    assert {pid: status(pid, "Uid") for pid in app + workers} == {pid: serve_uid for pid in app + workers}
    assert {pid: status(pid, "NoNewPrivs") for pid in app} == {pid: 1 for pid in app}  # no setuid way back up
    assert status(master[0], "Uid") == 0  # to bind the port; it serves no request


def test_the_apps_socket_and_its_folder_are_serve_users_alone(served):
    run = runtime_folder(session_processes(served.process.pid))
    serve_uid = pwd.getpwnam(SERVE_USER).pw_uid
    (socket_path,) = (run / "app").glob("app-*.sock")  # one per generation of the app; a reload starts another
    socket_stat, folder_stat = socket_path.stat(), socket_path.parent.stat()
    assert stat.S_ISSOCK(socket_stat.st_mode)
    assert (socket_stat.st_uid, stat.S_IMODE(socket_stat.st_mode)) == (serve_uid, 0o600)
    assert (folder_stat.st_uid, stat.S_IMODE(folder_stat.st_mode)) == (serve_uid, 0o700)
    # Another local user cannot reach the app past nginx (to forge X-Forwarded-For, say).
    connect = "import socket, sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])"
    other = subprocess.run(
        ["setpriv", f"--reuid={OTHER_USER}", f"--regid={OTHER_USER}", "--clear-groups",
         sys.executable, "-c", connect, str(socket_path)],
        capture_output=True, text=True, timeout=30,
    )
    assert other.returncode != 0 and "PermissionError" in other.stderr


def test_nginxs_configuration_is_out_of_the_app_users_reach(served):
    run = runtime_folder(session_processes(served.process.pid))
    for path in (run, run / "nginx.conf", run / "nginx.pid"):
        mode = path.stat()
        assert mode.st_uid == 0 and stat.S_IMODE(mode.st_mode) & 0o022 == 0, path
    as_serve_user = ["setpriv", f"--reuid={SERVE_USER}", f"--regid={pwd.getpwnam(SERVE_USER).pw_gid}", "--clear-groups"]
    assert subprocess.run([*as_serve_user, "test", "-w", str(run)], timeout=30).returncode == 1


def test_a_client_claiming_https_is_still_redirected_to_https(served):
    claimed = requests.get(
        f"{served.base}/healthz", headers={"X-Forwarded-Proto": "https"}, allow_redirects=False, timeout=10
    )
    assert (claimed.status_code, claimed.headers["Location"]) == (301, f"https://127.0.0.1:{served.port}/healthz")


def refusal(env, *arguments) -> str:
    """What make serve says when it refuses to start (it must)."""
    finished = subprocess.run(
        ["make", "-s", "serve", f"PORT={free_port()}", f"PYTHON={sys.executable}", *arguments],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )
    assert finished.returncode != 0
    return finished.stderr.splitlines()[0]


def test_root_as_serve_user_is_refused():
    assert refusal(production_env(os.environ), "SERVE_USER=root") == (
        "deploy/serve: SERVE_USER=root is root; the app must not run as root: "
        "name an unprivileged user (default nobody)."
    )


def test_a_sqlite_folder_serve_user_cannot_write_is_named_before_anything_starts(tmp_path):
    env = production_env(os.environ, DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    assert refusal(env) == (
        f"deploy/serve: SERVE_USER={SERVE_USER} cannot write the SQLite database's folder {tmp_path} "
        "(SQLite keeps its WAL journal there); keep the database in a folder of its own that this user may write "
        "(DATABASE_URL=sqlite:////var/lib/aptix/db.sqlite3)."
    )


def test_a_project_the_app_user_could_change_is_refused_since_root_runs_it():
    # The serve script in a project whose deploy folder anyone may write: the app's user could replace what
    # root runs at the next start.
    project = Path(tempfile.mkdtemp(prefix="aptix-project-"))
    try:
        shutil.copytree(ROOT / "deploy", project / "deploy")
        shutil.copy(ROOT / "manage.py", project)
        os.chmod(project, 0o755)
        os.chmod(project / "deploy", 0o777)
        finished = subprocess.run(
            [project / "deploy" / "serve"],
            env={**production_env(os.environ), "PORT": str(free_port()), "VENV_BIN": str(ROOT / ".venv" / "bin")},
            capture_output=True, text=True, timeout=60,
        )
    finally:
        shutil.rmtree(project)
    assert finished.returncode != 0
    assert finished.stderr.splitlines()[0] == (
        f"deploy/serve: SERVE_USER={SERVE_USER} can write deploy, which root runs or reads at start; only root may "
        "write the project and .venv (keep a SQLite database in a folder of its own)."
    )
