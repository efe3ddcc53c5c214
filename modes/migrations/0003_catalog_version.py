"""
The catalog version row, and the triggers that give it a new random version on every write to the modes table.
The triggers' SQL is written out here, as it was when this migration was made (modes.triggers holds today's).
"""

import uuid

from django.db import migrations, models

TABLE = "modes_agentmode"
SQLITE_EVENTS = ("INSERT", "UPDATE", "DELETE")
POSTGRESQL_INSTALL = [
    """
    CREATE OR REPLACE FUNCTION modes_bump_catalog_version() RETURNS trigger AS $$
    BEGIN
        UPDATE modes_catalogversion SET version = replace(gen_random_uuid()::text, '-', '');
        RETURN NULL;
    END;
    $$ LANGUAGE plpgsql
    """,
    f"""
    CREATE OR REPLACE TRIGGER {TABLE}_bump_catalog_version
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {TABLE}
    FOR EACH STATEMENT EXECUTE FUNCTION modes_bump_catalog_version()
    """,
]
SQLITE_INSTALL = [
    f"""
    CREATE TRIGGER IF NOT EXISTS {TABLE}_bump_catalog_version_on_{event.lower()}
    AFTER {event} ON {TABLE}
    BEGIN
        UPDATE modes_catalogversion SET version = lower(hex(randomblob(16)));
    END
    """
    for event in SQLITE_EVENTS
]
POSTGRESQL_REMOVE = [
    f"DROP TRIGGER IF EXISTS {TABLE}_bump_catalog_version ON {TABLE}",
    "DROP FUNCTION IF EXISTS modes_bump_catalog_version()",
]
SQLITE_REMOVE = [f"DROP TRIGGER IF EXISTS {TABLE}_bump_catalog_version_on_{event.lower()}" for event in SQLITE_EVENTS]


def create_version_row(apps, schema_editor):
    CatalogVersion = apps.get_model("modes", "CatalogVersion")
    CatalogVersion.objects.using(schema_editor.connection.alias).create(id=1, version=uuid.uuid4().hex)


def install_triggers(apps, schema_editor):
    _execute(schema_editor.connection, {"postgresql": POSTGRESQL_INSTALL, "sqlite": SQLITE_INSTALL})


def remove_triggers(apps, schema_editor):
    _execute(schema_editor.connection, {"postgresql": POSTGRESQL_REMOVE, "sqlite": SQLITE_REMOVE})


def _execute(connection, statements_by_vendor):
    with connection.cursor() as cursor:
        for statement in statements_by_vendor.get(connection.vendor, []):
            cursor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("modes", "0002_seed_v1_modes")]

    operations = [
        migrations.CreateModel(
            name="CatalogVersion",
            fields=[
                ("id", models.PositiveSmallIntegerField(default=1, editable=False, primary_key=True, serialize=False)),
                ("version", models.CharField(max_length=32)),
            ],
        ),
        migrations.RunPython(create_version_row, migrations.RunPython.noop),
        migrations.RunPython(install_triggers, remove_triggers),
    ]
