"""
How catalog revisions are stored: one entry per mode or declared tool that a revision added, changed or removed
(CatalogRevisionEntry). The catalog at revision N is, for each mode and tool, its newest entry at or before N, less
the removed ones, in the order the database sorts the rows in: every revision is rebuilt exactly as it was recorded.
"""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Exists, F, OuterRef, Window
from django.db.models.functions import RowNumber

from aptix_site.service_errors import Conflict, InvalidInput

from .models import AgentMode, CatalogHead, CatalogRevision, CatalogRevisionEntry, DeclaredTool
from .portable import FORMAT_NAME, FORMAT_VERSION

MODE, TOOL = CatalogRevisionEntry.Kind.MODE, CatalogRevisionEntry.Kind.TOOL


def entries_at(number: int) -> list[CatalogRevisionEntry]:
    """The modes' and tools' entries in force at revision number, in catalog order (one query)."""
    newest = Window(RowNumber(), partition_by=[F("kind"), F("identity")], order_by=F("revision_id").desc())
    entries = (
        CatalogRevisionEntry.objects.filter(revision_id__lte=number)
        .annotate(newest=newest)
        .filter(newest=1)  # applied after the window, so a removal hides what came before it
        .order_by("kind", "position", "name")
    )
    return [entry for entry in entries if entry.content is not None]


def document_of(entries: list[CatalogRevisionEntry]) -> dict:
    """The portable document of these entries, as export_modes wrote it when they were recorded."""
    return {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "modes": [entry.content for entry in entries if entry.kind == MODE],
        "declared_tools": [entry.content for entry in entries if entry.kind == TOOL],
    }


def rows_of(entries: list[CatalogRevisionEntry]) -> tuple[tuple[AgentMode, ...], tuple[DeclaredTool, ...]]:
    """The unsaved modes (with their source and timestamps) and declared tools of these entries, in order."""
    modes = tuple(AgentMode(**entry.content, **_unstamped(entry.stamp)) for entry in entries if entry.kind == MODE)
    return modes, tuple(DeclaredTool(**entry.content) for entry in entries if entry.kind == TOOL)


def mode_stamp(mode: AgentMode) -> dict:
    """What agents are shown of a mode beyond the portable format: its source and timestamps."""
    return {"source": mode.source, "created_at": mode.created_at.isoformat(), "updated_at": mode.updated_at.isoformat()}


def _unstamped(stamp: dict | None) -> dict:
    """A mode_stamp back as AgentMode's arguments; none for an entry without one."""
    times = ("created_at", "updated_at")
    return {**stamp, **{name: datetime.fromisoformat(stamp[name]) for name in times}} if stamp else {}


def store_changes(revision: CatalogRevision, *, before: list[CatalogRevisionEntry], document: dict, modes: list):
    """Store, as revision's, document's entries (export_document's of modes) that differ from before's, and removals."""
    after = [
        CatalogRevisionEntry(
            kind=MODE, identity=mode.pk, position=mode.position, name=mode.key, content=content, stamp=mode_stamp(mode)
        )
        for content, mode in zip(document["modes"], modes, strict=True)
    ]
    after += [
        CatalogRevisionEntry(kind=TOOL, identity=content["name"], name=content["name"], content=content)
        for content in document["declared_tools"]
    ]
    stored = {(entry.kind, entry.identity): (entry.content, entry.stamp) for entry in before}
    new = {(entry.kind, entry.identity) for entry in after}
    changed = [entry for entry in after if stored.get((entry.kind, entry.identity)) != (entry.content, entry.stamp)]
    removed = [
        CatalogRevisionEntry(kind=entry.kind, identity=entry.identity, name=entry.name)
        for entry in before
        if (entry.kind, entry.identity) not in new
    ]
    for entry in (*changed, *removed):
        entry.revision = revision
    CatalogRevisionEntry.objects.bulk_create([*changed, *removed])


@dataclass(frozen=True)
class RowChange:
    """What one revision did to one mode or declared tool: created it, changed fields of it, or deleted it."""

    revision: CatalogRevision
    name: str  # a mode's key or a tool's name, as the revision had it
    change: str  # "created", "changed", "deleted"
    fields: tuple[str, ...] = ()  # for "changed"


def history_of(kind: str, identity: str) -> list[RowChange]:
    """The revisions that changed one mode (by id) or declared tool (by name), newest first (one query)."""
    entries = CatalogRevisionEntry.objects.filter(kind=kind, identity=identity).select_related("revision__created_by")
    changes, before = [], None
    for entry in entries.order_by("revision_id"):
        if entry.content is None:
            changes.append(RowChange(entry.revision, entry.name, "deleted"))
        elif before is None:
            changes.append(RowChange(entry.revision, entry.name, "created"))
        elif fields := tuple(name for name, value in entry.content.items() if before.get(name) != value):
            changes.append(RowChange(entry.revision, entry.name, "changed", fields))
        before = entry.content
    return changes[::-1]


class ChangedSinceLoaded(Conflict):
    """An edit made on a view of a row older than its last change: saving it would undo that change unseen."""


def check_unchanged_since(*, kind: str, identities: list[str], number: int | None) -> None:
    """
    ChangedSinceLoaded, naming the latest such change, if a revision after number changed one of the modes (by id) or
    declared tools (by name); InvalidInput if number names no revision recorded (None: not a number), which would judge
    nothing. Two queries, however many rows.
    """
    if number is None or number > CatalogHead.objects.values_list("latest", flat=True).get(pk=1):
        raise InvalidInput("The page says no revision it was opened at; reload it.")
    newer = CatalogRevisionEntry.objects.filter(kind=kind, identity__in=identities, revision_id__gt=number)
    entry = newer.select_related("revision__created_by").order_by("-revision_id").first()
    if entry is not None:
        by = f" by {entry.revision.created_by}" if entry.revision.created_by else ""
        raise ChangedSinceLoaded(
            f"{'Mode' if kind == MODE else 'Declared tool'} {entry.name!r} was changed in revision {entry.revision_id}"
            f"{by} after you opened this page. The page shows that change now: make yours again."
        )


def state_at(kind: str, identity: str, number: int) -> dict | None:
    """The fields of one mode or declared tool as revision number left it; None if it was not in that catalog."""
    entries = CatalogRevisionEntry.objects.filter(kind=kind, identity=identity, revision_id__lte=number)
    entry = entries.order_by("-revision_id").first()
    return entry and entry.content


def deleted_since(kind: str) -> list[CatalogRevisionEntry]:
    """The removals no later entry of the same row undoes, newest first: the modes or tools gone from the catalog."""
    undone = CatalogRevisionEntry.objects.filter(
        kind=kind, identity=OuterRef("identity"), revision_id__gt=OuterRef("revision_id")
    )
    removals = CatalogRevisionEntry.objects.filter(kind=kind, content__isnull=True).exclude(Exists(undone))
    return list(removals.select_related("revision").order_by("-revision_id"))
