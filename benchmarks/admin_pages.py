"""
Times the admin's pages over the large tables (and the API's lists, for their query plans) in-process, as a superuser through Django's test client, against
the database the environment names: per page, the median server time of several loads, its query count, and
every large table that one of its queries reads by sequential scan (from PostgreSQL's EXPLAIN). Prints one
JSON object. Run by benchmarks/volume.py, once per database.

    .venv/bin/python -m benchmarks.admin_pages SESSION_ID [--loads 5]
"""

import argparse
import json
import os
import re
import statistics
import time

import django

# The tables that grow without bound: once one holds LARGE rows, a page must never read it whole (below that,
# reading a few pages of a small table whole is the planner's right choice).
GROWING_TABLES = (
    "sessions_app_agentsession", "sessions_app_modechange", "accounts_apitoken", "modes_catalogrevision",
    "modes_catalogrevisionentry",
)
LARGE = 10_000


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("session", help="A session with many mode changes.")
    parser.add_argument("--loads", type=int, default=5)
    options = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
    django.setup()

    from django.contrib.auth.models import User
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from accounts.models import ApiToken
    from modes.models import AgentMode, CatalogRevision
    from sessions_app.models import ModeChange

    admin = User.objects.filter(username="volume_admin").first() or User.objects.create_superuser("volume_admin")
    admin_client = Client(HTTP_HOST="127.0.0.1")
    admin_client.force_login(admin)
    mode = AgentMode.objects.get(key="general")
    pages = {
        "sessions": "/admin/sessions_app/agentsession/",
        "a session": f"/admin/sessions_app/agentsession/{options.session}/change/",
        "mode changes": "/admin/sessions_app/modechange/",
        "a session's mode changes": f"/admin/sessions_app/modechange/?session__id__exact={options.session}",
        "a mode change": f"/admin/sessions_app/modechange/{ModeChange.objects.order_by('-id').first().pk}/change/",
        "revisions": "/admin/modes/catalogrevision/",
        "a revision": f"/admin/modes/catalogrevision/{CatalogRevision.objects.order_by('-number').first().pk}/change/",
        "modes": "/admin/modes/agentmode/",
        "a mode": f"/admin/modes/agentmode/{mode.pk}/change/",
        "a mode's history": f"/admin/modes/agentmode/{mode.pk}/history/",
        "API tokens": "/admin/accounts/apitoken/",
        "an API token": f"/admin/accounts/apitoken/{ApiToken.objects.order_by('-id').first().pk}/change/",
        "users": "/admin/auth/user/",
    }
    # The API's lists and the agent's reads, as the benchmark's user (who owns the session): for their plans.
    owner = Client(HTTP_HOST="127.0.0.1")
    owner.force_login(User.objects.get(username="bench"))
    api_pages = {
        "API: sessions": "/api/sessions/",
        "API: a session's mode changes": f"/api/sessions/{options.session}/mode-changes/",
        "API: revisions": "/api/catalog/revisions/",
        "API: session context": f"/api/sessions/{options.session}/context/",
    }
    with connection.cursor() as cursor:
        cursor.execute("SELECT relname FROM pg_class WHERE relname = ANY(%s) AND reltuples >= %s", [list(GROWING_TABLES), LARGE])
        large_tables = [name for (name,) in cursor.fetchall()]
    large = re.compile(rf"Seq Scan on ({'|'.join(large_tables) or '(?!)'})\b")
    results = {}
    for name, url in {**pages, **api_pages}.items():
        client = owner if name in api_pages else admin_client
        client.get(url)  # warm: templates compiled, the catalog snapshot read
        timings = []
        for _ in range(options.loads):
            with CaptureQueriesContext(connection) as queries:
                started = time.perf_counter()
                response = client.get(url)
                timings.append((time.perf_counter() - started) * 1000)
        seq_scans = set()
        with connection.cursor() as cursor:
            for query in queries.captured_queries:
                if query["sql"].lstrip().upper().startswith("SELECT"):
                    cursor.execute("EXPLAIN " + query["sql"])
                    seq_scans.update(large.findall("\n".join(row[0] for row in cursor.fetchall())))
        results[name] = {
            "url": url,
            "status": response.status_code,
            "ms": round(statistics.median(timings), 1),
            "queries": len(queries.captured_queries),
            "seq_scans": sorted(seq_scans),
        }
    print(json.dumps(results))


if __name__ == "__main__":
    main()
