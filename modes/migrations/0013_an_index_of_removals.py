"""The removals of the revision store get an index of their own: the admin lists them on every mode list page."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('modes', '0012_remove_the_per_row_history'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='catalogrevisionentry',
            index=models.Index(condition=models.Q(('content__isnull', True)), fields=['kind', 'revision'], name='modes_revisionentry_removed'),
        ),
    ]
