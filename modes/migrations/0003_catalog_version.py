"""The catalog version row; modes.triggers keeps it changing with every write to the modes table."""

import uuid

from django.db import migrations, models

from modes import triggers


def create_version_row(apps, schema_editor):
    CatalogVersion = apps.get_model("modes", "CatalogVersion")
    CatalogVersion.objects.using(schema_editor.connection.alias).create(id=1, version=uuid.uuid4().hex)


def install_triggers(apps, schema_editor):
    triggers.install(schema_editor.connection)


def remove_triggers(apps, schema_editor):
    triggers.remove(schema_editor.connection)


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
