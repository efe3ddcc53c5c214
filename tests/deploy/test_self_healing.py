"""
`make serve` heals itself, on PostgreSQL, under a load of mode changes and context reads from several threads:
a worker killed with SIGKILL is replaced and fails no more requests than it held; a SIGHUP reload fails none,
replaces every worker and serves the code on disk (a deploy that cannot start leaves the old workers serving);
a mode change on a session locked by another transaction answers within the lock bound while the others go on.
After each, every change answered as successful has its audit row, and no refused one has.

The app is served from a copy of the project, whose code the tests change as a deploy would.
"""

import itertools
import json
import os
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pytest
import requests
from django.contrib.auth import get_user_model

from sessions_app.models import AgentSession, ModeChange

from ..servers import child_processes, make_users, production_env, project_copy, scratch_database, serving

pytestmark = pytest.mark.postgres(reason="bounded lock waits are PostgreSQL's")
WORKERS = 2
THREADS_PER_WORKER = 2  # GRANIAN_BLOCKING_THREADS, and so GRANIAN_BACKPRESSURE (deploy/serve)
LOCK_TIMEOUT_MS = 1000
LOAD_THREADS = 6
MODE_CHANGE_FAILED = "ModeChangeTool failed to change the session mode."
HEALTHZ = 'JsonResponse({"status": "ok"})'


@dataclass
class Served:
    server: object
    root: Path
    env: dict
    tokens: dict
    sessions: list = field(default_factory=list)

    def headers(self, name="alice"):
        return {"Authorization": f"Token {self.tokens[name]}"}

    def serve_script(self) -> int:
        """deploy/serve's pid: make's child."""
        return _only(child_processes(self.server.process.pid), "make serve's child")

    def granian(self) -> int:
        """The pid of the Granian now serving (there are two for a moment during a reload)."""
        return _only([pid for pid in child_processes(self.serve_script()) if b"granian" in _cmdline(pid)], "Granian")

    def workers(self) -> set[int]:
        return set(child_processes(self.granian()))

    def audited_reasons(self) -> set[str]:
        with psycopg.connect(self.env["DATABASE_URL"]) as db:
            return {reason for (reason,) in db.execute(f"SELECT reason FROM {ModeChange._meta.db_table}")}


def _only(pids, what) -> int:
    assert len(pids) == 1, f"not one {what}: {[_cmdline(pid) for pid in pids]}"
    return pids[0]


def _cmdline(pid) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return b""


@pytest.fixture(scope="module")
def served():
    with project_copy() as root, scratch_database() as env:
        tokens = make_users(env, "alice", "carol")
        env = production_env(
            env,
            DATABASE_LOCK_TIMEOUT_MS=str(LOCK_TIMEOUT_MS),
            SESSION_CREATE_RATE="100000/min",
            TOOL_INVOKE_RATE="100000/min",
        )
        with serving("make-serve", env, f"WORKERS={WORKERS}", root=root) as server:
            served = Served(server, root, env, tokens)
            for _ in range(LOAD_THREADS + 1):
                response = requests.post(f"{server.base}/api/sessions/", json={}, headers=served.headers(), timeout=30)
                served.sessions.append(response.json()["id"])
            yield served


class Load:
    """
    Threads, each changing the mode of a session of its own and reading its context, until stopped. Every
    mode change has a reason of its own, so that its audit row can be found; each is kept with its answer.
    """

    def __init__(self, served: Served):
        self.served = served
        self.stopping = threading.Event()
        self.changes = []  # (reason, status, successful)
        self.failures = []  # (what, status, body, headers)
        self.answered = 0
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._run, args=(session, index))
            for index, session in enumerate(served.sessions[:LOAD_THREADS])
        ]

    def __enter__(self):
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        for thread in self._threads:
            thread.join(timeout=60)

    def _run(self, session, index):
        base, headers = self.served.server.base, self.served.headers()
        with requests.Session() as http:  # keep-alive, as an agent's client
            for count in itertools.count():
                if self.stopping.is_set():
                    return
                reason = f"load {index} {count} {time.monotonic_ns()}"
                arguments = {"mode": ("ddr_authoring", "general")[count % 2], "branch": False, "reason": reason}
                change, change_error = self._answer(
                    http.post,
                    f"{base}/api/tools/agent_change_mode/invoke/",
                    json={"arguments": arguments, "sessionId": session},
                    headers=headers,
                )
                read, read_error = self._answer(http.get, f"{base}/api/sessions/{session}/context/", headers=headers)
                with self._lock:
                    successful = change is not None and change.status_code == 200 and change.json()["successful"]
                    self.changes.append((reason, None if change is None else change.status_code, successful))
                    for what, response, error in (("change", change, change_error), ("read", read, read_error)):
                        self.answered += 1
                        if response is None:
                            self.failures.append((what, None, error, {}))
                        elif response.status_code != 200:
                            self.failures.append((what, response.status_code, response.text, response.headers))

    @staticmethod
    def _answer(send, url, **kwargs):
        """(response, None), or (None, what went wrong) where the connection failed before a whole one came."""
        try:
            return send(url, timeout=30, **kwargs), None
        except requests.RequestException as error:
            return None, repr(error)

    def acknowledged(self) -> set[str]:
        return {reason for reason, _, successful in self.changes if successful}

    def refused(self) -> set[str]:
        return {reason for reason, _, successful in self.changes if not successful}


def wait_for(condition, seconds, message):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, message()
        time.sleep(0.1)


def assert_every_acknowledged_change_audited(served, load, *, may_have_row=frozenset()):
    """Every change answered as successful has its audit row; a refused one has none, but for those in
    may_have_row (whose worker died after committing: the session's mode changes show them)."""
    audited = served.audited_reasons()
    assert load.acknowledged() <= audited
    assert (load.refused() & audited) <= may_have_row


def test_a_worker_killed_with_sigkill_is_replaced_and_fails_no_more_than_it_held(served):
    workers = served.workers()
    assert len(workers) == WORKERS
    victim = min(workers)
    with Load(served) as load:
        time.sleep(1.5)
        os.kill(victim, signal.SIGKILL)
        wait_for(
            lambda: len(served.workers()) == WORKERS and victim not in served.workers(),
            10,
            lambda: f"not replaced within 10 s: {served.workers()}; {served.server.output()[-1500:]}",
        )
        # Until the replacement has loaded the code (Granian logs "Started worker-N" once it serves), a deploy the
        # next test writes to disk would be what it loads.
        wait_for(
            lambda: "Started worker" in served.server.output().rpartition("Respawning worker")[2],
            30,
            lambda: f"the replacement did not start within 30 s: {served.server.output()[-1500:]}",
        )
        time.sleep(1.5)  # the load goes on against the replacement
    assert load.answered > 50
    assert len(load.failures) <= THREADS_PER_WORKER, load.failures
    for _, status, body, headers in load.failures:
        assert status == 503, body
        assert headers["Retry-After"] == "5" and "detail" in json.loads(body), (body, dict(headers))
    in_flight = {reason for reason, status, _ in load.changes if status == 503}
    assert_every_acknowledged_change_audited(served, load, may_have_row=in_flight)
    assert requests.get(f"{served.server.base}/readyz", timeout=10).status_code == 200


@contextmanager
def deployed(served, change, path="health/views.py"):
    """The copy's file at path as change(text) makes it, as a deploy would; put back afterwards (the next
    worker to start, a replacement, loads what is on disk)."""
    views = served.root / path
    working = views.read_text()
    views.write_text(change(working))
    try:
        yield
    finally:
        views.write_text(working)


def reload_under_load(served, outcome: str):
    """SIGHUP to deploy/serve under load; the load, and what the log says of that reload once it says outcome."""
    with Load(served) as load:
        time.sleep(1)
        log = reload(served, outcome)
        time.sleep(0.5)  # the load goes on after it
    return load, log


def reload(served, outcome: str) -> str:
    """SIGHUP to deploy/serve; what the log says of this reload (only), once it says outcome."""
    earlier = served.server.output().count("deploy/serve: reloading")

    def this_reload():
        reloads = served.server.output().split("deploy/serve: reloading")
        return reloads[earlier + 1] if len(reloads) > earlier + 1 else ""

    os.kill(served.serve_script(), signal.SIGHUP)
    wait_for(lambda: outcome in this_reload(), 60, lambda: f"no {outcome!r} within 60 s: {this_reload()[-2000:]}")
    return this_reload()


def test_sighup_reloads_every_worker_with_the_code_on_disk_failing_no_request(served):
    marker = f"deploy {time.monotonic_ns()}"
    before = served.workers()
    new_healthz = f'JsonResponse({{"status": "ok", "deployed": "{marker}"}})'
    with deployed(served, lambda code: code.replace(HEALTHZ, new_healthz)):
        load, _ = reload_under_load(served, "reloaded")
    assert load.failures == []
    assert load.answered > 50
    after = served.workers()
    assert len(after) == WORKERS and not after & before
    assert requests.get(f"{served.server.base}/healthz", timeout=10).json()["deployed"] == marker
    assert_every_acknowledged_change_audited(served, load)


def test_a_deploy_that_cannot_start_leaves_the_old_workers_serving_and_is_logged(served):
    before = served.workers()
    with deployed(served, lambda code: code + '\nraise RuntimeError("a deploy that cannot start")\n'):
        load, log = reload_under_load(served, "reload failed")
    assert "a deploy that cannot start" in log
    # Refused as it loads, once: not after RELOAD_TIMEOUT of workers respawned.
    assert "reload failed: the new code does not load" in log and "old workers go on serving" in log
    assert load.failures == []
    assert served.workers() == before
    assert_every_acknowledged_change_audited(served, load)


def test_sighup_rereads_nginxs_configuration_when_it_changed(served):
    marker = f"config {time.monotonic_ns()}"
    header = f"server_tokens off;\n    add_header X-Deployed-Config \"{marker}\" always;"
    with deployed(served, lambda conf: conf.replace("server_tokens off;", header), path="deploy/nginx.conf"):
        reload(served, "reloaded")
        assert requests.get(f"{served.server.base}/healthz", timeout=10).headers["X-Deployed-Config"] == marker
    reload(served, "reloaded")  # the configuration the other tests expect, as on disk again
    assert "X-Deployed-Config" not in requests.get(f"{served.server.base}/healthz", timeout=10).headers


def test_a_mode_change_on_a_locked_session_answers_within_the_bound_while_others_go_on(served):
    locked = served.sessions[-1]
    base, headers = served.server.base, served.headers()
    reason = f"on a locked session {time.monotonic_ns()}"
    with psycopg.connect(served.env["DATABASE_URL"]) as holder:  # a stuck admin script
        holder.execute(f"SELECT id FROM {AgentSession._meta.db_table} WHERE id = %s FOR UPDATE", [locked])
        outcome = {}

        def change_locked_session():
            started = time.monotonic()
            outcome["response"] = requests.post(
                f"{base}/api/tools/agent_change_mode/invoke/",
                json={"arguments": {"mode": "ddr_authoring", "branch": False, "reason": reason}, "sessionId": locked},
                headers=headers,
                timeout=30,
            )
            outcome["seconds"] = time.monotonic() - started

        waiting = threading.Thread(target=change_locked_session)
        with Load(served) as load:
            waiting.start()
            waiting.join(timeout=30)
        holder.rollback()
    assert LOCK_TIMEOUT_MS / 1000 <= outcome["seconds"] < LOCK_TIMEOUT_MS / 1000 + 3
    assert (outcome["response"].status_code, outcome["response"].headers["Retry-After"]) == (503, "5")
    assert outcome["response"].json() == {"successful": False, "result": None, "errorMessage": MODE_CHANGE_FAILED}
    assert "canceling statement due to lock timeout" in served.server.output()  # the cause, logged
    assert load.failures == [] and load.answered > 10  # the others went on meanwhile
    assert reason not in served.audited_reasons()
    context = requests.get(f"{base}/api/sessions/{locked}/", headers=headers, timeout=10).json()
    assert context["mode"] == "general"
    assert_every_acknowledged_change_audited(served, load)


def test_a_request_that_waits_past_the_bound_on_another_lock_is_503_with_retry_after(served):
    """A new token waits for the user's row (the bound on a user's tokens), which another transaction holds."""
    with psycopg.connect(served.env["DATABASE_URL"]) as holder:
        users = get_user_model()._meta.db_table
        holder.execute(f"SELECT id FROM {users} WHERE username = 'carol' FOR UPDATE")
        response = requests.post(
            f"{served.server.base}/api/token/",
            json={"username": "carol", "password": "carol-password-123", "name": "tests"},
            timeout=30,
        )
        holder.rollback()
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "5"
    assert response.json() == {"detail": "The service's database is busy just now; try again in a few seconds."}
