"""
What the benchmark scripts share: scratch databases for the app and the reference project on the same
database server, their fixtures, serving them on free loopback ports, and driving an endpoint with wrk.
"""

import json
import os
import pwd
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PG_ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres"
PG_DATABASES = {
    "project": "aptix_modes_bench",
    "reference": "aptix_modes_bench_reference",
    # benchmarks/volume.py: the same catalog with nothing else, and at scale.
    "empty": "aptix_modes_volume_empty",
    "full": "aptix_modes_volume_full",
}


@dataclass(frozen=True)
class Endpoint:
    label: str
    target: str  # the name of the served app it is sent to
    method: str
    path: str
    bodies: tuple[str, ...] = ()


def change_bodies(session) -> tuple[str, ...]:
    """agent_change_mode invocations that move the session back and forth, so each one changes something."""
    return tuple(
        json.dumps({"sessionId": session, "arguments": {"mode": mode, "branch": False, "reason": "Benchmark."}})
        for mode in ("ddr_authoring", "general")
    )


# --- Databases and fixtures ------------------------------------------------------------------------------------


def _base_environment():
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "DEBUG", "REDIS_URL", "DJANGO_SETTINGS_MODULE", "APP"}
    }
    env.update(SECRET_KEY=secrets.token_urlsafe(50), PYTHONPATH=str(ROOT))
    return env


def _database_url(database, workdir, name):
    if database == "sqlite":
        return f"sqlite:///{workdir / (name + '.sqlite3')}"
    if database == "postgres":
        psql(f"DROP DATABASE IF EXISTS {PG_DATABASES[name]} WITH (FORCE)")
        psql(f"CREATE DATABASE {PG_DATABASES[name]}")
        return f"postgres://postgres@127.0.0.1:5432/{PG_DATABASES[name]}"
    sys.exit(f"unknown database {database!r}: use sqlite and/or postgres")


def project_environment(database, workdir, name="project") -> dict:
    return {
        **_base_environment(),
        # Production settings plus the in-stack diagnostic view (benchmarks/settings.py).
        "DJANGO_SETTINGS_MODULE": "benchmarks.settings",
        "DATABASE_URL": _database_url(database, workdir, name),
        "SECURE_SSL_REDIRECT": "0",  # plain HTTP on loopback
        "TOOL_INVOKE_RATE": "1000000000/day",  # never refuse
    }


def reference_environment(database, workdir) -> dict:
    return {
        **_base_environment(),
        "DJANGO_SETTINGS_MODULE": "benchmarks.reference.settings",
        "APP": "benchmarks.reference.wsgi:application",
        "DATABASE_URL": _database_url(database, workdir, "reference"),
    }


def drop_databases(database, names=("project", "reference")):
    if database == "postgres":
        for name in names:
            psql(f"DROP DATABASE IF EXISTS {PG_DATABASES[name]} WITH (FORCE)")


# The benchmark's user made staff who may read the catalog's revisions (modes.view_catalogrevision), whose lists
# the volume benchmark measures: one statement, for psql and psycopg alike.
BENCH_USER_READS_REVISIONS = """
WITH staff AS (UPDATE auth_user SET is_staff = true WHERE username = 'bench' RETURNING id)
INSERT INTO auth_user_user_permissions (user_id, permission_id)
SELECT staff.id, permission.id FROM staff, auth_permission permission WHERE permission.codename = 'view_catalogrevision'
"""


def psql(statement, url=PG_ADMIN_URL):
    """Runs statement on the database at url (the server's own by default); its first value, if it returns rows."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        cursor = connection.execute(statement)
        return cursor.fetchone()[0] if cursor.description else None


def manage(env, *arguments) -> str:
    """What `django-admin` prints, run with env's settings and database."""
    return subprocess.run(
        [str(BIN / "python"), "-m", "django", *map(str, arguments)],
        cwd=ROOT, env=env, check=True, timeout=300, capture_output=True, text=True,
    ).stdout


def prepare_project(env, *, roll_out: bool = True) -> dict:
    """Migrates the app's database and makes its fixture: {"token", "session"}; then roll_out_if_asked, unless the
    caller publishes more first (a publication waits while a rollout is in flight)."""
    manage(env, "migrate", "--noinput", "-v0")
    output = subprocess.run(
        [str(BIN / "python"), "-m", "benchmarks.prepare"], cwd=ROOT, env=env, check=True, timeout=300,
        capture_output=True, text=True,
    ).stdout
    if roll_out:
        roll_out_if_asked(env)
    return json.loads(output.strip().splitlines()[-1])


def roll_out_if_asked(env) -> None:
    """With BENCH_ROLLOUT=1: a second revision rolled out to every session (benchmarks/prepare.py)."""
    if env.get("BENCH_ROLLOUT") == "1":
        subprocess.run(
            [str(BIN / "python"), "-m", "benchmarks.prepare", "roll-out"], cwd=ROOT, env=env, check=True, timeout=300,
        )


def prepare_reference(env, modes_file) -> dict:
    """Creates the reference project's tables and fills them with the modes of modes_file: {"token", "session"}."""
    manage(env, "migrate", "--noinput", "-v0")
    return json.loads(manage(env, "prepare_reference", modes_file).strip().splitlines()[-1])


def project_and_reference(database, workdir, **extra_env) -> tuple[dict, dict]:
    """The app and the reference project on fresh databases of the kind named, both to be served by make serve:
    (targets for Servers, fixtures by target name)."""
    project_env = {**project_environment(database, workdir), **extra_env}
    fixtures = {"project": prepare_project(project_env)}
    modes_file = workdir / "modes.json"
    manage(project_env, "export_modes", "--format", "json", "--output", modes_file)
    reference_env = {**reference_environment(database, workdir), **extra_env}
    fixtures["reference"] = prepare_reference(reference_env, modes_file)
    return {"project": (project_env, "make-serve"), "reference": (reference_env, "make-serve")}, fixtures


def commit() -> str:
    try:
        return "commit " + subprocess.run(
            ["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "no git"


# --- Servers ---------------------------------------------------------------------------------------------------


def _hand_sqlite_to_serve_user(env):
    """Started as root, make serve runs the app as SERVE_USER (nobody): it must write an SQLite file and its folder."""
    url = env["DATABASE_URL"]
    if os.getuid() != 0 or not url.startswith("sqlite:///"):
        return
    owner = pwd.getpwnam(env.get("SERVE_USER", "nobody"))
    folder = Path(url.removeprefix("sqlite:///")).parent
    for path in (folder, *folder.iterdir()):
        os.chown(path, owner.pw_uid, owner.pw_gid)


class Servers:
    """
    Each target, {name: (environment, kind)}, served at once on a free loopback port; stopped on exit. Kinds:
    "make-serve" (the production command; the environment's APP names the WSGI application), and, for
    comparison, "granian" (Granian alone, without nginx in front).
    """

    def __init__(self, targets, workers=None):
        self.targets = targets
        self.workers = workers or os.cpu_count() or 1
        self.processes = {}
        self.bases = {}
        self.logs = tempfile.TemporaryFile()

    def _command(self, kind, port):
        if kind == "granian":
            return [str(BIN / "granian"), "--interface", "wsgi", "--host", "127.0.0.1", "--port", str(port),
                    "--workers", str(self.workers), "--no-ws", "--http1-header-read-timeout", "30000",
                    "--log-level", "warning", "aptix_site.wsgi:application"]
        return ["make", "-s", "serve", "HOST=127.0.0.1", f"PORT={port}", f"PYTHON={sys.executable}",
                f"WORKERS={self.workers}"]

    def __enter__(self):
        for name, (env, kind) in self.targets.items():
            if kind == "make-serve":
                _hand_sqlite_to_serve_user(env)
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                port = probe.getsockname()[1]
            self.processes[name] = subprocess.Popen(
                self._command(kind, port), cwd=ROOT, env=env, start_new_session=True,
                stdout=subprocess.DEVNULL, stderr=self.logs,  # stdout: nginx's access log
            )
            self.bases[name] = f"http://127.0.0.1:{port}"
        for name in self.targets:
            self._wait_until_serving(name)
        return self

    def _wait_until_serving(self, name):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"{self.bases[name]}/", timeout=1)
                return
            except urllib.error.HTTPError as error:
                if error.code != 503:  # an answer from the app itself, whatever it is
                    return
            except OSError:
                pass
            time.sleep(0.2)
        self.__exit__()
        self.logs.seek(0)
        raise SystemExit(f"{name} did not start within 60 s:\n{self.logs.read().decode(errors='replace')[-3000:]}")

    def worker_pids(self, name) -> list[int]:
        """The processes in name's process group that run the app: Granian's workers."""
        group = self.processes[name].pid
        pids = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
                command = (stat.parent / "cmdline").read_bytes()
            except (OSError, IndexError):
                continue
            parent, process_group = int(fields[1]), int(fields[2])
            if process_group == group and b"granian" in command:
                pids.append((parent, int(stat.parent.name)))
        masters = {pid for _, pid in pids}
        return sorted(pid for parent, pid in pids if parent in masters)

    def __exit__(self, *exc):
        for process in self.processes.values():
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
        for process in self.processes.values():
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)


# --- wrk -------------------------------------------------------------------------------------------------------


def run_wrk(url, endpoint, token, *, duration, connections, warm_up=False) -> dict:
    """Drives url as endpoint says for duration seconds: {"rps", "p50_ms", "p99_ms", "errors"} (non-2xx answers)."""
    mcp = endpoint.path == "/mcp/"
    script = [
        # An MCP client sends the API token as a bearer token, and accepts JSON or an event stream.
        f'wrk.headers["Authorization"] = "{"Bearer" if mcp else "Token"} {token}"',
        *(['wrk.headers["Accept"] = "application/json, text/event-stream"'] if mcp else []),
        'wrk.headers["Content-Type"] = "application/json"',
    ]
    if endpoint.bodies:
        quoted = ", ".join("[[%s]]" % body for body in endpoint.bodies)
        script += [
            f"local bodies = {{{quoted}}}",
            "local n = 0",
            "request = function()",
            "  n = n + 1",
            f'  return wrk.format("{endpoint.method}", nil, nil, bodies[(n % #bodies) + 1])',
            "end",
        ]
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as lua:
        lua.write("\n".join(script) + "\n")
    try:
        command = ["wrk", f"-t{min(2, connections)}", f"-c{connections}", "--latency", "-s", lua.name]
        if warm_up:
            subprocess.run([*command, "-d1s", url], capture_output=True, timeout=30, check=True)
        output = subprocess.run(
            [*command, f"-d{duration}s", url], capture_output=True, text=True, timeout=duration + 30, check=True
        ).stdout
    finally:
        os.unlink(lua.name)
    errors = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1)),
        "p50_ms": _milliseconds(re.search(r"^\s+50%\s+(\S+)", output, re.M).group(1)),
        "p99_ms": _milliseconds(re.search(r"^\s+99%\s+(\S+)", output, re.M).group(1)),
        "errors": int(errors.group(1)) if errors else 0,
    }


def _milliseconds(text):
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text).groups()
    return float(value) * {"us": 0.001, "ms": 1, "s": 1000, "m": 60000}[unit]
