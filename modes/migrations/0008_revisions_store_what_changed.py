"""
Catalog revisions store what they changed: one entry per mode or declared tool that a revision added, changed
or removed, rather than the whole catalog in every revision. Each existing revision becomes the entries that
differ from the revision before it; the catalog at revision N is then, per mode and tool, the newest entry at
or before N, so every existing revision is rebuilt as it was. Undone, the entries are put back together into
whole catalogs. The code here is inline and stays as it is: the app's own code may change after it.
"""

import django.db.models.deletion
from django.db import migrations, models


def _entries(revision):
    """Per (kind, identity): the fields of that mode's or tool's entry in this revision's whole catalog."""
    stamps = revision.stamps or {}
    entries = {
        ("mode", content["id"]): {
            "position": content.get("position"), "name": content["key"], "content": content,
            "stamp": stamps.get(content["id"]),
        }
        for content in revision.catalog["modes"]
    }
    for content in revision.catalog.get("declared_tools", []):
        entries[("tool", content["name"])] = {"position": None, "name": content["name"], "content": content, "stamp": None}
    return entries


def store_what_changed(apps, schema_editor):
    alias = schema_editor.connection.alias
    Entry = apps.get_model("modes", "CatalogRevisionEntry")
    before = {}
    for revision in apps.get_model("modes", "CatalogRevision").objects.using(alias).order_by("number").iterator():
        after = _entries(revision)
        changed = [
            Entry(revision=revision, kind=kind, identity=identity, **fields)
            for (kind, identity), fields in after.items()
            if before.get((kind, identity)) != fields
        ]
        removed = [Entry(revision=revision, kind=kind, identity=identity) for kind, identity in before if (kind, identity) not in after]
        Entry.objects.using(alias).bulk_create([*changed, *removed], batch_size=1000)
        before = after
    if schema_editor.connection.vendor == "postgresql":
        # The entries' foreign-key checks run now, so that the revisions table may be altered next.
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def put_whole_catalogs_back(apps, schema_editor):
    alias = schema_editor.connection.alias
    Entry = apps.get_model("modes", "CatalogRevisionEntry")
    current = {}
    entries = Entry.objects.using(alias).order_by("revision_id", "id").iterator()
    next_entry = next(entries, None)
    for revision in apps.get_model("modes", "CatalogRevision").objects.using(alias).order_by("number").iterator():
        while next_entry is not None and next_entry.revision_id == revision.number:
            current[(next_entry.kind, next_entry.identity)] = next_entry
            next_entry = next(entries, None)
        live = [entry for entry in current.values() if entry.content is not None]
        modes = sorted((entry for entry in live if entry.kind == "mode"), key=lambda entry: (entry.position, entry.name))
        tools = sorted((entry for entry in live if entry.kind == "tool"), key=lambda entry: entry.name)
        revision.catalog = {
            "format": "aptix-modes",
            "version": 1,
            "modes": [entry.content for entry in modes],
            "declared_tools": [entry.content for entry in tools],
        }
        revision.stamps = {entry.identity: entry.stamp for entry in modes if entry.stamp}
        revision.save(update_fields=["catalog", "stamps"])
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


class Migration(migrations.Migration):

    dependencies = [
        ('modes', '0007_catalog_releases'),
    ]

    operations = [
        migrations.CreateModel(
            name='CatalogRevisionEntry',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(choices=[('mode', 'Mode'), ('tool', 'Tool')], max_length=4)),
                ('identity', models.CharField(help_text="A mode's id (its key may change), a tool's name.", max_length=64)),
                ('position', models.PositiveIntegerField(blank=True, null=True)),
                ('name', models.CharField(blank=True, help_text="A mode's key, a tool's name.", max_length=64)),
                ('content', models.JSONField(blank=True, help_text='As export_modes writes it; empty: removed.', null=True)),
                ('stamp', models.JSONField(blank=True, null=True)),
                ('revision', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='entries', to='modes.catalogrevision')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('kind', 'identity', 'revision'), name='modes_revisionentry_once')],
            },
        ),
        # Nullable first, so that undoing the removal below can add the column back to a table with rows in it.
        migrations.AlterField(
            model_name='catalogrevision',
            name='catalog',
            field=models.JSONField(null=True, help_text='Every mode and declared tool, as export_modes writes them.'),
        ),
        migrations.RunPython(store_what_changed, put_whole_catalogs_back),
        migrations.RemoveField(
            model_name='catalogrevision',
            name='catalog',
        ),
        migrations.RemoveField(
            model_name='catalogrevision',
            name='stamps',
        ),
    ]
