"""
The mode graph (issue 29): which modes each mode may switch to (empty: any, as before) and whether the model
may switch into it (true for every mode so far). Revisions recorded before this lack both and read as these
defaults.
"""

import modes.fields
import modes.validators
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('modes', '0008_revisions_store_what_changed'),
    ]

    operations = [
        migrations.AddField(
            model_name='agentmode',
            name='llm_can_enter',
            field=models.BooleanField(default=True, help_text='Whether the model may switch into this mode (agent_change_mode). Off: only an application starts a session in it (POST /api/sessions/ with this mode).'),
        ),
        migrations.AddField(
            model_name='agentmode',
            name='switch_targets',
            field=modes.fields.StringListField(blank=True, default=list, help_text='Keys of the modes the model may switch to from this one, one per line; empty: any mode.', validators=[modes.validators.validate_mode_keys]),
        ),
        migrations.AddField(
            model_name='historicalagentmode',
            name='llm_can_enter',
            field=models.BooleanField(default=True, help_text='Whether the model may switch into this mode (agent_change_mode). Off: only an application starts a session in it (POST /api/sessions/ with this mode).'),
        ),
        migrations.AddField(
            model_name='historicalagentmode',
            name='switch_targets',
            field=modes.fields.StringListField(blank=True, default=list, help_text='Keys of the modes the model may switch to from this one, one per line; empty: any mode.', validators=[modes.validators.validate_mode_keys]),
        ),
    ]
