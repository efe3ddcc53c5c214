"""
Upgrading an install whose revisions each hold the whole catalog (modes 0007): `manage.py migrate` turns them
into entries of what each changed, and every old revision is rebuilt byte for byte: its document as
`export_modes --revision N` writes it, its system prompt and its listing (which shows the modes' source and
timestamps). On a scratch database of the suite's kind, with revisions written as that install wrote them.
"""

import json

from ..servers import run_django_json, run_manage, scratch_database

# What a revision shows, from its catalog and stamps as stored before (the snapshot of modes 0007's code:
# the document's rows, stamped), or from catalog_at_revision after: the same rendering for both.
RENDER = """
import json
from datetime import datetime
from django.core.management import call_command
from modes.catalog import CatalogSnapshot
from modes.portable import ADDED_MODE_FIELDS, document_rows, dump_document, export_document

def render(snapshot):
    return {
        "yaml": dump_document(export_document(modes=list(snapshot.modes), declared_tools=list(snapshot.declared_tools)), file_format="yaml"),
        "prompts": [snapshot.system_prompt(mode.key) for mode in snapshot.modes],
        "listing": snapshot.listing_json(include_examples=True),
    }

def stamped(catalog, stamps, number):
    modes, tools = document_rows(catalog)
    for mode in modes:
        if mode.pk in stamps:
            mode.source = stamps[mode.pk]["source"]
            mode.created_at = datetime.fromisoformat(stamps[mode.pk]["created_at"])
            mode.updated_at = datetime.fromisoformat(stamps[mode.pk]["updated_at"])
    return CatalogSnapshot(version=None, revision=number, modes=tuple(modes), declared_tools=tuple(tools))
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
        mode.llm_can_enter, mode.switch_targets = True, []
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

MIGRATED = RENDER + """
from modes.catalog import catalog_at_revision
from modes.models import CatalogRevision, CatalogRevisionEntry
print(json.dumps({
    "rendered": {n: render(catalog_at_revision(n)) for n in CatalogRevision.objects.order_by("number").values_list("number", flat=True)},
    "entries": {n: CatalogRevisionEntry.objects.filter(revision_id=n).count() for n in range(1, 11)},
}))
"""


def test_migrate_stores_what_each_old_revision_changed_and_rebuilds_every_one_byte_for_byte():
    with scratch_database(migrated=False) as env:
        run_manage(env, "migrate", "modes", "0007", "--noinput", "-v0", timeout=180)
        before = run_django_json(env, OLD_REVISIONS)
        run_manage(env, "migrate", "--noinput", "-v0", timeout=180)
        after = run_django_json(env, MIGRATED)
        exported = {number: run_manage(env, "export_modes", "--revision", number) for number in before}

    assert list(after["rendered"]) == list(before) == [str(number) for number in range(1, 11)]
    for number, rendered in before.items():
        assert after["rendered"][number] == rendered, f"revision {number} is not rebuilt as it was"
        assert exported[number] == rendered["yaml"], f"export_modes --revision {number} differs"
    # The seed's three modes, then one entry per edit (a reordering or a renaming of one mode is that mode only);
    # the rollback to revision 3 brings back the mode deleted since and the earlier text of the one edited since.
    assert after["entries"] == {"1": 3, "2": 1, "3": 1, "4": 1, "5": 1, "6": 1, "7": 1, "8": 1, "9": 1, "10": 2}
