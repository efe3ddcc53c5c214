"""
Catalog revisions: the whole catalog as each committed change left it, numbered 1, 2, 3, ...; each stores
only what it changed (modes.revision_store).

The catalog version row (modes.triggers) changes with every write to a catalog table, whoever makes it, and
keeps the version that the last revision recorded: a version other than that one is a change not recorded
yet. The service's own writes (the admin, imports, the default switch) record theirs in the same transaction,
with the user who made them, so one admin save or one import is one revision; a model save or delete outside
them (a shell, a fixture) is one revision of its own. A change made around the ORM (QuerySet.update(), raw
SQL) is recorded by the next write, or by `manage.py record_revision`; until then agents are not served it,
since they are served only revisions (modes.catalog), once published (modes.releases). The version row is locked
while a revision is recorded, so two writers get consecutive numbers.
"""

import uuid
from contextlib import contextmanager

from asgiref.local import Local
from django.conf import settings
from django.db import connections, transaction
from django.utils import timezone

from .models import AgentMode, CatalogRevision, CatalogRevisionEntry, CatalogVersion, DeclaredTool
from .portable import MODE_SECTION, TOOL_SECTION, export_document, upgrade_document
from .revision_store import document_of, entries_at, entries_of, store_changes

_writing = Local()


class Recording:
    revision: int | None = None  # the catalog's revision once the block has ended (an outer block's: None)


@contextmanager
def recording_revision(*, created_by=None, restores: int | None = None):
    """
    One transaction whose catalog writes become one revision, recorded as the block ends and attributed to
    created_by (a user, or None). Model saves inside the block leave the recording to it; a block inside
    another leaves it to the outer one. restores: the earlier revision a rollback writes back.
    """
    recording = Recording()
    depth = getattr(_writing, "depth", 0)
    if depth == 0:
        record_pending_revision()  # a change made around the service before this one is not this one's
    _writing.depth = depth + 1
    try:
        with transaction.atomic():
            yield recording
            if depth == 0:
                state = record_pending_revision(created_by=created_by, restores=restores)
                recording.revision = state and state.revision
    finally:
        _writing.depth = depth


def record_pending_revision(*, created_by=None, restores: int | None = None) -> CatalogVersion | None:
    """
    Record the catalog as a new revision if it changed since the last one; returns the catalog version row
    as it is then, or None where there is none (a database being flushed or migrated). A write that left
    the catalog as the last revision has it is not a new revision. The first revision, and every one when
    the policy asks for no approvals, is published as it is recorded.
    """
    with transaction.atomic():
        state = CatalogVersion.objects.select_for_update().filter(pk=1).first()
        if state is None or state.version == state.recorded_version:
            return state
        modes = list(AgentMode.objects.all())
        catalog = export_document(modes=modes, declared_tools=list(DeclaredTool.objects.all()))
        before = entries_at(state.revision)
        # Upgraded: a field added to modes since the last revision is no change of the catalog.
        previous = upgrade_document(document_of(before)) if state.revision else None
        if catalog != previous:
            state.revision += 1
            revision = CatalogRevision.objects.create(
                number=state.revision, created_by=created_by, summary=summarize(previous, catalog), restores=restores
            )
            store_changes(revision, before=before, after=entries_of(catalog, modes))
            if settings.CATALOG_APPROVALS == 0 or state.published == 0:
                mark_published(state, revision, by=created_by, unreviewed=False)
        state.recorded_version = state.version
        state.save()
        return state


def mark_published(state: CatalogVersion, revision: CatalogRevision, *, by, unreviewed: bool) -> None:
    """Make revision the one agents are served, on every worker's next request; the caller saves state."""
    revision.published_at, revision.published_by, revision.unreviewed = timezone.now(), by, unreviewed
    revision.save(update_fields=["published_at", "published_by", "unreviewed"])
    state.published, state.published_version = revision.number, uuid.uuid4().hex


def record_model_change(sender, **kwargs):
    """A save or delete of a mode or declared tool outside recording_revision is a revision of its own."""
    if not getattr(_writing, "depth", 0) and not kwargs.get("raw"):
        record_pending_revision()


def record_revision_after_migrate(sender, using, **kwargs):
    """A migration that changed the catalog (the seed one first) is a revision too, recorded as it ends."""
    # Not on a database migrated only part of the way: the newest of the revision tables is not there yet.
    if CatalogRevisionEntry._meta.db_table in connections[using].introspection.table_names():
        with transaction.atomic(using=using):
            record_pending_revision()


def summarize(before: dict | None, after: dict) -> str:
    """One line naming the modes and declared tools that changed from before to after, and their fields."""
    parts = []
    # Modes are matched by id, which never changes, so that a new key reads as a change of key.
    for section, label, identity in ((MODE_SECTION, "mode", "id"), (TOOL_SECTION, "tool", "name")):
        old = {entry[identity]: entry for entry in (before or {}).get(section.name, [])}
        new = {entry[identity]: entry for entry in after.get(section.name, [])}
        for name, entry in new.items():
            named = f"{label} {entry[section.naming_field]}"
            if name not in old:
                parts.append(f"{named} created")
            else:
                fields = [field for field in section.fields if entry.get(field) != old[name].get(field)]
                if fields:
                    parts.append(f"{named}: {', '.join(fields)}")
        parts += [f"{label} {entry[section.naming_field]} deleted" for name, entry in old.items() if name not in new]
    return "; ".join(parts) or "no change"
