"""
Modes say who confirms a switch into them (issue 40). Every mode of every stored revision had the default, inherit,
and its entry says so from now on: otherwise the next revision would store every mode again as changed, and a mode's
history would list the field as changed by it.
"""

from django.db import migrations, models


def with_field(content: dict) -> dict:
    """The entry's fields in export order, the new one after version."""
    added = {}
    for name, value in content.items():
        added[name] = value
        if name == "version":
            added["entry_confirmation"] = "inherit"
    return added


def add_to_entries(apps, schema_editor):
    Entry = apps.get_model("modes", "CatalogRevisionEntry")
    entries = list(Entry.objects.filter(kind="mode", content__isnull=False))
    for entry in entries:
        entry.content = with_field(entry.content)
    Entry.objects.bulk_update(entries, ["content"], batch_size=500)


def remove_from_entries(apps, schema_editor):
    Entry = apps.get_model("modes", "CatalogRevisionEntry")
    entries = list(Entry.objects.filter(kind="mode", content__isnull=False))
    for entry in entries:
        entry.content.pop("entry_confirmation", None)
    Entry.objects.bulk_update(entries, ["content"], batch_size=500)


class Migration(migrations.Migration):

    dependencies = [
        ('modes', '0013_an_index_of_removals'),
    ]

    operations = [
        migrations.AddField(
            model_name='agentmode',
            name='entry_confirmation',
            field=models.CharField(choices=[('inherit', 'As MODE_CHANGE_CONFIRMATION says'), ('user', 'The user confirms'), ('none', 'No confirmation')], default='inherit', error_messages={'invalid_choice': 'Entry confirmation %(value)r is not one of inherit, user or none.'}, help_text='Who confirms a switch into this mode: as the MODE_CHANGE_CONFIRMATION setting says (inherit), always the user, or nobody (a harmless mode that needs no question).', max_length=16),
        ),
        migrations.AddConstraint(
            model_name='agentmode',
            constraint=models.CheckConstraint(condition=models.Q(('entry_confirmation__in', ['inherit', 'user', 'none'])), name='modes_agentmode_entry_confirmation_valid', violation_error_message='Entry confirmation must be inherit, user or none.'),
        ),
        migrations.RunPython(add_to_entries, remove_from_entries),
    ]
