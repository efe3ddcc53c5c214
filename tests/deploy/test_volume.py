"""
At volume, on PostgreSQL: a database filled (benchmarks/fill.py) with 200,000 mode changes of one session
answers its pages by cursor, with the same queries as an almost empty one, and reads no growing table whole.
The speed at ten million rows is the volume benchmark's (make bench-volume); this is its cheap, exact part.
"""

import json
import subprocess
import sys

import pytest

from benchmarks.fill import Scale, fill
from benchmarks.harness import BENCH_USER_READS_REVISIONS, psql

from ..servers import ROOT, production_env, run_django_json, scratch_database

pytestmark = pytest.mark.postgres(reason="fills with PostgreSQL's generate_series; plans are PostgreSQL's")

SCALE = Scale(
    # The session's 200,000 among a million more: one session is a small part of the audit trail, as it is in a
    # real one, or the planner rightly reads the whole table to count that session's changes. Most sessions have
    # a few changes, as real ones do, which is what PostgreSQL expects of a session it plans for in general.
    users=100, organizations=10, tokens=1_000, sessions=50_000, mode_changes=1_200_000, hot_session_changes=200_000,
    own_sessions=300, revisions=1_000,
)
# The queries of each page, whatever the data: the admin's (listed in benchmarks/admin_pages.py) and the API's.
QUERIES = {
    "sessions": 7,
    "a session": 8,
    "mode changes": 5,
    "a session's mode changes": 6,
    "a mode change": 8,
    "revisions": 5,
    "a revision": 4,
    "modes": 8,  # and the latest revision, which its positions are edited at
    "a mode": 9,  # and the latest revision, which its form carries (a save after another is refused)
    "a mode's history": 4,  # the session, its user, the revisions that changed the mode, the mode's row
    "API tokens": 5,
    "an API token": 4,
    "users": 6,
    "API: sessions": 3,
    "API: a session's mode changes": 4,  # the login's session and user, the agent session, the page
    "API: revisions": 7,  # and the user's and groups' permissions (modes.view_catalogrevision)
    "API: session context": 4,
}

DEEP_PAGE = """
import json
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
client = Client(HTTP_HOST="127.0.0.1")
client.force_login(User.objects.get(username="bench"))
seen, url = [], "/api/sessions/{session}/mode-changes/?pageSize=200"
for _ in range(50):
    body = client.get(url).json()
    seen += [change["id"] for change in body["results"]]
    url = body["next"]
with CaptureQueriesContext(connection) as queries:
    page = client.get(url).json()
print(json.dumps({{"seen": seen, "page": [change["id"] for change in page["results"]],
                  "sql": [query["sql"] for query in queries.captured_queries]}}))
"""

# The deep page's query as psycopg prepares it after a few runs, planned for no session in particular (as
# PostgreSQL plans a prepared statement once its custom plans cost no less): the rows of the audit trail it reads.
GENERIC_PLAN_ROWS = """
import json
from django.db import connection
from sessions_app.models import AgentSession
from sessions_app.selectors import mode_changes_of
changes = mode_changes_of(session=AgentSession.objects.get(pk="{session}")).order_by("id")
after = changes.values_list("id", flat=True)[10_000]
sql, params = changes.filter(id__gt=after)[:51].query.sql_with_params()
for number in range(1, len(params) + 1):
    sql = sql.replace("%s", f"${{number}}", 1)
with connection.cursor() as cursor:
    cursor.execute("SET plan_cache_mode = force_generic_plan")
    cursor.execute(f"PREPARE page AS {{sql}}")
    cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE page('{session}', {{after}})")
    plan = cursor.fetchone()[0]
plan = json.loads(plan) if isinstance(plan, str) else plan
def rows(node):
    own = node["Actual Rows"] if node.get("Relation Name") == "sessions_app_modechange" else 0
    return own + sum(rows(child) for child in node.get("Plans", ()))
print(json.dumps(rows(plan[0]["Plan"])))
"""


@pytest.fixture(scope="module")
def filled():
    """A scratch database with the benchmark's user, token and session, filled to SCALE: (env, session id)."""
    with scratch_database() as env:
        env = production_env(env)
        prepared = subprocess.run(
            [sys.executable, "-m", "benchmarks.prepare"], cwd=ROOT, env={**env, "DJANGO_SETTINGS_MODULE": "benchmarks.settings"},
            check=True, capture_output=True, text=True, timeout=60,
        ).stdout
        session = json.loads(prepared.strip().splitlines()[-1])["session"]
        psql(BENCH_USER_READS_REVISIONS, env["DATABASE_URL"])
        fill(env["DATABASE_URL"], scale=SCALE, hot_session=session, progress=lambda text: None)
        yield env, session


@pytest.fixture(scope="module")
def pages(filled):
    env, session = filled
    output = subprocess.run(
        [sys.executable, "-m", "benchmarks.admin_pages", session, "--loads", "1"], cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "benchmarks.settings"}, check=True, capture_output=True, text=True,
        timeout=120,
    ).stdout
    return json.loads(output.strip().splitlines()[-1])


def test_every_page_answers_with_the_same_number_of_queries_as_on_an_empty_database(pages):
    assert {name: (page["status"], page["queries"]) for name, page in pages.items()} == {
        name: (200, count) for name, count in QUERIES.items()
    }


def test_no_page_reads_the_mode_changes_whole(pages):
    assert {name: page["seq_scans"] for name, page in pages.items() if "sessions_app_modechange" in page["seq_scans"]} == {}


def test_a_page_10000_changes_deep_continues_from_its_cursor_without_an_offset(filled):
    env, session = filled
    found = run_django_json(env, DEEP_PAGE.format(session=session))
    assert len(found["seen"]) == 10_000
    assert found["seen"] == sorted(found["seen"]), "oldest first, no row twice"
    assert found["page"][0] > found["seen"][-1] and len(found["page"]) == 200
    listing = [sql for sql in found["sql"] if "sessions_app_modechange" in sql and "LIMIT" in sql]
    assert listing and all("OFFSET" not in sql for sql in listing), listing


def test_a_deep_page_reads_only_its_rows_under_a_plan_made_for_any_session(filled):
    env, session = filled
    assert run_django_json(env, GENERIC_PLAN_ROWS.format(session=session)) == 51
