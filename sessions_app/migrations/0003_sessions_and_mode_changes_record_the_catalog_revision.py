"""Sessions and audit rows name the catalog revision in force when they were written."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('sessions_app', '0002_audit_rows_protect_what_they_name'),
    ]

    operations = [
        migrations.AddField(
            model_name='agentsession',
            name='catalog_revision',
            field=models.PositiveIntegerField(blank=True, help_text='The catalog revision in force when the session was created.', null=True),
        ),
        migrations.AddField(
            model_name='modechange',
            name='catalog_revision',
            field=models.PositiveIntegerField(blank=True, help_text='The catalog revision in force when the mode changed.', null=True),
        ),
    ]
