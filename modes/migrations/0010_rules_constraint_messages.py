"""The format constraints refuse a row in the words of the validators that state the same rules (issue 31)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('modes', '0009_mode_graph'),
    ]

    operations = [
        migrations.AlterConstraint(
            model_name='agentmode',
            name='modes_agentmode_id_format',
            constraint=models.CheckConstraint(condition=models.Q(('id__regex', '\\A[0-9A-F]{32}\\Z')), name='modes_agentmode_id_format', violation_error_message='A mode id is a GUID without hyphens: exactly 32 upper-case hexadecimal characters (0-9, A-F).'),
        ),
        migrations.AlterConstraint(
            model_name='agentmode',
            name='modes_agentmode_key_format',
            constraint=models.CheckConstraint(condition=models.Q(('key__regex', '\\A[a-z0-9_]+\\Z')), name='modes_agentmode_key_format', violation_error_message='A mode key is snake_case: lower-case letters, digits and underscores only (for example ddr_authoring).'),
        ),
        migrations.AlterConstraint(
            model_name='declaredtool',
            name='modes_declaredtool_name_format',
            constraint=models.CheckConstraint(condition=models.Q(('name__regex', '\\A[a-zA-Z0-9_-]{1,64}\\Z')), name='modes_declaredtool_name_format', violation_error_message="A tool name uses letters, digits, '_' and '-' only, at most 64 of them (for example agent_ddr_manager)."),
        ),
    ]
