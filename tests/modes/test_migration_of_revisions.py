"""
Upgrading an install whose revisions each hold the whole catalog (modes 0007): `manage.py migrate` turns them
into entries of what each changed, and every old revision is rebuilt byte for byte: its document as
`export_modes --revision N` writes it, its system prompt and its listing (which shows the modes' source and
timestamps). Upgrading one with the per-row history and the catalog-version triggers (modes 0010): the history
records that no revision holds are archived, the triggers and the history's tables go, and the head row names the
newest and the published revision with its publication time. On a scratch database of the suite's kind, with the
old rows written as that install wrote them.
"""


from ..expected import GENERAL_ID
from ..servers import run_django_json, run_manage, scratch_database

# What a revision shows, from its catalog and stamps as stored before (the snapshot of modes 0007's code:
# the document's rows, stamped), or from catalog_at_revision after: the same rendering for both.
RENDER = """
import json
from datetime import datetime
from django.core.management import call_command
from modes.catalog import Catalog
from modes.portable import ADDED_MODE_FIELDS, document_rows, dump_document, export_document

def render(catalog):
    return {
        "yaml": dump_document(export_document(modes=list(catalog.modes), declared_tools=list(catalog.declared_tools)), file_format="yaml"),
        "prompts": [catalog.system_prompt(mode.key) for mode in catalog.modes],
        "listing": catalog.listing_json(include_examples=True),
    }

def stamped(catalog, stamps, number):
    modes, tools = document_rows(catalog)
    for mode in modes:
        if mode.pk in stamps:
            mode.source = stamps[mode.pk]["source"]
            mode.created_at = datetime.fromisoformat(stamps[mode.pk]["created_at"])
            mode.updated_at = datetime.fromisoformat(stamps[mode.pk]["updated_at"])
    return Catalog(revision=number, modes=tuple(modes), declared_tools=tuple(tools))
"""

# Revisions as modes 0007 recorded them (the whole catalog and every mode's stamps in each), through its models:
# an edit of one field, a new mode, a declared tool, a reordering, a renamed key, unicode, a deletion, a removed
# tool, and a rollback to an earlier catalog.
OLD_REVISIONS = RENDER + """
import copy
from django.db import connection
from django.db.migrations.loader import MigrationLoader
old = MigrationLoader(connection).project_state(("modes", "0007_catalog_releases")).apps
Revision, State = old.get_model("modes", "CatalogRevision"), old.get_model("modes", "CatalogVersion")
seed = list(old.get_model("modes", "AgentMode").objects.order_by("position", "key"))

def old_document(modes):  # the portable document as the code of 0007 wrote it: without the fields added since
    for mode in modes:
        mode.llm_can_enter, mode.switch_targets, mode.entry_confirmation = True, [], "inherit"
        mode.prompt = mode.custom_instructions = ""
    document = export_document(modes=modes, declared_tools=[])
    for entry in document["modes"]:
        for name in ADDED_MODE_FIELDS:
            del entry[name]
    return document

first = Revision.objects.create(
    number=1, summary="seed", catalog=old_document(seed), published_at="2025-01-01T00:00:00Z",
    stamps={m.pk: {"source": m.source, "created_at": m.created_at.isoformat(), "updated_at": m.updated_at.isoformat()} for m in seed},
)
catalog, stamps = copy.deepcopy(first.catalog), copy.deepcopy(first.stamps)
custom = dict(catalog["modes"][1], id="C" * 32, key="review", display_name="Review", position=7, is_default=False)
tool = {"name": "agent_ddr_manager", "description": "Opens DDRs.", "parameters": {"type": "object", "properties": {}}, "read_only": True}

def edit(step):
    if step == 0: catalog["modes"][0]["when_to_use"] = "Use this mode for anything at all."
    if step == 1: catalog["modes"].append(copy.deepcopy(custom))
    if step == 2: catalog["declared_tools"].append(tool)
    if step == 3:
        catalog["modes"][-1]["position"] = 0
        catalog["modes"].insert(0, catalog["modes"].pop())
    if step == 4: catalog["modes"][0]["key"] = "critique"
    if step == 5: catalog["modes"][1]["description"] = "Général — « naïve » 🚀 text."
    if step == 6: del catalog["modes"][0]
    if step == 7: catalog["declared_tools"] = []

for step in range(8):
    contents = {mode["id"]: copy.deepcopy(mode) for mode in catalog["modes"]}
    edit(step)
    for mode in catalog["modes"]:  # the edited mode's updated_at moves; a new one is created then
        if contents.get(mode["id"]) != mode:
            stamps.setdefault(mode["id"], {"source": "custom", "created_at": "2025-01-0%dT10:00:00+00:00" % (step + 1)})
            stamps[mode["id"]]["updated_at"] = "2025-02-0%dT10:00:00.123456+00:00" % (step + 1)
    number = step + 2
    Revision.objects.create(number=number, summary=f"edit {step}", catalog=copy.deepcopy(catalog), stamps={m["id"]: stamps[m["id"]] for m in catalog["modes"]}, published_at=first.published_at)
rollback = Revision.objects.get(number=3)
Revision.objects.create(number=10, summary="rollback", catalog=rollback.catalog, stamps=rollback.stamps, restores=3, published_at=first.published_at)
State.objects.filter(pk=1).update(revision=10, published=10, recorded_version=State.objects.get(pk=1).version)
print(json.dumps({r.number: render(stamped(r.catalog, r.stamps, r.number)) for r in Revision.objects.order_by("number")}))
"""

# And what `export_modes --revision N` prints of each, its arguments parsed as on the command line, in this one
# process: ten processes of manage.py took most of this test's 26 s.
MIGRATED = RENDER + """
import io
from modes.catalog import catalog_at_revision
from modes.models import CatalogRevision, CatalogRevisionEntry

def exported(number):
    printed = io.StringIO()
    call_command("export_modes", "--revision", str(number), stdout=printed)
    return printed.getvalue()

numbers = CatalogRevision.objects.order_by("number").values_list("number", flat=True)
print(json.dumps({
    "rendered": {n: render(catalog_at_revision(n)) for n in numbers},
    "exported": {n: exported(n) for n in numbers},
    "entries": {n: CatalogRevisionEntry.objects.filter(revision_id=n).count() for n in range(1, 11)},
}))
"""


def test_migrate_stores_what_each_old_revision_changed_and_rebuilds_every_one_byte_for_byte():
    with scratch_database(migrated=False) as env:
        run_manage(env, "migrate", "modes", "0007", "--noinput", "-v0", timeout=180)
        before = run_django_json(env, OLD_REVISIONS)
        run_manage(env, "migrate", "--noinput", "-v0", timeout=180)
        after = run_django_json(env, MIGRATED)

    assert list(after["rendered"]) == list(before) == [str(number) for number in range(1, 11)]
    for number, rendered in before.items():
        assert after["rendered"][number] == rendered, f"revision {number} is not rebuilt as it was"
        assert after["exported"][number] == rendered["yaml"], f"export_modes --revision {number} differs"
    # The seed's three modes, then one entry per edit (a reordering or a renaming of one mode is that mode only);
    # the rollback to revision 3 brings back the mode deleted since and the earlier text of the one edited since.
    assert after["entries"] == {"1": 3, "2": 1, "3": 1, "4": 1, "5": 1, "6": 1, "7": 1, "8": 1, "9": 1, "10": 2}


# --- The per-row history becomes the revisions' (modes 0011, 0012) -------------------------------------------------

# An install at modes 0010, as its code left it: the catalog-version triggers, the per-row history of
# django-simple-history (the seed's records from 0006), and two revisions, the second one an editor's, published.
# Then the history records that no revision holds: an edit that was overwritten before it was recorded, a mode and a
# declared tool created and deleted again in between; and the editor's edit, which revision 2 holds.
OLD_HISTORY = """
import json
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from modes.portable import export_document
old = MigrationLoader(connection).project_state(("modes", "0010_rules_constraint_messages")).apps
Mode, Tool, Version = (old.get_model("modes", name) for name in ("AgentMode", "DeclaredTool", "CatalogVersion"))
Revision, Entry = old.get_model("modes", "CatalogRevision"), old.get_model("modes", "CatalogRevisionEntry")
HistoricalMode = old.get_model("modes", "HistoricalAgentMode")
HistoricalTool = old.get_model("modes", "HistoricalDeclaredTool")
editor = old.get_model("auth", "User").objects.create(username="editor")

def stamp(mode):
    return {"source": mode.source, "created_at": mode.created_at.isoformat(), "updated_at": mode.updated_at.isoformat()}

def entry(revision, mode):  # as the code of 0010 wrote it: without the fields added since
    mode.entry_confirmation, mode.prompt, mode.custom_instructions = "inherit", "", ""
    content = export_document(modes=[mode], declared_tools=[])["modes"][0]
    for name in ("entry_confirmation", "prompt", "custom_instructions"):
        del content[name]
    return Entry(
        revision=revision, kind="mode", identity=mode.pk, position=mode.position, name=mode.key, content=content,
        stamp=stamp(mode),
    )

def record(historical, row, history_type, at):
    fields = [field.attname for field in historical._meta.fields if not field.attname.startswith("history_")]
    historical.objects.create(
        history_type=history_type, history_date=at, history_user=editor, **{field: getattr(row, field) for field in fields}
    )

seed = list(Mode.objects.order_by("position", "key"))
first = Revision.objects.create(number=1, summary="seed", published_at="2025-01-01T00:00:00Z")
Entry.objects.bulk_create(entry(first, mode) for mode in seed)

general = Mode.objects.get(key="general")
general.when_to_use = "Use this mode for a while."  # overwritten before any revision recorded it
general.save()
record(HistoricalMode, general, "~", "2025-02-01T10:00:00Z")
scratch = Mode.objects.create(
    id="D" * 32, key="scratch", display_name="Scratch", when_to_use="Use this mode for scratch work.", position=9
)
record(HistoricalMode, scratch, "+", "2025-02-02T10:00:00Z")
record(HistoricalMode, scratch, "-", "2025-02-03T10:00:00Z")
scratch.delete()
tool = Tool.objects.create(name="agent_gone", description="Gone again.")
record(HistoricalTool, tool, "+", "2025-02-04T10:00:00Z")
record(HistoricalTool, tool, "-", "2025-02-05T10:00:00Z")
tool.delete()

general.when_to_use = "Use this mode for anything at all."
general.save()
record(HistoricalMode, general, "~", "2025-02-06T10:00:00Z")
second = Revision.objects.create(
    number=2, summary="mode general: when_to_use", created_by=editor, published_at="2025-02-06T10:00:01Z",
    published_by=editor,
)
entry(second, general).save()
version = Version.objects.get(pk=1)
Version.objects.filter(pk=1).update(
    revision=2, published=2, recorded_version=version.version, published_version=version.version
)

with connection.cursor() as cursor:
    if connection.vendor == "postgresql":
        cursor.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal ORDER BY tgname")
    else:
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
    triggers = [row[0] for row in cursor.fetchall()]
print(json.dumps({"triggers": triggers, "records": HistoricalMode.objects.count() + HistoricalTool.objects.count()}))
"""

AFTER_0012 = """
import json
from django.db import connection
from modes.catalog import published_catalog
from modes.models import ArchivedHistory, CatalogHead, CatalogRevision

with connection.cursor() as cursor:
    if connection.vendor == "postgresql":
        cursor.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal ORDER BY tgname")
        triggers = [row[0] for row in cursor.fetchall()]
        cursor.execute("SELECT proname FROM pg_proc WHERE proname LIKE 'modes%'")
        functions = [row[0] for row in cursor.fetchall()]
    else:
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
        triggers, functions = [row[0] for row in cursor.fetchall()], []
head = CatalogHead.objects.get(pk=1)
print(json.dumps({
    "triggers": triggers,
    "functions": functions,
    "tables": [name for name in connection.introspection.table_names() if "historical" in name],
    "head": [head.latest, head.published, head.published_at.isoformat() if head.published_at else None],
    "published_at": CatalogRevision.objects.get(number=2).published_at.isoformat(),
    "archived": [
        [item.kind, item.identity, item.name, item.change, item.changed_at.isoformat(), item.changed_by.username,
         item.content.get("when_to_use", item.content.get("description"))]
        for item in ArchivedHistory.objects.order_by("changed_at", "id").select_related("changed_by")
    ],
    "served": [published_catalog().revision, published_catalog().mode("general").when_to_use],
}))
"""


SCRATCH_ID, SCRATCH_WHEN_TO_USE = "D" * 32, "Use this mode for scratch work."


def test_migrating_an_old_install_archives_the_history_no_revision_holds_and_leaves_no_trigger():
    with scratch_database(migrated=False) as env:
        run_manage(env, "migrate", "modes", "0010", "--noinput", "-v0", timeout=180)
        before = run_django_json(env, OLD_HISTORY)
        run_manage(env, "migrate", "--noinput", "-v0", timeout=180)
        after = run_django_json(env, AFTER_0012)

    assert before["triggers"]  # the old install's triggers, which marked every write to the catalog tables
    assert before["records"] == 3 + 6  # the seed's records (0006), then this install's
    assert (after["triggers"], after["functions"]) == ([], [])
    assert after["tables"] == []  # 0012 drops the per-row history's tables
    # The seed's records and the editor's last edit are held by revisions 1 and 2: only the others are archived.
    assert after["archived"] == [
        ["mode", GENERAL_ID, "general", "changed", "2025-02-01T10:00:00+00:00", "editor", "Use this mode for a while."],
        ["mode", SCRATCH_ID, "scratch", "created", "2025-02-02T10:00:00+00:00", "editor", SCRATCH_WHEN_TO_USE],
        ["mode", SCRATCH_ID, "scratch", "deleted", "2025-02-03T10:00:00+00:00", "editor", SCRATCH_WHEN_TO_USE],
        ["tool", "agent_gone", "agent_gone", "created", "2025-02-04T10:00:00+00:00", "editor", "Gone again."],
        ["tool", "agent_gone", "agent_gone", "deleted", "2025-02-05T10:00:00+00:00", "editor", "Gone again."],
    ]
    # The head names the newest revision and the published one, with when that one was published.
    assert after["head"] == [2, 2, after["published_at"]]
    assert after["published_at"].startswith("2025-02-06T10:00:01")
    assert after["served"] == [2, "Use this mode for anything at all."]
