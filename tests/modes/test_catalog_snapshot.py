"""
The published catalog each process keeps: loaded once per publication, never a change that no revision holds, an
immutable object once a request has it, and picked up by each worker from another process's change on its next
request.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import requests
from django.db import connection, transaction

from modes.catalog import build_system_prompt, get_mode, published_catalog
from modes.models import AgentMode
from modes.services import delete_modes, record_unrecorded_changes

from ..servers import Server, run_django, scratch_database
from ..expected import GENERAL_ID

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_a_queryset_update_is_not_served_until_a_revision_records_it():
    published_catalog()
    AgentMode.objects.filter(key="general").update(when_to_use="Use this mode for small talk.")
    assert "- general: Use this mode for small talk." not in build_system_prompt("general")
    record_unrecorded_changes()
    assert "- general: Use this mode for small talk." in build_system_prompt("general")


@pytest.mark.django_db
def test_raw_sql_writes_are_served_once_a_revision_records_them():
    published_catalog()
    with connection.cursor() as cursor:
        cursor.execute("UPDATE modes_agentmode SET display_name = 'Chat' WHERE key = 'general'")
    assert get_mode("general").display_name == "General"
    record_unrecorded_changes()
    assert get_mode("general").display_name == "Chat"


@pytest.mark.django_db
def test_created_and_deleted_modes_appear_and_disappear(custom_mode):
    assert [mode.key for mode in published_catalog().find("research")] == ["research"]
    delete_modes(modes=[custom_mode])
    assert published_catalog().find("research") == []


@pytest.mark.django_db
def test_an_unchanged_catalog_is_not_reloaded(django_assert_num_queries):
    published_catalog()
    with django_assert_num_queries(1):  # the head row only
        published_catalog()


@pytest.mark.django_db
def test_a_catalog_a_request_holds_stays_as_it_was_and_the_next_read_has_the_new_revision(new_mode):
    held = published_catalog()
    new_mode("newer")
    assert "newer" not in held.by_key
    assert "newer" in published_catalog().by_key


@pytest.mark.django_db
def test_a_revision_number_that_names_another_catalog_after_a_restore_is_loaded_anew(new_mode):
    """A database restored from a backup may publish a number this process has loaded with other modes."""
    with transaction.atomic():
        new_mode("before_the_restore")
        assert "before_the_restore" in published_catalog().by_key
        transaction.set_rollback(True)
    new_mode("after_the_restore")  # the same revision number, 2
    assert published_catalog().revision == 2
    assert set(published_catalog().by_key) >= {"after_the_restore"} and "before_the_restore" not in published_catalog().by_key


# --- Two worker processes -------------------------------------------------------------------------------


# Two workers of one host, on a scratch database; the PostgreSQL run serves two hosts at once (deploy/test_two_hosts.py).
two_workers_of_one_host = pytest.mark.either_database(reason="two workers share a database as two hosts do (test_two_hosts)")


@pytest.fixture
def shared_database():
    """A migrated database both servers use, with an admin who can log in; each test edits a fresh one."""
    with scratch_database() as env:
        env = {**env, "DEBUG": "1"}  # plain-HTTP admin login: cookies are Secure only with DEBUG off
        run_django(env, "from django.contrib.auth.models import User; "
                   "User.objects.create_superuser('root', 'root@localhost', 'root-password-123')")
        yield env


@pytest.fixture
def root_token(shared_database):
    """An API token for the admin user of the shared database."""
    return run_django(
        shared_database,
        "from accounts.tokens import create_token; from django.contrib.auth.models import User; "
        "print(create_token(user=User.objects.get(username='root'), name='tests')[1])",
    )


class Worker:
    """One Granian process with a single worker: every request it serves goes to that worker."""

    def __init__(self, env):
        self.server = Server("granian", env, "--workers", "1")
        self.base = self.server.base
        self.http = requests.Session()

    def log_in(self, username, password):
        page = self.http.get(f"{self.base}/admin/login/", timeout=10)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        response = self.http.post(
            f"{self.base}/admin/login/?next=/admin/",
            data={"username": username, "password": password, "csrfmiddlewaretoken": token},
            timeout=10,
        )
        assert response.url.endswith("/admin/"), "admin login failed"

    def listed_default(self, token=None):
        """The default mode as GET /api/modes/ lists it, as the logged-in admin or with an API token."""
        headers = {"Authorization": f"Token {token}"} if token else {}
        response = (requests if token else self.http).get(f"{self.base}/api/modes/", headers=headers, timeout=10)
        assert response.status_code == 200
        return next(mode["key"] for mode in response.json()["modes"] if mode["isDefault"])

    def make_default(self, mode_id):
        changelist = f"{self.base}/admin/modes/agentmode/"
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', self.http.get(changelist, timeout=10).text)
        response = self.http.post(
            changelist,
            data={
                "action": "make_default",
                "_selected_action": mode_id,
                "csrfmiddlewaretoken": token.group(1),
            },
            timeout=10,
        )
        assert response.status_code == 200

    def stop(self):
        self.server.stop()


@pytest.fixture
def two_workers(shared_database):
    workers = []
    try:
        for _ in range(2):
            workers.append(Worker(shared_database))
        yield workers
    finally:
        for worker in workers:
            worker.stop()


@two_workers_of_one_host
def test_an_admin_edit_through_one_worker_is_served_by_the_other_on_its_next_request(two_workers):
    first, second = two_workers
    for worker in two_workers:
        worker.log_in("root", "root-password-123")
        assert worker.listed_default() == "general"  # both hold a snapshot now

    first.make_default("A9E1F9C15A0C4F8D9AF51F3E8B2A6D22")  # ddr_authoring, through the first worker

    assert second.listed_default() == "ddr_authoring"
    assert first.listed_default() == "ddr_authoring"


@two_workers_of_one_host
def test_a_token_client_of_another_worker_sees_an_admin_edit_on_its_next_request(two_workers, root_token):
    """Token requests read the catalog version in the token query: that read must be just as fresh."""
    first, second = two_workers
    first.log_in("root", "root-password-123")
    for key, mode_id in (("workflow_authoring", "0FB81E6A8337444BA00A0CE28E3A1F78"), ("general", GENERAL_ID)):
        assert second.listed_default(token=root_token) != key  # the second worker holds a snapshot

        first.make_default(mode_id)

        assert second.listed_default(token=root_token) == key


@two_workers_of_one_host
def test_an_import_by_another_process_is_served_by_a_running_worker_on_its_next_request(
    two_workers, shared_database, tmp_path
):
    worker = two_workers[0]
    worker.log_in("root", "root-password-123")
    before = worker.http.get(f"{worker.base}/api/modes/", timeout=10).json()["modes"]
    assert "imported_mode" not in [mode["key"] for mode in before]

    mode_file = tmp_path / "modes.yaml"
    mode_file.write_text(
        "modes:\n- key: imported_mode\n  display_name: Imported\n  when_to_use: Use this mode after an import.\n"
    )
    subprocess.run(
        [sys.executable, "manage.py", "import_modes", str(mode_file)],
        cwd=ROOT,
        env=shared_database,
        check=True,
        timeout=60,
        capture_output=True,
    )

    after = worker.http.get(f"{worker.base}/api/modes/", timeout=10).json()["modes"]
    assert "imported_mode" in [mode["key"] for mode in after]

