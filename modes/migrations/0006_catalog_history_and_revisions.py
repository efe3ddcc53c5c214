"""
Every mode and declared tool keeps its history (then django-simple-history's), and the catalog its revisions.
The history models have plain bases here, so that migrating needs no package that is gone (0012 removes them).
"""

import django.core.validators
import django.db.models.deletion
import django.utils.timezone
import modes.fields
import modes.validators
from django.conf import settings
from django.db import migrations, models

# The catalog version triggers (0003, 0005) as they were when this migration was made: SQLite rebuilds the
# version table to add its columns, and refuses to while triggers name it, so they are taken off around that.
TABLES = ("modes_agentmode", "modes_declaredtool")
SQLITE_EVENTS = ("INSERT", "UPDATE", "DELETE")
INSTALL = {
    "postgresql": [
        """
        CREATE OR REPLACE FUNCTION modes_bump_catalog_version() RETURNS trigger AS $$
        BEGIN
            UPDATE modes_catalogversion SET version = replace(gen_random_uuid()::text, '-', '');
            RETURN NULL;
        END;
        $$ LANGUAGE plpgsql
        """,
        *(
            f"""
            CREATE OR REPLACE TRIGGER {table}_bump_catalog_version
            AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table}
            FOR EACH STATEMENT EXECUTE FUNCTION modes_bump_catalog_version()
            """
            for table in TABLES
        ),
    ],
    "sqlite": [
        f"""
        CREATE TRIGGER IF NOT EXISTS {table}_bump_catalog_version_on_{event.lower()}
        AFTER {event} ON {table}
        BEGIN
            UPDATE modes_catalogversion SET version = lower(hex(randomblob(16)));
        END
        """
        for table in TABLES
        for event in SQLITE_EVENTS
    ],
}
REMOVE = {
    "postgresql": [
        *(f"DROP TRIGGER IF EXISTS {table}_bump_catalog_version ON {table}" for table in TABLES),
        "DROP FUNCTION IF EXISTS modes_bump_catalog_version()",
    ],
    "sqlite": [
        f"DROP TRIGGER IF EXISTS {table}_bump_catalog_version_on_{event.lower()}"
        for table in TABLES
        for event in SQLITE_EVENTS
    ],
}


def install_triggers(apps, schema_editor):
    _execute(schema_editor.connection, INSTALL)


def remove_triggers(apps, schema_editor):
    _execute(schema_editor.connection, REMOVE)


def _execute(connection, statements_by_vendor):
    with connection.cursor() as cursor:
        for statement in statements_by_vendor.get(connection.vendor, []):
            cursor.execute(statement)


def record_rows_as_they_are(apps, schema_editor):
    """Each mode and declared tool starts its history with its state now, so that it can be reverted to it."""
    alias = schema_editor.connection.alias
    now = django.utils.timezone.now()
    for name in ("AgentMode", "DeclaredTool"):
        model, historical = apps.get_model("modes", name), apps.get_model("modes", f"Historical{name}")
        fields = [field.attname for field in historical._meta.fields if not field.attname.startswith("history_")]
        historical.objects.using(alias).bulk_create(
            historical(history_date=now, history_type="+", **{field: getattr(row, field) for field in fields})
            for row in model.objects.using(alias).all()
        )


class Migration(migrations.Migration):

    dependencies = [
        ('modes', '0005_declared_tools'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(remove_triggers, install_triggers),
        migrations.AddField(
            model_name='catalogversion',
            name='recorded_version',
            field=models.CharField(blank=True, default='', max_length=32),
        ),
        migrations.AddField(
            model_name='catalogversion',
            name='revision',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.CreateModel(
            name='CatalogRevision',
            fields=[
                ('number', models.PositiveIntegerField(primary_key=True, serialize=False)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('summary', models.TextField(help_text='The modes and fields that changed since the revision before.')),
                ('catalog', models.JSONField(help_text='Every mode and declared tool, as export_modes writes them.')),
                ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['-number'],
            },
        ),
        migrations.CreateModel(
            name='HistoricalAgentMode',
            fields=[
                ('id', models.CharField(db_index=True, default=modes.validators.new_mode_id, help_text='A GUID without hyphens, upper-case. Sessions store this id; it never changes.', max_length=32, validators=[django.core.validators.RegexValidator('\\A[0-9A-F]{32}\\Z', 'A mode id is a GUID without hyphens: exactly 32 upper-case hexadecimal characters (0-9, A-F).', code='invalid_mode_id')])),
                ('key', models.CharField(db_index=True, error_messages={'unique': 'A mode with this key already exists.'}, help_text='The snake_case name prompts and tools use, for example ddr_authoring.', max_length=64, validators=[django.core.validators.RegexValidator('\\A[a-z0-9_]+\\Z', 'A mode key is snake_case: lower-case letters, digits and underscores only (for example ddr_authoring).', code='invalid_mode_key')])),
                ('display_name', models.CharField(max_length=100)),
                ('description', models.TextField(blank=True, help_text='What the mode covers. Listings fall back to when-to-use if empty.')),
                ('when_to_use', models.CharField(help_text="One sentence, rendered in the system prompt as '- key: sentence'.", max_length=300, validators=[modes.validators.validate_not_blank, modes.validators.validate_single_line])),
                ('is_default', models.BooleanField(default=False, help_text="Exactly one mode is the default. Change it with the 'Make default' action.")),
                ('status', models.CharField(choices=[('active', 'Active'), ('experimental', 'Experimental'), ('deprecated', 'Deprecated')], default='active', error_messages={'invalid_choice': 'Status %(value)r is not one of active, experimental or deprecated.'}, max_length=16)),
                ('version', models.CharField(default='v1', max_length=32)),
                ('mode_instructions', modes.fields.StringListField(blank=True, default=list)),
                ('behavior_hints', modes.fields.StringListField(blank=True, default=list)),
                ('human_role_hints', modes.fields.StringListField(blank=True, default=list)),
                ('example_utterances', modes.fields.StringListField(blank=True, default=list)),
                ('associated_tool_ids', modes.fields.StringListField(blank=True, default=list, help_text='Names of the tools enabled while this mode is active, one per line.', validators=[modes.validators.validate_tool_names])),
                ('tool_group_hints', modes.fields.StringListField(blank=True, default=list)),
                ('rag_scope_hints', modes.fields.StringListField(blank=True, default=list)),
                ('strong_signals', modes.fields.StringListField(blank=True, default=list)),
                ('weak_signals', modes.fields.StringListField(blank=True, default=list)),
                ('source', models.CharField(choices=[('builtin', 'Built-in'), ('custom', 'Custom')], default='custom', max_length=16)),
                ('position', models.PositiveIntegerField(blank=True, help_text='Catalog order, lowest first. Left empty, the mode goes last.')),
                ('created_at', models.DateTimeField(blank=True, editable=False)),
                ('history_id', models.AutoField(primary_key=True, serialize=False)),
                ('history_date', models.DateTimeField(db_index=True)),
                ('history_change_reason', models.CharField(max_length=100, null=True)),
                ('history_type', models.CharField(choices=[('+', 'Created'), ('~', 'Changed'), ('-', 'Deleted')], max_length=1)),
                ('history_user', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'verbose_name': 'historical agent mode',
                'verbose_name_plural': 'historical agent modes',
                'ordering': ('-history_date', '-history_id'),
                'get_latest_by': ('history_date', 'history_id'),
            },
            bases=(models.Model,),
        ),
        migrations.CreateModel(
            name='HistoricalDeclaredTool',
            fields=[
                ('id', models.BigIntegerField(auto_created=True, blank=True, db_index=True, verbose_name='ID')),
                ('name', models.CharField(db_index=True, error_messages={'unique': 'A tool with this name is already declared.'}, help_text='The name modes list in their tool ids and the model calls, for example agent_ddr_manager.', max_length=64, validators=[django.core.validators.RegexValidator('\\A[a-zA-Z0-9_-]{1,64}\\Z', "A tool name uses letters, digits, '_' and '-' only, at most 64 of them (for example agent_ddr_manager).", code='invalid_tool_name')])),
                ('description', models.TextField(help_text='What the tool does, for the model: one or two sentences.', validators=[modes.validators.validate_not_blank])),
                ('parameters', models.JSONField(default=modes.validators.empty_parameters, help_text='A JSON Schema of type "object" for the arguments: every property with a "type" and a "description", the ones that must be given listed in "required".', validators=[modes.validators.validate_tool_parameters])),
                ('read_only', models.BooleanField(default=False, help_text='The tool only reads: MCP clients are told so (readOnlyHint).')),
                ('created_at', models.DateTimeField(blank=True, editable=False)),
                ('history_id', models.AutoField(primary_key=True, serialize=False)),
                ('history_date', models.DateTimeField(db_index=True)),
                ('history_change_reason', models.CharField(max_length=100, null=True)),
                ('history_type', models.CharField(choices=[('+', 'Created'), ('~', 'Changed'), ('-', 'Deleted')], max_length=1)),
                ('history_user', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'verbose_name': 'historical declared tool',
                'verbose_name_plural': 'historical declared tools',
                'ordering': ('-history_date', '-history_id'),
                'get_latest_by': ('history_date', 'history_id'),
            },
            bases=(models.Model,),
        ),
        migrations.RunPython(install_triggers, remove_triggers),
        migrations.RunPython(record_rows_as_they_are, migrations.RunPython.noop),
    ]
