"""
Database triggers that give the catalog version row a new random value on every
write to the modes table, whoever writes: the admin, an import, a migration,
QuerySet.update() or raw SQL. Random rather than counted, so a rolled-back
change can never be mistaken for a later one.

Migration 0003 installs and removes them; post_migrate installs them again
because SQLite drops a table's triggers whenever a migration rebuilds the table.
"""

from django.db import connections

SQLITE_EVENTS = ("INSERT", "UPDATE", "DELETE")

INSTALL = {
    "postgresql": [
        """
        CREATE OR REPLACE FUNCTION modes_bump_catalog_version() RETURNS trigger AS $$
        BEGIN
            UPDATE modes_catalogversion SET version = replace(gen_random_uuid()::text, '-', '');
            RETURN NULL;
        END;
        $$ LANGUAGE plpgsql
        """,
        """
        CREATE OR REPLACE TRIGGER modes_agentmode_bump_catalog_version
        AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON modes_agentmode
        FOR EACH STATEMENT EXECUTE FUNCTION modes_bump_catalog_version()
        """,
    ],
    "sqlite": [
        f"""
        CREATE TRIGGER IF NOT EXISTS modes_agentmode_bump_catalog_version_on_{event.lower()}
        AFTER {event} ON modes_agentmode
        BEGIN
            UPDATE modes_catalogversion SET version = lower(hex(randomblob(16)));
        END
        """
        for event in SQLITE_EVENTS
    ],
}

REMOVE = {
    "postgresql": [
        "DROP TRIGGER IF EXISTS modes_agentmode_bump_catalog_version ON modes_agentmode",
        "DROP FUNCTION IF EXISTS modes_bump_catalog_version()",
    ],
    "sqlite": [f"DROP TRIGGER IF EXISTS modes_agentmode_bump_catalog_version_on_{e.lower()}" for e in SQLITE_EVENTS],
}


def install(connection):
    _execute(connection, INSTALL)


def remove(connection):
    _execute(connection, REMOVE)


def reinstall_after_migrate(sender, using, **kwargs):
    connection = connections[using]
    tables = connection.introspection.table_names()
    if "modes_agentmode" in tables and "modes_catalogversion" in tables:
        install(connection)


def _execute(connection, statements_by_vendor):
    with connection.cursor() as cursor:
        for statement in statements_by_vendor.get(connection.vendor, []):
            cursor.execute(statement)
