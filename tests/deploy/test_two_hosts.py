"""
More than one host: two `make serve` instances (two hosts, here two ports) share one PostgreSQL through PgBouncer
in transaction pooling mode (Debian's, on a port of the test's own) and one Redis of the test's own. What one
of them is told, the other knows: a published catalog revision, the throttles, the lockouts; and mode changes of
one session sent to both at once lose no audit row.
"""

import asyncio
import concurrent.futures
import subprocess
import threading
import time
from contextlib import contextmanager
from urllib.parse import urlsplit

import psycopg
import pytest
import requests
from django.db import connection

from ..mcp_server.live import in_session
from ..servers import (
    ROOT,
    START_TIMEOUT,
    free_port,
    hand_to_serve_user,
    make_users,
    production_env,
    redis_server,
    run_django,
    run_django_json,
    scratch_database,
    serving,
    sqlite_folder,
)

pytestmark = pytest.mark.postgres(reason="two hosts share one PostgreSQL through PgBouncer")

PGBOUNCER = ROOT / ".venv" / "pgbouncer" / "usr" / "sbin" / "pgbouncer"
SESSION_CREATE_RATE = 4  # per minute, shared by the two hosts through Redis
LOCK_TIMEOUT_MS = 1000


@contextmanager
def pgbouncer(port):
    """PgBouncer in transaction mode on 127.0.0.1:port, in front of the suite's PostgreSQL; stopped on exit."""
    server = connection.settings_dict
    with sqlite_folder() as folder:  # a private folder; PgBouncer refuses to run as root, so it is SERVE_USER's
        (folder / "users.txt").write_text(f'"{server["USER"]}" ""\n')
        (folder / "pgbouncer.ini").write_text(
            f"[databases]\n* = host={server['HOST'] or '127.0.0.1'} port={server['PORT'] or 5432}\n"
            f"[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
            f"auth_type = trust\nauth_file = {folder / 'users.txt'}\npool_mode = transaction\nadmin_users = {server['USER']}\n"
            "max_client_conn = 200\ndefault_pool_size = 8\nignore_startup_parameters = extra_float_digits,options\n"
        )
        hand_to_serve_user(folder)
        libraries = ":".join(str(path) for path in (ROOT / ".venv" / "pgbouncer" / "usr" / "lib").glob("*-linux-gnu"))
        process = subprocess.Popen(
            [PGBOUNCER, "--user", "nobody", folder / "pgbouncer.ini"],
            env={"LD_LIBRARY_PATH": libraries}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        try:
            _wait_for_postgres(port, process)
            yield
        finally:
            process.terminate()
            process.wait(timeout=10)


def _wait_for_postgres(port, process):
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        try:
            psycopg.connect(host="127.0.0.1", port=port, dbname="postgres", user="postgres", connect_timeout=2).close()
            return
        except psycopg.OperationalError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"PgBouncer did not start: {process.stderr.read().decode(errors='replace')}")
            time.sleep(0.1)


@pytest.fixture(scope="module")
def hosts():
    """(host A, host B, API tokens by user name), both served through PgBouncer and one Redis."""
    bouncer_port = free_port()
    with scratch_database() as direct, pgbouncer(bouncer_port):
        tokens = make_users(direct, "alice", "bob")
        database = urlsplit(direct["DATABASE_URL"])
        redis_port = free_port()
        env = production_env(
            direct,
            DATABASE_URL=f"postgres://postgres@127.0.0.1:{bouncer_port}{database.path}",
            DATABASE_POOLER="transaction",  # which turns prepared statements off: PgBouncer 1.18 does not carry them
            REDIS_URL=f"redis://127.0.0.1:{redis_port}/0",
            SESSION_CREATE_RATE=f"{SESSION_CREATE_RATE}/min",
            LOGIN_FAILURE_LIMIT="3",
            CATALOG_APPROVALS="1",
            DATABASE_LOCK_TIMEOUT_MS=str(LOCK_TIMEOUT_MS),
        )
        with redis_server(redis_port), serving("make-serve", env) as a, serving("make-serve", env) as b:
            yield a, b, tokens, direct, bouncer_port


def _auth(token):
    return {"Authorization": f"Token {token}"}


RELEASE_STAFF = """
from django.contrib.auth.models import Permission, User
for name, codename in [("approver", "approve_revision"), ("publisher", "publish_revision")]:
    user = User.objects.get(username=name)
    user.is_staff = True
    user.save()
    user.user_permissions.add(
        *Permission.objects.filter(content_type__app_label="modes", codename__in=[codename, "view_catalogrevision"])
    )
"""
EDIT = """
from modes.models import AgentMode
from modes.services import catalog_change
mode = AgentMode.objects.get(key="general")
mode.when_to_use = "Use this mode for everyday questions, as published through host A."
with catalog_change(by=None):
    mode.save()
"""


def test_a_publication_through_one_host_is_served_by_the_other_on_its_next_request(hosts):
    a, b, tokens, direct, _ = hosts
    staff = make_users(direct, "approver", "publisher")
    run_django(direct, RELEASE_STAFF)
    run_django({**direct, "CATALOG_APPROVALS": "1"}, EDIT)  # as the hosts are configured: a change waits for review
    newest = requests.get(f"{a.base}/api/catalog/revisions/", headers=_auth(staff["approver"]), timeout=10).json()
    pending = newest["results"][0]["revision"]
    assert newest["results"][0]["status"] == "pending"

    def listed(host):
        """The revision an agent is told of, and whether its system prompt over REST and its MCP instructions
        have the new sentence."""
        headers = _auth(tokens["alice"])
        revision = requests.get(f"{host.base}/api/modes/", headers=headers, timeout=10).json()["catalogRevision"]
        prompt = requests.get(f"{host.base}/api/system-prompt/", headers=headers, timeout=10).text
        initialize = {
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        }
        mcp = requests.post(
            f"{host.base}/mcp/", json=initialize, timeout=10,
            headers={"Authorization": f"Bearer {tokens['alice']}", "Accept": "application/json, text/event-stream"},
        ).json()["result"]["instructions"]
        return revision, "as published through host A" in prompt, "as published through host A" in mcp

    before = {host.base: listed(host) for host in (a, b)}
    assert all(revision < pending and not rest and not mcp for revision, rest, mcp in before.values())
    revision = f"{a.base}/api/catalog/revisions/{pending}"
    assert requests.post(f"{revision}/approve/", headers=_auth(staff["approver"]), timeout=10).status_code == 200
    assert requests.post(f"{revision}/publish/", headers=_auth(staff["publisher"]), timeout=10).status_code == 200

    assert listed(b) == (pending, True, True)


def test_session_creations_count_against_one_limit_across_both_hosts(hosts):
    a, b, tokens, _, _ = hosts
    answers = [
        requests.post(f"{host.base}/api/sessions/", json={}, headers=_auth(tokens["bob"]), timeout=10).status_code
        for host in (a, b, a, b, a)
    ]
    assert answers == [201] * SESSION_CREATE_RATE + [429]


def test_failed_logins_on_both_hosts_lock_the_user_out_of_both(hosts):
    a, b, _, direct, _ = hosts
    make_users(direct, "carol")
    wrong = [
        requests.post(f"{host.base}/api/token/", json={"username": "carol", "password": "not-it"}, timeout=10).status_code
        for host in (a, b, a)
    ]
    assert wrong == [400, 400, 429]  # the third failure (LOGIN_FAILURE_LIMIT) is already answered as a lockout
    for host in (a, b):
        right = requests.post(
            f"{host.base}/api/token/", json={"username": "carol", "password": "carol-password-123"}, timeout=10
        )
        assert right.status_code == 429, right.text


def test_mode_changes_of_one_session_sent_to_both_hosts_at_once_lose_no_audit_row(hosts):
    a, b, tokens, direct, bouncer_port = hosts
    headers = _auth(tokens["alice"])
    session = requests.post(f"{a.base}/api/sessions/", json={}, headers=headers, timeout=10).json()["id"]
    acknowledged, lock = [], threading.Lock()

    def change(number):
        host = (a, b)[number % 2]
        mode = ("ddr_authoring", "general")[number % 2]
        body = {"sessionId": session, "arguments": {"mode": mode, "branch": False, "reason": f"Change {number}."}}
        answer = requests.post(f"{host.base}/api/tools/agent_change_mode/invoke/", json=body, headers=headers, timeout=30)
        if answer.status_code == 200 and answer.json()["successful"]:
            with lock:
                acknowledged.append(f"Change {number}.")

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(change, range(40)))

    rows = run_django_json(direct, (
        "import json; from sessions_app.models import ModeChange; "
        f"print(json.dumps(list(ModeChange.objects.filter(session_id='{session}').order_by('id')"
        ".values_list('reason', 'from_mode__key', 'to_mode__key'))))"
    ))
    assert len(acknowledged) == 40
    assert sorted(reason for reason, _, _ in rows) == sorted(acknowledged)
    assert all(before[2] == after[1] for before, after in zip(rows, rows[1:])), "each change starts where the last ended"
    database = urlsplit(direct["DATABASE_URL"]).path.lstrip("/")
    assert _transactions_through_pgbouncer(bouncer_port, database) >= 40, "the hosts reach PostgreSQL through PgBouncer"


def _transactions_through_pgbouncer(port, database) -> int:
    """PgBouncer's count of the transactions it has passed to database (its console speaks simple queries only)."""
    stats = subprocess.run(
        ["psql", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-d", "pgbouncer", "-AF,", "-c", "SHOW STATS"],
        check=True, capture_output=True, text=True, timeout=10,
    ).stdout.splitlines()
    header = stats[0].split(",")
    for line in stats[1:]:
        row = dict(zip(header, line.split(",")))
        if row.get("database") == database:
            return int(row["total_xact_count"])
    return 0


def test_behind_the_pooler_a_mode_change_on_a_locked_session_still_answers_within_the_bound(hosts):
    """Behind PgBouncer each transaction sets its own lock timeout (a connection's own would not follow it)."""
    a, _, tokens, direct, _ = hosts
    headers = _auth(tokens["alice"])
    session = requests.post(f"{a.base}/api/sessions/", json={}, headers=headers, timeout=10).json()["id"]
    body = {"sessionId": session, "arguments": {"mode": "ddr_authoring", "branch": False, "reason": "Locked out."}}
    with psycopg.connect(direct["DATABASE_URL"]) as holder:  # a stuck admin script, straight to PostgreSQL
        holder.execute("SELECT id FROM sessions_app_agentsession WHERE id = %s FOR UPDATE", [session])
        started = time.monotonic()
        answer = requests.post(f"{a.base}/api/tools/agent_change_mode/invoke/", json=body, headers=headers, timeout=30)
        seconds = time.monotonic() - started
        holder.rollback()
    assert LOCK_TIMEOUT_MS / 1000 <= seconds < LOCK_TIMEOUT_MS / 1000 + 3
    assert answer.json() == {
        "successful": False, "result": None, "errorMessage": "ModeChangeTool failed to change the session mode."
    }
    changes = requests.get(f"{a.base}/api/sessions/{session}/mode-changes/", headers=headers, timeout=10).json()
    assert changes["results"] == []


STAGED_TO_HALF = """
import json
from decimal import Decimal
from django.contrib.auth.models import Permission, User
from modes.catalog import published_release
from modes.models import AgentMode, CatalogHead
from modes.releases import publish_revision
from modes.rollouts import Staging
from modes.services import catalog_change
from sessions_app.services import create_session
stager = User.objects.get(username="stager")
stager.is_staff = True
stager.save()
granted = ["publish_revision", "publish_unreviewed_revision", "view_catalogrevision"]
stager.user_permissions.add(*Permission.objects.filter(content_type__app_label="modes", codename__in=granted))
mode = AgentMode.objects.get(key="general")
mode.when_to_use = "Use this mode for everyday questions, as rolled out to half of the sessions."
with catalog_change(by=None):
    mode.save()
number = CatalogHead.objects.get(pk=1).latest
publish_revision(number=number, user=stager, staging=Staging(share=Decimal(50)))
release, alice = published_release(), User.objects.get(username="alice")
sessions = [create_session(release=release, owner=alice, org=None) for _ in range(24)]
print(json.dumps({"staged": number, "sessions": {str(session.pk): session.catalog_revision for session in sessions}}))
"""


def test_a_rollout_serves_each_session_the_same_revision_on_both_hosts_and_an_abort_reaches_both(hosts):
    a, b, tokens, direct, _ = hosts
    stager = make_users(direct, "stager")["stager"]
    rolled = run_django_json({**direct, "CATALOG_APPROVALS": "1"}, STAGED_TO_HALF)
    sessions, staged = rolled["sessions"], rolled["staged"]
    assert staged in set(sessions.values()) and len(set(sessions.values())) == 2  # all on one side: 2 in 2**24
    try:
        for session, revision in sessions.items():
            for host in (a, b):
                assert _served(host, tokens["alice"], session) == (revision, revision), (host.base, session)
    finally:
        aborted = requests.post(f"{b.base}/api/catalog/rollout/abort/", headers=_auth(stager), timeout=10)
    assert aborted.status_code == 200, aborted.text
    control = aborted.json()["control"]
    for session in sessions:
        assert _served(a, tokens["alice"], session) == (control, control)


def _served(host, token, session):
    """The revision a session is served on host: its context over REST, agent_list_modes through the mcp SDK."""
    context = requests.get(f"{host.base}/api/sessions/{session}/context/", headers=_auth(token), timeout=10).json()
    _, listed = asyncio.run(
        in_session(f"{host.base}/mcp/sessions/{session}/", token, lambda mcp: mcp.call_tool("agent_list_modes", {}))
    )
    return context["catalogRevision"], listed.structured_content["catalogRevision"]
