"""
Catalog releases: the revision agents are served, approvals, and who published what when. The revision in force
is published and the older ones previous (each was served once); each revision keeps its modes' source and
timestamps, which the portable format leaves out, as the rows have them (a mode deleted since: custom, and the
revision's own time).
"""

import uuid

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

# The catalog version triggers (0003, 0005) as they were when this migration was made: SQLite rebuilds the
# version table to add its columns, and refuses to while triggers name it, so they are taken off around that.
TABLES = ("modes_agentmode", "modes_declaredtool")
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
        *(
            f"""
            CREATE OR REPLACE TRIGGER {table}_bump_catalog_version
            AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table}
            FOR EACH STATEMENT EXECUTE FUNCTION modes_bump_catalog_version()
            """
            for table in TABLES
        ),
    ],
    "sqlite": [
        f"""
        CREATE TRIGGER IF NOT EXISTS {table}_bump_catalog_version_on_{event.lower()}
        AFTER {event} ON {table}
        BEGIN
            UPDATE modes_catalogversion SET version = lower(hex(randomblob(16)));
        END
        """
        for table in TABLES
        for event in SQLITE_EVENTS
    ],
}
REMOVE = {
    "postgresql": [
        *(f"DROP TRIGGER IF EXISTS {table}_bump_catalog_version ON {table}" for table in TABLES),
        "DROP FUNCTION IF EXISTS modes_bump_catalog_version()",
    ],
    "sqlite": [
        f"DROP TRIGGER IF EXISTS {table}_bump_catalog_version_on_{event.lower()}"
        for table in TABLES
        for event in SQLITE_EVENTS
    ],
}


def install_triggers(apps, schema_editor):
    _execute(schema_editor.connection, INSTALL)


def remove_triggers(apps, schema_editor):
    _execute(schema_editor.connection, REMOVE)


def _execute(connection, statements_by_vendor):
    with connection.cursor() as cursor:
        for statement in statements_by_vendor.get(connection.vendor, []):
            cursor.execute(statement)


def publish_the_revision_in_force(apps, schema_editor):
    alias = schema_editor.connection.alias
    state = apps.get_model("modes", "CatalogVersion").objects.using(alias).filter(pk=1).first()
    revisions = apps.get_model("modes", "CatalogRevision").objects.using(alias)
    if state is None or not revisions.exists():
        return  # a new database: the first revision, recorded after migrate, is published as it is recorded
    rows = {mode.pk: mode for mode in apps.get_model("modes", "AgentMode").objects.using(alias)}
    for revision in revisions.all():
        stamps = {}
        for entry in revision.catalog["modes"]:
            row = rows.get(entry["id"])
            updated = revision.created_at if row is None else min(row.updated_at, revision.created_at)
            if revision.number == state.revision and row is not None:
                updated = row.updated_at
            stamps[entry["id"]] = {
                "source": row.source if row else "custom",
                "created_at": (row.created_at if row else revision.created_at).isoformat(),
                "updated_at": updated.isoformat(),
            }
        revision.stamps = stamps
        revision.published_at, revision.published_by_id = revision.created_at, revision.created_by_id
        revision.save(update_fields=["stamps", "published_at", "published_by"])
    state.published, state.published_version = state.revision, uuid.uuid4().hex
    state.save(update_fields=["published", "published_version"])


class Migration(migrations.Migration):

    dependencies = [
        ('modes', '0006_catalog_history_and_revisions'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(remove_triggers, install_triggers),
        migrations.AlterModelOptions(
            name='catalogrevision',
            options={'ordering': ['-number'], 'permissions': [('approve_revision', 'Can approve catalog revisions of others'), ('publish_revision', 'Can publish or roll back catalog revisions'), ('publish_unreviewed_revision', 'Can publish catalog revisions unreviewed')]},
        ),
        migrations.AddField(
            model_name='catalogrevision',
            name='published_at',
            field=models.DateTimeField(blank=True, help_text='When it was last published.', null=True),
        ),
        migrations.AddField(
            model_name='catalogrevision',
            name='published_by',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name='catalogrevision',
            name='restores',
            field=models.PositiveIntegerField(blank=True, help_text='For a rollback: the earlier revision whose catalog this one restores.', null=True),
        ),
        migrations.AddField(
            model_name='catalogrevision',
            name='stamps',
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name='catalogrevision',
            name='unreviewed',
            field=models.BooleanField(default=False, help_text='Published with fewer approvals than the policy asks.'),
        ),
        migrations.AddField(
            model_name='catalogversion',
            name='published',
            field=models.PositiveIntegerField(default=0, help_text='The revision agents are served; 0: none yet.'),
        ),
        migrations.AddField(
            model_name='catalogversion',
            name='published_version',
            field=models.CharField(blank=True, default='', max_length=32),
        ),
        migrations.CreateModel(
            name='CatalogApproval',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('at', models.DateTimeField(auto_now_add=True)),
                ('revision', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='approvals', to='modes.catalogrevision')),
                ('user', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['at', 'id'],
                'constraints': [models.UniqueConstraint(fields=('revision', 'user'), name='modes_catalogapproval_once_per_user')],
            },
        ),
        migrations.RunPython(install_triggers, remove_triggers),
        migrations.RunPython(publish_the_revision_in_force, migrations.RunPython.noop),
    ]
