"""
Modes carry their own prompts (issue 41): the text a coding agent's mode tells the model (a role definition, an
agent's body) and its custom instructions. Every mode of every stored revision had them empty, and its entry says so
from now on, as 0014 did for entry_confirmation: else the next revision would store every mode again as changed.
"""

import django.core.validators
from django.db import migrations, models


def with_fields(content: dict) -> dict:
    """The entry's fields in export order, the new ones after entry_confirmation."""
    added = {}
    for name, value in content.items():
        added[name] = value
        if name == "entry_confirmation":
            added.update(prompt="", custom_instructions="")
    return added


def add_to_entries(apps, schema_editor):
    Entry = apps.get_model("modes", "CatalogRevisionEntry")
    entries = list(Entry.objects.filter(kind="mode", content__isnull=False))
    for entry in entries:
        entry.content = with_fields(entry.content)
    Entry.objects.bulk_update(entries, ["content"], batch_size=500)


def remove_from_entries(apps, schema_editor):
    Entry = apps.get_model("modes", "CatalogRevisionEntry")
    entries = list(Entry.objects.filter(kind="mode", content__isnull=False))
    for entry in entries:
        entry.content.pop("prompt", None)
        entry.content.pop("custom_instructions", None)
    Entry.objects.bulk_update(entries, ["content"], batch_size=500)


class Migration(migrations.Migration):

    dependencies = [
        ('modes', '0014_modes_say_who_confirms_entering_them'),
    ]

    operations = [
        migrations.AddField(
            model_name='agentmode',
            name='custom_instructions',
            field=models.TextField(blank=True, help_text="Told after the instruction lines: Markdown of any length, such as Roo Code's custom instructions and rules.", validators=[django.core.validators.ProhibitNullCharactersValidator()]),
        ),
        migrations.AddField(
            model_name='agentmode',
            name='prompt',
            field=models.TextField(blank=True, help_text="What the model is told while this mode is active, before the instruction lines: Markdown of any length, such as a coding agent's role definition or agent prompt, kept as written.", validators=[django.core.validators.ProhibitNullCharactersValidator()]),
        ),
        migrations.RunPython(add_to_entries, remove_from_entries),
    ]
