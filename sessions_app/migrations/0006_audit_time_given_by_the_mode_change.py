"""The mode change gives its audit row its time: never before the session's last change (sessions_app.services)."""

import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('sessions_app', '0005_refusals_and_transition_counts'),
    ]

    operations = [
        migrations.AlterField(
            model_name='modechange',
            name='changed_at',
            field=models.DateTimeField(default=django.utils.timezone.now),
        ),
    ]
