"""The per-row history's tables go: 0011 archived what of them no catalog revision holds."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("modes", "0011_revisions_are_the_one_history"),
    ]

    operations = [
        migrations.DeleteModel(name="HistoricalAgentMode"),
        migrations.DeleteModel(name="HistoricalDeclaredTool"),
    ]
