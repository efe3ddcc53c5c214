"""
The catalog revisions become the catalog's one history (issue 38).

- The triggers that marked every write to the catalog tables go: a change that no revision holds is found by
  comparing the rows with the newest revision instead.
- The version row becomes the catalog's head: the newest revision, the published one, and when it was published.
- The states that the per-row history (django-simple-history) kept and no revision holds are archived
  (ArchivedHistory); 0012 removes that history's tables.
- A new database gets its revision 1, the seed catalog, published: what the seed migration would write if the
  revision tables had existed then.

The code is inline and stays as it is: the app's own code may change after it.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.utils import timezone

TABLES = ("modes_agentmode", "modes_declaredtool")
SQLITE_EVENTS = ("INSERT", "UPDATE", "DELETE")
# The triggers as 0007 installed them, put back if this migration is undone.
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

# What a revision keeps of a mode and of a declared tool (the portable format of export_modes).
MODE_FIELDS = (
    "id", "key", "display_name", "description", "when_to_use", "status", "version", "is_default", "llm_can_enter",
    "position", "mode_instructions", "behavior_hints", "human_role_hints", "example_utterances",
    "associated_tool_ids", "tool_group_hints", "rag_scope_hints", "strong_signals", "weak_signals", "switch_targets",
)
TOOL_FIELDS = ("name", "description", "parameters", "read_only")
# Fields that revisions recorded before 0009 lack: their modes had these values.
ADDED_MODE_FIELDS = {"llm_can_enter": True, "switch_targets": []}
CHANGES = {"+": "created", "~": "changed", "-": "deleted"}


def remove_triggers(apps, schema_editor):
    _execute(schema_editor.connection, REMOVE)


def install_triggers(apps, schema_editor):
    _execute(schema_editor.connection, INSTALL)


def _execute(connection, statements_by_vendor):
    with connection.cursor() as cursor:
        for statement in statements_by_vendor.get(connection.vendor, []):
            cursor.execute(statement)


def record_the_seed_as_revision_1(apps, schema_editor):
    """On a new database (no revision yet), the catalog as the seed left it is revision 1, published."""
    alias = schema_editor.connection.alias
    revisions = apps.get_model("modes", "CatalogRevision").objects.using(alias)
    if revisions.exists():
        return
    now = timezone.now()
    modes = list(apps.get_model("modes", "AgentMode").objects.using(alias).order_by("position", "key"))
    tools = list(apps.get_model("modes", "DeclaredTool").objects.using(alias).order_by("name"))
    summary = [f"mode {mode.key} created" for mode in modes] + [f"tool {tool.name} created" for tool in tools]
    revision = revisions.create(number=1, summary="; ".join(summary) or "no change", published_at=now)
    Entry = apps.get_model("modes", "CatalogRevisionEntry")
    stamp = lambda mode: {  # noqa: E731
        "source": mode.source, "created_at": mode.created_at.isoformat(), "updated_at": mode.updated_at.isoformat()
    }
    Entry.objects.using(alias).bulk_create(
        [
            Entry(
                revision=revision, kind="mode", identity=mode.pk, position=mode.position, name=mode.key,
                content={field: getattr(mode, field) for field in MODE_FIELDS}, stamp=stamp(mode),
            )
            for mode in modes
        ]
        + [
            Entry(
                revision=revision, kind="tool", identity=tool.name, name=tool.name,
                content={field: getattr(tool, field) for field in TOOL_FIELDS},
            )
            for tool in tools
        ]
    )
    head = apps.get_model("modes", "CatalogHead").objects.using(alias)
    head.update_or_create(pk=1, defaults={"latest": 1, "published": 1, "published_at": now})


def date_the_publication(apps, schema_editor):
    """The head's publication time: when its published revision was last published."""
    alias = schema_editor.connection.alias
    head = apps.get_model("modes", "CatalogHead").objects.using(alias).filter(pk=1).first()
    if head is None or not head.published:
        return
    revision = apps.get_model("modes", "CatalogRevision").objects.using(alias).get(number=head.published)
    head.published_at = revision.published_at or revision.created_at
    head.save(update_fields=["published_at"])


def archive_the_history_no_revision_holds(apps, schema_editor):
    alias = schema_editor.connection.alias
    held = {}  # (kind, identity) -> the contents its revisions hold (None: removed)
    for entry in apps.get_model("modes", "CatalogRevisionEntry").objects.using(alias).iterator():
        content = entry.content
        if content is not None and entry.kind == "mode":
            content = {**ADDED_MODE_FIELDS, **content}
        held.setdefault((entry.kind, entry.identity), []).append(content)
    Archived = apps.get_model("modes", "ArchivedHistory")
    archived = []
    for kind, model, fields, naming in (
        ("mode", "HistoricalAgentMode", MODE_FIELDS, "key"),
        ("tool", "HistoricalDeclaredTool", TOOL_FIELDS, "name"),
    ):
        for record in apps.get_model("modes", model).objects.using(alias).order_by("history_id").iterator():
            identity = record.id if kind == "mode" else record.name
            content = {field: getattr(record, field) for field in fields}
            kept = held.get((kind, identity), [])
            if (None if record.history_type == "-" else content) in kept:
                continue
            archived.append(
                Archived(
                    kind=kind, identity=identity, name=getattr(record, naming), change=CHANGES[record.history_type],
                    content=content, changed_at=record.history_date, changed_by_id=record.history_user_id,
                )
            )
    Archived.objects.using(alias).bulk_create(archived, batch_size=1000)


class Migration(migrations.Migration):

    dependencies = [
        ("modes", "0010_rules_constraint_messages"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(remove_triggers, install_triggers),
        migrations.RenameModel("CatalogVersion", "CatalogHead"),
        # A default first, so that undoing the removal can add the column back to the row.
        migrations.AlterField(model_name="cataloghead", name="version", field=models.CharField(max_length=32, default="")),
        migrations.RemoveField(model_name="cataloghead", name="version"),
        migrations.RemoveField(model_name="cataloghead", name="recorded_version"),
        migrations.RemoveField(model_name="cataloghead", name="published_version"),
        migrations.RenameField(model_name="cataloghead", old_name="revision", new_name="latest"),
        migrations.AlterField(
            model_name="cataloghead",
            name="latest",
            field=models.PositiveIntegerField(default=0, help_text="The newest revision; 0: none yet."),
        ),
        migrations.AddField(
            model_name="cataloghead",
            name="published_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.CreateModel(
            name="ArchivedHistory",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("kind", models.CharField(choices=[("mode", "Mode"), ("tool", "Tool")], max_length=4)),
                ("identity", models.CharField(help_text="A mode's id, a tool's name.", max_length=64)),
                ("name", models.CharField(help_text="A mode's key, a tool's name.", max_length=64)),
                ("change", models.CharField(help_text="created, changed or deleted.", max_length=8)),
                ("content", models.JSONField(help_text="The fields as the record kept them.")),
                ("changed_at", models.DateTimeField()),
                (
                    "changed_by",
                    models.ForeignKey(
                        blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={"ordering": ["-changed_at", "-id"], "verbose_name_plural": "archived history"},
        ),
        migrations.RunPython(record_the_seed_as_revision_1, migrations.RunPython.noop),
        migrations.RunPython(date_the_publication, migrations.RunPython.noop),
        migrations.RunPython(archive_the_history_no_revision_holds, migrations.RunPython.noop),
    ]
