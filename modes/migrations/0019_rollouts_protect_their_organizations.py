"""A rollout's organizations get a through model on the same table, whose key to an organization protects it."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0001_initial"),
        ("modes", "0018_positions_end_at_a_million"),
    ]

    operations = [
        # Django's way to give a many-to-many field a through model: the table and its columns stay as they are.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="RolloutOrganization",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("catalogrollout", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to="modes.catalogrollout")),
                        ("organization", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="+", to="accounts.organization")),
                    ],
                    options={
                        "db_table": "modes_catalogrollout_organizations",
                        "unique_together": {("catalogrollout", "organization")},
                    },
                ),
                migrations.AlterField(
                    model_name="catalogrollout",
                    name="organizations",
                    field=models.ManyToManyField(blank=True, related_name="+", through="modes.RolloutOrganization", to="accounts.organization"),
                ),
            ],
        ),
    ]
