"""
Catalog revisions: the whole catalog as each write through modes.services left it, numbered 1, 2, 3, ...; each
stores only what it changed (modes.revision_store). This is the one place where rows become a revision, at the end of
each write's transaction (modes.services.catalog_change). A change made past the services (update(), raw SQL) is in no
revision, so never served: rows_differ_from_latest() finds it, `manage.py record_revision` records it.
"""

from django.conf import settings
from django.utils import timezone

from aptix_site.service_errors import Conflict

from .routing.gate import check_gate_on_record
from .rules import validate_catalog
from .models import AgentMode, CatalogHead, CatalogRevision, DeclaredTool
from .portable import MODE_SECTION, TOOL_SECTION, export_document, upgrade_document
from .revision_store import document_of, entries_at, store_changes


def record_revision(*, created_by, restores: int | None = None) -> CatalogRevision | None:
    """The rows as a new revision by created_by, None if the newest one holds them; InvalidCatalog if a rule breaks,
    RoutingGateRefusedChange if it would be published at once and misses the routing gate (modes.routing.gate),
    RolloutInFlight if it would be published at once while a rollout is in flight."""
    head = CatalogHead.locked()
    modes, catalog, before, summary = _changes_since(head.latest)
    if summary is None:
        return None
    validate_catalog(modes)
    head.latest += 1
    revision = CatalogRevision.objects.create(
        number=head.latest, created_by=created_by, summary=summary, restores=restores
    )
    store_changes(revision, before=before, document=catalog, modes=modes)
    if settings.CATALOG_APPROVALS == 0 or head.published == 0:  # the first revision is published at once too
        if head.published and restores is None:  # a rollback restores what was published once: not gated
            check_gate_on_record(number=revision.number, published=head.published, user=created_by)
        publish(head, revision, by=created_by, unreviewed=False)
    head.save()
    return revision


class RolloutInFlight(Conflict):
    """Another publication while a rollout is in flight: it must be promoted or aborted first (409)."""

    def __init__(self, head: CatalogHead):
        super().__init__(
            f"The rollout of revision {head.rollout.revision_id} to part of the sessions is in flight: promote it to "
            "everyone or abort it before publishing another revision. Nothing changed."
        )


def publish(head: CatalogHead, revision: CatalogRevision, *, by, unreviewed: bool) -> None:
    """
    Make revision the one agents are served from every worker's next request; the caller saves head. RolloutInFlight
    while a rollout is (modes.rollouts ends it first to promote it).
    """
    if head.rollout_id is not None:
        raise RolloutInFlight(head)
    revision.published_at, revision.published_by, revision.unreviewed = timezone.now(), by, unreviewed
    revision.save(update_fields=["published_at", "published_by", "unreviewed"])
    head.published, head.published_at = revision.number, revision.published_at


def rows_differ_from_latest() -> str | None:
    """What the rows change against the newest revision (summarize's line), or None if that revision holds them."""
    latest = CatalogHead.objects.filter(pk=1).values_list("latest", flat=True).first()
    if not latest:
        return None
    *_, summary = _changes_since(latest)
    return summary


def _changes_since(number: int):
    """The modes, their document with the tools', revision number's entries, and summarize's line (None: no change)."""
    modes = list(AgentMode.objects.all())
    catalog = export_document(modes=modes, declared_tools=list(DeclaredTool.objects.all()))
    before = entries_at(number)
    # Upgraded: a field added to modes since that revision is no change of the catalog.
    previous = upgrade_document(document_of(before)) if number else None
    return modes, catalog, before, None if catalog == previous else summarize(previous, catalog)


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
            elif fields := [field for field in section.fields if entry.get(field) != old[name].get(field)]:
                parts.append(f"{named}: {', '.join(fields)}")
        parts += [f"{label} {entry[section.naming_field]} deleted" for name, entry in old.items() if name not in new]
    return "; ".join(parts) or "no change"
