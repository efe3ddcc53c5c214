"""
Database triggers that give the catalog version row a new random value on every write to a catalog table (the modes
and the declared tools), whoever writes: the admin, an import, a migration, QuerySet.update() or raw SQL. Random
rather than counted, so a rolled-back change can never be mistaken for a later one.

Migrations install them as each table appears (0003, 0005, each with its own copy of the SQL as it was then);
post_migrate installs them again because SQLite drops a table's triggers whenever a migration rebuilds the table.

Why triggers rather than comparing the rows with the newest revision: they make "a change no revision records" two
columns of the row every request reads anyway, so recording skips unchanged catalogs and a new session's mode is
checked without a query (modes.catalog.mode_for_session); a comparison costs an export of the rows and the
revision's entries each time.
"""

from django.db import connections

CATALOG_TABLES = ("modes_agentmode", "modes_declaredtool")
SQLITE_EVENTS = ("INSERT", "UPDATE", "DELETE")

POSTGRESQL_FUNCTION = """
    CREATE OR REPLACE FUNCTION modes_bump_catalog_version() RETURNS trigger AS $$
    BEGIN
        UPDATE modes_catalogversion SET version = replace(gen_random_uuid()::text, '-', '');
        RETURN NULL;
    END;
    $$ LANGUAGE plpgsql
"""


def _install_statements(vendor, table):
    if vendor == "postgresql":
        return [
            POSTGRESQL_FUNCTION,
            f"""
            CREATE OR REPLACE TRIGGER {table}_bump_catalog_version
            AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table}
            FOR EACH STATEMENT EXECUTE FUNCTION modes_bump_catalog_version()
            """,
        ]
    if vendor == "sqlite":
        return [
            f"""
            CREATE TRIGGER IF NOT EXISTS {table}_bump_catalog_version_on_{event.lower()}
            AFTER {event} ON {table}
            BEGIN
                UPDATE modes_catalogversion SET version = lower(hex(randomblob(16)));
            END
            """
            for event in SQLITE_EVENTS
        ]
    return []


def install(connection):
    """Triggers on every catalog table that exists yet."""
    tables = set(connection.introspection.table_names())
    if "modes_catalogversion" not in tables:
        return
    with connection.cursor() as cursor:
        for table in [table for table in CATALOG_TABLES if table in tables]:
            for statement in _install_statements(connection.vendor, table):
                cursor.execute(statement)


def reinstall_after_migrate(sender, using, **kwargs):
    install(connections[using])
