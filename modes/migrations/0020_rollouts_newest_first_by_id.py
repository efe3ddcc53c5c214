"""Rollouts list newest first by id, the order they were written, rather than by started_at: hosts' clocks differ."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("modes", "0019_rollouts_protect_their_organizations"),
    ]

    operations = [
        migrations.AlterModelOptions(name="catalogrollout", options={"ordering": ["-id"]}),
    ]
