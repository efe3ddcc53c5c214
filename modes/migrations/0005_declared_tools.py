"""Tools that the agent's client executes, declared in the catalog; writes to them change the catalog version."""

import django.core.validators
import modes.validators
from django.db import migrations, models

# The declared tools' trigger, as it was when this migration was made; 0003 created the function it calls.
TABLE = "modes_declaredtool"
INSTALL = {
    "postgresql": [
        f"""
        CREATE OR REPLACE TRIGGER {TABLE}_bump_catalog_version
        AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {TABLE}
        FOR EACH STATEMENT EXECUTE FUNCTION modes_bump_catalog_version()
        """
    ],
    "sqlite": [
        f"""
        CREATE TRIGGER IF NOT EXISTS {TABLE}_bump_catalog_version_on_{event.lower()}
        AFTER {event} ON {TABLE}
        BEGIN
            UPDATE modes_catalogversion SET version = lower(hex(randomblob(16)));
        END
        """
        for event in ("INSERT", "UPDATE", "DELETE")
    ],
}


def install_triggers(apps, schema_editor):
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        for statement in INSTALL.get(connection.vendor, []):
            cursor.execute(statement)


class Migration(migrations.Migration):

    dependencies = [
        ('modes', '0004_when_to_use_one_line_and_status_message'),
    ]

    operations = [
        migrations.CreateModel(
            name='DeclaredTool',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(error_messages={'unique': 'A tool with this name is already declared.'}, help_text='The name modes list in their tool ids and the model calls, for example agent_ddr_manager.', max_length=64, unique=True, validators=[django.core.validators.RegexValidator('\\A[a-zA-Z0-9_-]{1,64}\\Z', "A tool name uses letters, digits, '_' and '-' only, at most 64 of them (for example agent_ddr_manager).", code='invalid_tool_name')])),
                ('description', models.TextField(help_text='What the tool does, for the model: one or two sentences.', validators=[modes.validators.validate_not_blank])),
                ('parameters', models.JSONField(default=modes.validators.empty_parameters, help_text='A JSON Schema of type "object" for the arguments: every property with a "type" and a "description", the ones that must be given listed in "required".', validators=[modes.validators.validate_tool_parameters])),
                ('read_only', models.BooleanField(default=False, help_text='The tool only reads: MCP clients are told so (readOnlyHint).')),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
            ],
            options={
                'ordering': ['name'],
                'constraints': [models.CheckConstraint(condition=models.Q(('name__regex', '\\A[a-zA-Z0-9_-]{1,64}\\Z')), name='modes_declaredtool_name_format', violation_error_message="A tool name uses letters, digits, '_' and '-' only, at most 64 of them.")],
            },
        ),
        # Dropping the table on the way back drops its triggers with it.
        migrations.RunPython(install_triggers, migrations.RunPython.noop),
    ]
