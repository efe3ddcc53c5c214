"""
Real servers for the tests that need one: a scratch database of the kind the suite runs on (an SQLite file,
or a PostgreSQL database of its own on the suite's server), a copy of one `manage.py migrate` made, and the app
served from it by `make serve` (the production command), Granian alone (the app server behind make serve's
nginx), uvicorn (ASGI) or runserver, each on a free port.
Everything is removed when the test is done; the shared PostgreSQL server itself is never stopped. A run
ended by SIGTERM or SIGHUP stops its servers too (stop_servers_when_terminated).
"""

import atexit
import fcntl
import functools
import json
import os
import pwd
import random
import shutil
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from contextlib import closing, contextmanager
from pathlib import Path

import psycopg
import requests
from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
START_TIMEOUT = 60


PORT_LOCKS = Path(tempfile.gettempdir()) / "aptix-test-ports"
_reserved_ports = []  # the lock files of this process's ports, held open until it exits


def _ephemeral_ports() -> range:
    low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
    return range(int(low), int(high) + 1)


def free_port() -> int:
    """
    A port of 127.0.0.1 that nothing listens on, for a server the test starts. A port the kernel picks
    (bind to 0) can be handed to any outgoing connection before the server binds it, so the port is taken
    below the kernel's ephemeral range instead, and reserved with a lock file that the other test processes
    respect, held until this process exits.
    """
    PORT_LOCKS.mkdir(exist_ok=True)
    candidates = range(10000, _ephemeral_ports().start)
    for port in random.Random().sample(candidates, 500):
        lock = open(PORT_LOCKS / str(port), "w")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", port))
        except OSError:  # reserved by another test process, or in use by something else
            lock.close()
            continue
        _reserved_ports.append(lock)
        return port
    raise RuntimeError(f"no free port between {candidates.start} and {candidates.stop}")


def django_process(env, code="", settings_module="aptix_site.settings", timeout=60):
    """code run in a fresh process with Django set up (env's database, settings_module): the finished process."""
    return subprocess.run(
        [sys.executable, "-c", f"import django; django.setup()\n{code}"],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": settings_module},
        timeout=timeout,
        capture_output=True,
        text=True,
    )


def run_django(env, code, timeout=60) -> str:
    """What code prints when run in a fresh process with Django set up on env's database."""
    result = django_process(env, code, timeout=timeout)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def run_django_json(env, code):
    """run_django for code that prints one JSON document."""
    return json.loads(run_django(env, code))


USERS = """
import json
from django.contrib.auth import get_user_model
from accounts.models import Membership, Organization
from accounts.tokens import create_token
tokens = {{}}
for name in {names!r}:
    user = get_user_model().objects.create_user(username=name, password=name + "-password-123")
    org = Organization.objects.create(name=name.title(), slug=name)
    Membership.objects.create(user=user, organization=org)
    tokens[name] = create_token(user=user, name="tests")[1]
print(json.dumps(tokens))
"""


def make_users(env, *names) -> dict:
    """Users (password '<name>-password-123'), each in an organization of their own; their API tokens by name."""
    return run_django_json(env, USERS.format(names=names))


# The user `make serve` runs the app as when the suite runs as root (deploy/serve's default).
SERVE_USER = os.environ.get("SERVE_USER", "nobody")


@contextmanager
def scratch_database(migrated=True):
    """
    The environment of a database of the suite's kind (SQLite or PostgreSQL), migrated unless migrated is
    False (empty), dropped afterwards. A migrated one is a copy of the run's migrated template (migrated_template):
    `manage.py migrate` takes 4 s, a copy a fraction of one.
    """
    if _on_sqlite():
        with sqlite_folder() as folder:
            path = folder / "scratch.sqlite3"
            if migrated:
                with closing(sqlite3.connect(migrated_template())) as source, closing(sqlite3.connect(path)) as copy:
                    source.backup(copy)  # whole and consistent, whatever the journal holds
            hand_to_serve_user(folder)
            yield environment(f"sqlite:///{path}")
        return
    name = f"aptix_scratch_{uuid.uuid4().hex[:12]}"
    with _postgres_admin() as admin:
        admin.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{migrated_template()}"' if migrated else ""))
    try:
        yield environment(_postgres_url(name))
    finally:
        _drop_postgres_database(name)


def environment(database_url) -> dict:
    """This process's environment for a process of the app on another database (its settings module its own)."""
    kept = {name: value for name, value in os.environ.items() if name not in {"DATABASE_URL", "DJANGO_SETTINGS_MODULE"}}
    return {**kept, "DATABASE_URL": database_url}


TEMPLATE_PREFIX = "aptix_template_"  # then the pid of the run that made it


@functools.cache
def migrated_template() -> str:
    """
    A database of the suite's kind that `manage.py migrate` made, once per run, for scratch databases to copy: an
    SQLite file's path, or a PostgreSQL database's name (never connected to once migrated, as a template must be).
    Removed when the run ends; one a killed run left is removed by the next run that makes one.
    """
    _remove_templates_of_ended_runs()
    if _on_sqlite():
        folder = Path(tempfile.mkdtemp(prefix=f"{TEMPLATE_PREFIX}{os.getpid()}_"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        path = folder / "migrated.sqlite3"
        run_manage(environment(f"sqlite:///{path}"), "migrate", "--noinput", "-v0", timeout=180)
        return str(path)
    name = f"{TEMPLATE_PREFIX}{os.getpid()}_{uuid.uuid4().hex[:8]}"
    with _postgres_admin() as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    atexit.register(_drop_postgres_database, name)
    run_manage(environment(_postgres_url(name)), "migrate", "--noinput", "-v0", timeout=180)
    return name


def _remove_templates_of_ended_runs():
    def ended(name):
        pid = name[len(TEMPLATE_PREFIX):].partition("_")[0]
        return pid.isdigit() and not Path(f"/proc/{pid}").exists()

    for folder in Path(tempfile.gettempdir()).glob(f"{TEMPLATE_PREFIX}*"):
        if ended(folder.name):
            shutil.rmtree(folder, ignore_errors=True)
    if not _on_sqlite():
        with _postgres_admin() as admin:
            names = admin.execute("SELECT datname FROM pg_database WHERE datname LIKE %s", [f"{TEMPLATE_PREFIX}%"])
            for (name,) in names.fetchall():
                if ended(name):
                    admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _on_sqlite() -> bool:
    return settings.DATABASES["default"]["ENGINE"].endswith("sqlite3")


def _postgres_admin():
    """An autocommit connection to the suite's PostgreSQL server, for creating and dropping databases."""
    config = settings.DATABASES["default"]
    return psycopg.connect(
        dbname="postgres", autocommit=True, password=config["PASSWORD"] or None,
        host=config["HOST"] or "127.0.0.1", port=config["PORT"] or 5432, user=config["USER"],
    )


def _postgres_url(name) -> str:
    config = settings.DATABASES["default"]
    credentials = f"{config['USER']}:{config['PASSWORD']}" if config["PASSWORD"] else config["USER"]
    return f"postgres://{credentials}@{config['HOST'] or '127.0.0.1'}:{config['PORT'] or 5432}/{name}"


def _drop_postgres_database(name):
    with _postgres_admin() as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def sqlite_folder():
    """
    A private folder of the system's temporary one for an SQLite file, removed afterwards. Not pytest's
    tmp_path: under root that is in a folder only root may enter, and `make serve` run by root serves the app
    as SERVE_USER, which must write the file and its folder.
    """
    folder = Path(tempfile.mkdtemp(prefix="aptix-scratch-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def let_serve_user_reach_the_project():
    """
    Under root, `make serve` runs the app as SERVE_USER, who must pass through every folder above the checkout.
    A checkout in a private temporary folder (`mktemp -d` makes it 0700), or in root's home, would keep that user
    out, and make serve refuses to start; the suite gives passage through those folders (o+x: through, not to
    list or to write), as an operator would, once before the tests.
    """
    if os.getuid() != 0:
        return
    for folder in ROOT.parents:
        mode = folder.stat().st_mode
        if not mode & stat.S_IXOTH:
            os.chmod(folder, stat.S_IMODE(mode) | stat.S_IXOTH)


def hand_to_serve_user(folder):
    """Under root, the SQLite folder and files become SERVE_USER's, as docs/operations.md asks of an operator."""
    if os.getuid() != 0:
        return
    owner = pwd.getpwnam(SERVE_USER)
    for path in (folder, *folder.iterdir()):
        os.chown(path, owner.pw_uid, owner.pw_gid)


def run_manage(env, *arguments, timeout=60) -> str:
    """What a management command prints, run as an operator runs it, on env's database."""
    return subprocess.run(
        [sys.executable, "manage.py", *arguments], cwd=ROOT, env=env, check=True, timeout=timeout,
        capture_output=True, text=True,
    ).stdout


def production_env(env, **overrides):
    """Settings as production has them (DEBUG off), for plain HTTP on loopback."""
    return {
        **env,
        "DEBUG": "0",
        "SECRET_KEY": "servers-in-tests-only",
        "SECURE_SSL_REDIRECT": "0",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        **overrides,
    }


_running = set()  # the Servers this process started and has not stopped yet


@atexit.register
def _stop_leftover_servers():
    """Whatever ended the run, no server it started outlives it (a test's own teardown normally stops each)."""
    for server in list(_running):
        server.stop()


def stop_servers_when_terminated():
    """
    SIGTERM and SIGHUP (a CI job cancelled, a terminal closed) end the run as Ctrl-C does: teardowns run, so each
    test stops its servers and drops its scratch database, and at exit _stop_leftover_servers stops the rest.
    By default either signal ends Python at once and leaves every server's process group running. (SIGKILL
    cannot be caught: after one, `ps` shows what is left.)
    """
    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.default_int_handler)


class Server:
    """The app served by a real server process on a free port of 127.0.0.1."""

    COMMANDS = {
        # The production command (docs/operations.md), as an operator runs it.
        "make-serve": lambda port: ["make", "-s", "serve", "HOST=127.0.0.1", f"PORT={port}", f"PYTHON={sys.executable}"],
        # What make serve runs behind nginx, on a port rather than its socket, as the user running the tests.
        "granian": lambda port: [
            str(BIN / "granian"), "--interface", "wsgi", "--host", "127.0.0.1", "--port", str(port), "--no-ws",
            "aptix_site.wsgi:application",
        ],
        "uvicorn": lambda port: [str(BIN / "uvicorn"), "aptix_site.asgi:application", "--port", str(port)],
        "runserver": lambda port: [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
    }

    def __init__(self, kind, env, *extra_args, root=ROOT):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        # A file rather than a pipe: a server that logs more than a pipe holds would stop, waiting for a reader.
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [*self.COMMANDS[kind](self.port), *extra_args],
            cwd=root,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: make's children are stopped with it
        )
        _running.add(self)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                requests.get(f"{self.base}/admin/login/", timeout=2, allow_redirects=False)  # any answer: it is up
                return
            # Not listening yet; or listening, with its workers still starting on a busy machine (a read timeout).
            except (requests.ConnectionError, requests.Timeout):
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"{kind} did not start: {self.output()[-2000:]}")
                time.sleep(0.2)

    def stop(self):
        self._signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self._signal(signal.SIGKILL)
            self.process.wait(timeout=10)
        _running.discard(self)

    def _signal(self, number):
        try:
            os.killpg(self.process.pid, number)
        except ProcessLookupError:
            pass

    def output(self) -> str:
        """What the server has logged so far."""
        self.log.seek(0)
        return self.log.read().decode(errors="replace")


@contextmanager
def serving(kind, env, *extra_args, root=ROOT):
    server = Server(kind, env, *extra_args, root=root)
    try:
        yield server
    finally:
        server.stop()
        server.log.close()


@contextmanager
def project_copy():
    """
    A copy of the project (its virtualenv linked, not copied) whose code a test may change, as a deploy
    changes the code on disk, without touching the checkout. Root's and readable by all, as `make serve` run by
    root wants it; removed afterwards.
    """
    folder = Path(tempfile.mkdtemp(prefix="aptix-project-"))
    os.chmod(folder, 0o755)
    copy = folder / "project"
    try:
        shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".git", ".venv", "__pycache__", "db.sqlite3*"))
        (copy / ".venv").symlink_to((ROOT / ".venv").resolve())
        yield copy
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def child_processes(pid) -> list[int]:
    """
    The processes pid started that are still running: those whose parent it is. From each process's stat, not
    /proc/pid/task/*/children, which the kernel lists exactly only while the process is stopped (a shell that forks
    as it is read, deploy/serve's, may be missed).
    """
    children = []
    for process_stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            # pid (comm) state ppid ...; comm may hold spaces and parentheses: the fields after its last ")".
            _, parent = process_stat.read_text().rpartition(")")[2].split()[:2]
        except (FileNotFoundError, ProcessLookupError):
            continue  # ended meanwhile
        if int(parent) == pid:
            children.append(int(process_stat.parent.name))
    return sorted(children)


@contextmanager
def redis_server(port):
    """A Redis of the test's own on 127.0.0.1:port, keeping nothing on disk; stopped on exit."""
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("redis-server did not start")
                time.sleep(0.05)
        yield process
    finally:
        process.terminate()
        process.wait(timeout=10)


class TcpProxy:
    """
    A TCP forwarder of the test's own from a free port of 127.0.0.1 to upstream, which the test can cut
    (every connection closed, new ones refused) and restore: a database outage without stopping the database.
    """

    def __init__(self, upstream_host, upstream_port):
        self.upstream = (upstream_host, upstream_port)
        self.port = free_port()
        self._sockets = set()
        self._lock = threading.Lock()
        self._listener = None
        self.restore()

    def restore(self):
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self):
        listener, self._listener = self._listener, None
        try:
            listener.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in accept(), which close() alone does not
        except OSError:
            pass
        listener.close()
        with self._lock:
            for sock in self._sockets:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()
            self._sockets.clear()

    close = cut

    def _accept(self, listener):
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # cut
            try:
                server = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            with self._lock:
                self._sockets.update((client, server))
            for source, target in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, target), daemon=True).start()

    def _pump(self, source, target):
        try:
            while data := source.recv(65536):
                target.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, target):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
