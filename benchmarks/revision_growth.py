"""
How much the database grows per catalog edit: a scratch PostgreSQL database, the three seed modes plus 297
custom ones (benchmarks/volume.py's catalog), then 1,000 one-field edits of one mode at a time through the
service that records revisions (each its own revision, as an admin save is); prints pg_database_size and the
revision tables' pg_total_relation_size before and after, the time per edit, and the time to rebuild the
newest and the first revision. The database is dropped afterwards.

    .venv/bin/python benchmarks/revision_growth.py [--edits 1000] [--modes 300] [--project DIR]

--project runs it on another checkout of the project (e.g. a worktree of the branch before a change), with
this script unchanged. Needs PostgreSQL at 127.0.0.1:5432 (user postgres).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

SERVER = "postgres://postgres@127.0.0.1:5432"
REVISION_TABLES = "SELECT relname FROM pg_class WHERE relkind = 'r' AND relname LIKE 'modes_catalogrevision%'"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=1000)
    parser.add_argument("--modes", type=int, default=300)
    parser.add_argument("--project", type=Path, default=Path(__file__).resolve().parent.parent)
    options = parser.parse_args()
    project = options.project.resolve()
    sys.path.insert(0, str(project))

    import psycopg

    name = f"aptix_revision_growth_{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "DATABASE_URL": f"{SERVER}/{name}", "SECRET_KEY": "benchmark-only-not-a-secret",
           "DJANGO_SETTINGS_MODULE": "aptix_site.settings", "SECURE_SSL_REDIRECT": "0"}
    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        manage = [sys.executable, "manage.py"]
        subprocess.run([*manage, "migrate", "--noinput", "-v0"], cwd=project, env=env, check=True)
        from benchmarks.volume import _catalog  # the volume benchmark's custom modes

        with tempfile.NamedTemporaryFile("w", suffix=".json") as catalog:
            json.dump(_catalog(options.modes), catalog)
            catalog.flush()
            subprocess.run([*manage, "import_modes", catalog.name], cwd=project, env=env, check=True, capture_output=True)
        os.environ.update(env)
        os.chdir(project)
        return measure(options.edits)
    finally:
        with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def sizes(connection) -> dict:
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")  # so that the free space of updated rows is not counted as growth
        cursor.execute("SELECT pg_database_size(current_database())")
        total = cursor.fetchone()[0]
        cursor.execute(f"SELECT relname, pg_total_relation_size(relname::regclass) FROM ({REVISION_TABLES}) t ORDER BY 1")
        return {"database": total, **dict(cursor.fetchall())}


def measure(edits: int) -> int:
    import django

    django.setup()
    from django.db import connection

    from modes.catalog import catalog_at_revision
    from modes.models import AgentMode, CatalogRevision
    from modes.services import catalog_change

    modes = list(AgentMode.objects.filter(key__startswith="volume_"))
    first = CatalogRevision.objects.order_by("number").first().number
    before = sizes(connection)
    started = time.perf_counter()
    for edit in range(edits):
        mode = modes[edit % len(modes)]
        mode.description = f"A custom mode of the volume benchmark, edited {edit} times."
        with catalog_change(by=None):
            mode.save()
    per_edit = (time.perf_counter() - started) / edits
    after = sizes(connection)
    newest = CatalogRevision.objects.order_by("-number").first().number
    rebuild = {}
    for number in (newest, first):
        started = time.perf_counter()
        catalog_at_revision(number)
        rebuild[number] = time.perf_counter() - started

    print(f"{AgentMode.objects.count()} modes, {edits} one-field edits ({per_edit * 1000:.1f} ms each), revisions "
          f"{first}..{newest}")
    for table in after:
        grown = after[table] - before.get(table, 0)
        print(f"  {table}: {before.get(table, 0) / 2**20:.1f} MB -> {after[table] / 2**20:.1f} MB "
              f"(+{grown / 2**20:.1f} MB, {grown / edits / 1024:.1f} KB per edit)")
    for number, seconds in rebuild.items():
        print(f"  rebuilding revision {number}: {seconds * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
