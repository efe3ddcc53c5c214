"""The user who ended a rollout is protected: an empty ended_by reads as an abort by the guard. No SQL: Django deletes."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('modes', '0019_rollouts_protect_their_organizations'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name='catalogrollout',
            name='ended_by',
            field=models.ForeignKey(blank=True, help_text='Empty for an abort by the guard.', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
    ]
