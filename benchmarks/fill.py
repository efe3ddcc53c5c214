"""
Fills a migrated PostgreSQL database of the app to a scale, fast: users, organizations, API tokens, sessions
and mode changes made by `INSERT ... SELECT generate_series` in the database itself, never row by row through
the ORM. The large tables' secondary indexes are dropped first and built again once the rows are in (as a
restore does), and foreign-key triggers are off during the fill (`session_replication_role`; the rows are
made to satisfy them). Used by benchmarks/volume.py and, at a small scale, by the tests.
"""

import time
from dataclasses import dataclass

import psycopg

LARGE_TABLES = (
    "auth_user", "accounts_apitoken", "sessions_app_agentsession", "sessions_app_modechange", "modes_catalogrevision",
    "modes_catalogrevisionentry",
)


@dataclass(frozen=True)
class Scale:
    users: int = 10_000
    sessions: int = 1_000_000
    mode_changes: int = 10_000_000
    hot_session_changes: int = 100_000  # on the one session the benchmark drives
    own_sessions: int = 1_000_000  # of the benchmark's user: an agent back-end owns every session it runs
    tokens: int = 100_000
    organizations: int = 100
    revisions: int = 10_000  # catalog revisions, each an edit of one mode, all published in their turn


def fill(url: str, *, scale: Scale, hot_session: str, progress=print):
    """Adds scale's rows to the database at url; hot_session gets its mode changes, and its owner more sessions."""
    with psycopg.connect(url, autocommit=True) as connection:
        indexes = _secondary_indexes(connection)
        for name, _ in indexes:
            connection.execute(f'DROP INDEX "{name}"')
        connection.execute("SET session_replication_role = replica")
        for label, statements in _fill_steps(scale):
            started = time.monotonic()
            with connection.transaction():
                for statement in statements:
                    connection.execute(statement, {**scale.__dict__, "hot_session": hot_session})
            progress(f"  filled {label} in {time.monotonic() - started:.0f} s")
        connection.execute("SET session_replication_role = DEFAULT")
        started = time.monotonic()
        for _, definition in indexes:
            connection.execute(definition)
        progress(f"  built {len(indexes)} indexes in {time.monotonic() - started:.0f} s")
        started = time.monotonic()
        connection.execute("VACUUM ANALYZE")
        progress(f"  vacuumed and analyzed in {time.monotonic() - started:.0f} s")


def _secondary_indexes(connection) -> list[tuple[str, str]]:
    """The large tables' indexes that back no constraint (those stay: the fill must satisfy them)."""
    return connection.execute(
        "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = ANY(%s) "
        "AND indexname NOT IN (SELECT conname FROM pg_constraint)",
        [list(LARGE_TABLES)],
    ).fetchall()


def _fill_steps(scale):
    yield f"{scale.users:,} users in {scale.organizations} organizations", [
        "INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email, is_staff, "
        "is_active, date_joined) SELECT '!', false, 'volume_' || g, '', '', '', false, true, now() "
        "FROM generate_series(1, %(users)s) g",
        "INSERT INTO accounts_organization (name, slug) SELECT 'Volume ' || g, 'volume-' || g "
        "FROM generate_series(1, %(organizations)s) g",
        # Numbered, so that the rows below can pick the n-th one with a hash join.
        "CREATE TEMP TABLE volume_orgs AS SELECT id, row_number() OVER (ORDER BY id) - 1 AS n "
        "FROM accounts_organization WHERE slug LIKE 'volume-%%'",
        "CREATE TEMP TABLE volume_users AS SELECT u.id, o.id AS org_id, row_number() OVER (ORDER BY u.id) - 1 AS n "
        "FROM auth_user u JOIN volume_orgs o ON o.n = u.id %% %(organizations)s WHERE u.username LIKE 'volume\\_%%'",
        "INSERT INTO accounts_membership (user_id, organization_id) SELECT id, org_id FROM volume_users",
        "CREATE TEMP TABLE volume_modes AS SELECT id, row_number() OVER (ORDER BY position, key) - 1 AS n "
        "FROM modes_agentmode",
    ]
    yield f"{scale.tokens:,} API tokens", [
        "INSERT INTO accounts_apitoken (digest, token_key, user_id, created, expiry, name, last_used_at) "
        "SELECT encode(sha512(('volume token ' || g)::bytea), 'hex'), left(md5(g::text), 15), u.id, "
        "now() - g * interval '1 minute', NULL, 'volume-' || g, NULL "
        "FROM generate_series(1, %(tokens)s) g JOIN volume_users u ON u.n = g %% %(users)s",
    ]
    yield f"{scale.sessions:,} sessions and {scale.own_sessions:,} of the benchmark's user", [
        "CREATE TEMP TABLE volume_sessions AS SELECT gen_random_uuid() AS id, u.id AS owner_id, u.org_id, "
        "m.id AS mode_id, g - 1 AS n, now() - g * interval '1 second' AS created_at "
        "FROM generate_series(1, %(sessions)s) g JOIN volume_users u ON u.n = g %% %(users)s "
        "JOIN volume_modes m ON m.n = g %% (SELECT count(*) FROM volume_modes)",
        "INSERT INTO sessions_app_agentsession (id, title, created_at, updated_at, mode_id, org_id, owner_id, "
        "parent_id, catalog_revision) SELECT id, '', created_at, created_at, mode_id, org_id, owner_id, NULL, 1 "
        "FROM volume_sessions",
        "INSERT INTO sessions_app_agentsession (id, title, created_at, updated_at, mode_id, org_id, owner_id, "
        "parent_id, catalog_revision) SELECT gen_random_uuid(), 'volume ' || g, now() - g * interval '1 second', "
        "now() - g * interval '1 second', s.mode_id, s.org_id, s.owner_id, NULL, 1 "
        "FROM generate_series(1, %(own_sessions)s) g, "
        "(SELECT mode_id, org_id, owner_id FROM sessions_app_agentsession WHERE id = %(hot_session)s) s",
    ]
    others = scale.mode_changes - scale.hot_session_changes
    yield f"{others:,} mode changes over the sessions", [
        "INSERT INTO sessions_app_modechange (reason, branch, changed_at, branch_session_id, changed_by_id, "
        "from_mode_id, org_id, session_id, to_mode_id, catalog_revision, confirmed_by) "
        "SELECT 'Volume.', false, s.created_at + g * interval '1 millisecond', NULL, s.owner_id, a.id, s.org_id, "
        "s.id, b.id, 1, 'model' FROM generate_series(1, %(mode_changes)s - %(hot_session_changes)s) g "
        "JOIN volume_sessions s ON s.n = g %% %(sessions)s "
        "JOIN volume_modes a ON a.n = g %% (SELECT count(*) FROM volume_modes) "
        "JOIN volume_modes b ON b.n = (g + 1) %% (SELECT count(*) FROM volume_modes)",
    ]
    yield f"{scale.revisions:,} catalog revisions", [
        # Each one stores one mode as it is now (a revision stores only what it changed), so that the catalog at
        # every revision is the rows' catalog; each was published in its turn, and the newest is published now.
        "CREATE TEMP TABLE volume_entries AS SELECT *, row_number() OVER (ORDER BY identity) - 1 AS n FROM "
        "(SELECT DISTINCT ON (identity) kind, identity, position, name, content, stamp FROM modes_catalogrevisionentry "
        "WHERE kind = 'mode' ORDER BY identity, revision_id DESC) latest WHERE content IS NOT NULL",
        "CREATE TEMP TABLE volume_revisions AS SELECT (SELECT max(number) FROM modes_catalogrevision) + g AS number, "
        "g %% (SELECT count(*) FROM volume_entries) AS n, now() - (%(revisions)s - g) * interval '1 minute' AS at "
        "FROM generate_series(1, %(revisions)s) g",
        "INSERT INTO modes_catalogrevision (number, created_at, summary, created_by_id, published_at, "
        "published_by_id, restores, unreviewed) SELECT r.number, r.at, 'mode ' || e.name || ': description', NULL, "
        "r.at, NULL, NULL, false FROM volume_revisions r JOIN volume_entries e ON e.n = r.n",
        "INSERT INTO modes_catalogrevisionentry (kind, identity, position, name, content, stamp, revision_id) "
        "SELECT e.kind, e.identity, e.position, e.name, e.content, e.stamp, r.number "
        "FROM volume_revisions r JOIN volume_entries e ON e.n = r.n",
        "UPDATE modes_cataloghead SET latest = (SELECT max(number) FROM volume_revisions), "
        "published = (SELECT max(number) FROM volume_revisions), published_at = now() WHERE id = 1",
    ]
    yield f"{scale.hot_session_changes:,} mode changes of the benchmark's session", [
        "INSERT INTO sessions_app_modechange (reason, branch, changed_at, branch_session_id, changed_by_id, "
        "from_mode_id, org_id, session_id, to_mode_id, catalog_revision, confirmed_by) "
        "SELECT 'Volume.', false, now() - (%(hot_session_changes)s - g) * interval '1 second', NULL, s.owner_id, "
        "CASE WHEN g %% 2 = 0 THEN general.id ELSE ddr.id END, s.org_id, s.id, "
        "CASE WHEN g %% 2 = 0 THEN ddr.id ELSE general.id END, 1, 'model' "
        "FROM generate_series(1, %(hot_session_changes)s) g, "
        "(SELECT id, org_id, owner_id FROM sessions_app_agentsession WHERE id = %(hot_session)s) s, "
        "(SELECT id FROM modes_agentmode WHERE key = 'general') general, "
        "(SELECT id FROM modes_agentmode WHERE key = 'ddr_authoring') ddr",
    ]
