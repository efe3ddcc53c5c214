"""
No server starts on a broken published catalog revision (AGN-014 §7.6): `make serve`, Granian (its app server)
alone, runserver, the ASGI module, `check --database`; broken rows that no revision holds, which agents are not
served, are a warning (modes.W004).

Each test runs real processes against its own SQLite file, whatever database the suite itself uses. The
template database is made once per module by `manage.py migrate` on an empty file, which also shows
that migrate works on an empty database.
"""

import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import closing, contextmanager
from pathlib import Path

import pytest

from ..servers import free_port, hand_to_serve_user, sqlite_folder

pytestmark = pytest.mark.either_database(reason="each test serves a SQLite file of its own, whatever the suite's database")

PROJECT_DIR = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
GRANIAN = str(Path(sys.executable).parent / "granian")
TIMEOUT = 60


def server_env(db_file):
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in ("DATABASE_URL", "DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "DJANGO_SETTINGS_MODULE")
    }
    env.update(
        DATABASE_URL=f"sqlite:///{db_file}",
        SECRET_KEY="startup-tests-only",
        SECURE_SSL_REDIRECT="0",
        DJANGO_SETTINGS_MODULE="aptix_site.settings",
        PYTHONUNBUFFERED="1",
    )
    return env


def run(args, db_file):
    """Runs a process to its end (killed after TIMEOUT); returns (exit code, stdout + stderr)."""
    result = subprocess.run(
        args, cwd=PROJECT_DIR, env=server_env(db_file), capture_output=True, text=True, timeout=TIMEOUT
    )
    return result.returncode, result.stdout + result.stderr


def granian_args(port):
    """Granian serving the WSGI module, as make serve runs it behind nginx, on a port of its own."""
    return [GRANIAN, "--interface", "wsgi", "--host", "127.0.0.1", "--port", str(port), "--workers", "1", "--no-ws",
            "aptix_site.wsgi:application"]


@pytest.fixture(scope="module")
def migrated_template(tmp_path_factory):
    db_file = tmp_path_factory.mktemp("startup") / "template.sqlite3"
    code, output = run([PYTHON, "manage.py", "migrate", "--noinput"], db_file)
    assert code == 0, output
    with sqlite3.connect(db_file) as db:
        assert db.execute("SELECT key, is_default FROM modes_agentmode ORDER BY position").fetchall() == [
            ("general", 1),
            ("ddr_authoring", 0),
            ("workflow_authoring", 0),
        ]
    return db_file


@contextmanager
def copy_to_serve(template):
    """A copy of a database file where make serve, run by root, can hand it to the app's user."""
    with sqlite_folder() as folder:
        db_file = folder / "db.sqlite3"
        shutil.copy(template, db_file)
        hand_to_serve_user(folder)
        yield db_file


@pytest.fixture
def intact_db(migrated_template):
    with copy_to_serve(migrated_template) as db_file:
        yield db_file


def clear_default_past_the_services(db_file):
    db = sqlite3.connect(db_file)
    try:
        assert db.execute("UPDATE modes_agentmode SET is_default = 0").rowcount == 3
        db.commit()
    finally:
        db.close()


# The record_revision command with the catalog's rules switched off: what a release without a rule recorded.
RECORD_PAST_THE_RULES = (
    "import modes.revisions; modes.revisions.validate_catalog = lambda modes: None; "
    "from modes.services import record_unrecorded_changes; print(record_unrecorded_changes().number)"
)


def publish_past_the_rules(db_file, check_id):
    """
    The rows of db_file, which break the rule check_id, recorded as revision 2 and published (the policy asks for no
    review) as a release without that rule would have: the one way left for the published revision to break a rule
    (a revision recorded before a rule existed or was tightened, or restored from a backup). record_revision, which
    judges them by the rules, refuses them first, in one line naming check_id, and records nothing.
    """
    code, output = run([PYTHON, "manage.py", "record_revision"], db_file)
    assert code != 0
    assert f"CommandError: This would break the catalog's rules: {check_id}: " in output
    code, output = run([PYTHON, "manage.py", "shell", "--no-imports", "-c", RECORD_PAST_THE_RULES], db_file)
    assert (code, output) == (0, "2\n")


@pytest.fixture(scope="module")
def template_without_default(migrated_template, tmp_path_factory):
    """A catalog without a default mode, published as revision 2."""
    db_file = tmp_path_factory.mktemp("startup") / "without-default.sqlite3"
    shutil.copy(migrated_template, db_file)
    clear_default_past_the_services(db_file)
    publish_past_the_rules(db_file, "modes.E005")
    return db_file


@pytest.fixture
def db_without_default(template_without_default):
    with copy_to_serve(template_without_default) as db_file:
        yield db_file


def make_serve_refusal(db_file) -> str:
    """What make serve says as it refuses to start on db_file's catalog; asserts that nothing is listening."""
    port = free_port()
    code, output = run(["make", "-s", "serve", f"PORT={port}", f"PYTHON={PYTHON}"], db_file)
    assert code != 0
    assert "Refusing to serve: the mode catalog is broken." in output
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5)
    return output


def test_make_serve_refuses_to_start_on_a_catalog_without_default_and_leaves_nothing_listening(db_without_default):
    assert "modes.E005" in make_serve_refusal(db_without_default)


def test_granian_refuses_to_start_on_a_catalog_without_default(db_without_default):
    code, output = run(granian_args(free_port()), db_without_default)
    assert code != 0
    assert "Refusing to serve: the mode catalog is broken." in output
    assert "modes.E005" in output


@contextmanager
def serving(args, port, db_file):
    """Starts a server and waits until it answers the admin login page; yields (process, status)."""
    process = subprocess.Popen(
        args, cwd=PROJECT_DIR, env=server_env(db_file), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        status = None
        deadline = time.monotonic() + TIMEOUT
        while status is None and time.monotonic() < deadline and process.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/admin/login/", timeout=5) as response:
                    status = response.status
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.1)
        assert process.poll() is None, process.communicate(timeout=TIMEOUT)[0]
        yield process, status
    finally:
        process.terminate()
        try:
            process.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


def test_granian_serves_on_the_intact_catalog(intact_db):
    port = free_port()
    with serving(granian_args(port), port, intact_db) as (_, status):
        assert status == 200


def cores():
    """The machine's cores as the kernel lists them, counted apart from os.cpu_count(), which the code uses."""
    return sum(line.startswith("processor") for line in Path("/proc/cpuinfo").read_text().splitlines())


def test_make_serve_runs_one_worker_per_core_unless_told_otherwise():
    # A dry run prints the command make would run: deploy/serve and the WORKERS it is given.
    def serve_command(*settings):
        output = subprocess.run(
            ["make", "-s", "-n", "serve", f"PYTHON={PYTHON}", *settings],
            cwd=PROJECT_DIR, capture_output=True, text=True, timeout=TIMEOUT, check=True,
        ).stdout
        [command] = [line for line in output.splitlines() if line.endswith("exec deploy/serve")]
        return command.split()

    assert f"WORKERS={cores()}" in serve_command()
    assert "WORKERS=3" in serve_command("WORKERS=3")


def test_runserver_refuses_to_start_on_a_broken_catalog(db_without_default):
    code, output = run([PYTHON, "manage.py", "runserver", "--noreload", f"127.0.0.1:{free_port()}"], db_without_default)
    assert code != 0
    assert "CommandError: Refusing to serve: the mode catalog is broken." in output
    assert "modes.E005" in output


def test_asgi_module_refuses_to_load_on_a_broken_catalog(db_without_default):
    code, output = run([PYTHON, "-c", "import aptix_site.asgi"], db_without_default)
    assert code != 0
    assert "ImproperlyConfigured: Refusing to serve: the mode catalog is broken." in output
    assert "modes.E005" in output


def test_check_database_default_fails_on_a_broken_catalog(db_without_default):
    code, output = run([PYTHON, "manage.py", "check", "--database", "default"], db_without_default)
    assert code != 0
    assert "SystemCheckError" in output
    assert "(modes.E005) No mode is the default mode." in output


def test_broken_rows_that_agents_are_not_served_are_warned_about_and_start_up_goes_on(intact_db):
    clear_default_past_the_services(intact_db)  # no revision holds it: agents keep the sound one
    code, output = run([PYTHON, "manage.py", "check", "--database", "default"], intact_db)
    assert code == 0, output
    assert "(modes.W004) The catalog's rows differ from its newest revision (mode general: is_default)" in output
    assert "modes.E005" not in output
    code, output = run([PYTHON, "-c", "import aptix_site.asgi"], intact_db)
    assert code == 0, output
    assert "modes.W004" in output  # logged as it starts
    # Recording them is refused, naming the rule, and they stay a warning.
    code, output = run([PYTHON, "manage.py", "record_revision"], intact_db)
    assert code != 0
    assert "CommandError: This would break the catalog's rules: modes.E005: " in output
    code, output = run([PYTHON, "-c", "import aptix_site.asgi"], intact_db)
    assert code == 0, output
    assert "modes.W004" in output


def test_granian_refuses_to_start_before_migrations(tmp_path):
    code, output = run(granian_args(free_port()), tmp_path / "empty.sqlite3")
    assert code != 0
    assert (
        "Refusing to serve: the mode catalog's migrations are not applied. Run 'python manage.py migrate' first."
        in output
    )


@pytest.fixture
def db_with_stuck_modes(migrated_template, tmp_path):
    """ddr_authoring and workflow_authoring may switch only to each other, published as revision 2."""
    with copy_to_serve(migrated_template) as db_file:
        with closing(sqlite3.connect(db_file)) as db:
            for key, target in (("ddr_authoring", "workflow_authoring"), ("workflow_authoring", "ddr_authoring")):
                db.execute("UPDATE modes_agentmode SET switch_targets = ? WHERE key = ?", (f'["{target}"]', key))
            db.commit()
        publish_past_the_rules(db_file, "modes.E010")
        yield db_file


def test_make_serve_refuses_to_start_on_a_catalog_where_modes_cannot_reach_the_default(db_with_stuck_modes):
    output = make_serve_refusal(db_with_stuck_modes)
    assert (
        "(modes.E010) From 'ddr_authoring', 'workflow_authoring' the model cannot reach the default mode 'general' "
        "through switches it may make."
    ) in output
    assert "give each stuck mode a switch target on a path to it" in output
