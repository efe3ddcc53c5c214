"""
Catalog releases: which revision (modes.revisions) agents are served (modes.catalog), and how one gets there.

With CATALOG_APPROVALS = N >= 1, a change makes a pending revision that agents do not see until N staff users holding
modes.approve_revision, none of whom authored a change since the published revision, approve it, and a user with
modes.publish_revision publishes it; modes.publish_unreviewed_revision publishes without them, recorded as unreviewed.
Publishing a revision that was published before is a rollback: the rows are written back to it as a new revision,
published at once, so that admins edit what agents see. ReleaseForbidden or ReleaseConflict change nothing.
"""

import difflib

from django.conf import settings
from django.db import models, transaction

from aptix_site.service_errors import Conflict, NotAllowed

from .catalog import Catalog, catalog_at_revision, no_such_revision
from .models import AgentMode, CatalogApproval, CatalogHead, CatalogRevision
from .permissions import may
from .portable import PORTABLE_FIELDS, TOOL_FIELDS
from .revisions import publish, rows_differ_from_latest
from .routing.gate import check_gate
from .rules import InvalidCatalog, validate_catalog
from .services import ModeDeletionRefused, restore_revision_rows


# The diff's warning for a mode whose entry_confirmation becomes none (issue 40).
ENTERED_UNCONFIRMED = "entryConfirmationNone"
DIFF_WARNING_CODES = (ENTERED_UNCONFIRMED,)


class ReleaseStatus(models.TextChoices):
    """Where a revision stands (revision_status): what the API, the admin and the commands call it."""

    PUBLISHED = "published"  # the one agents are served
    PENDING = "pending"  # the newest, recorded since, waiting for its review
    PREVIOUS = "previous"  # published before
    UNPUBLISHED = "unpublished"  # never published, and replaced by a newer one


class ReleaseForbidden(NotAllowed):
    """The user may not do this (a permission missing, or an author approving their own change)."""


class ReleaseConflict(Conflict):
    """The catalog is not in a state that allows this (approvals missing, a revision not pending)."""


def revision_status(revision: CatalogRevision, head: CatalogHead) -> str:
    if revision.number == head.published:
        return ReleaseStatus.PUBLISHED
    if revision.published_at is not None:
        return ReleaseStatus.PREVIOUS
    if revision.number == head.latest and revision.number > head.published:
        return ReleaseStatus.PENDING
    return ReleaseStatus.UNPUBLISHED


def catalog_head(*, locked: bool = False) -> CatalogHead:
    # Locked: one release at a time, approvals and publications queue on the head row, as the catalog's writes do.
    rows = CatalogHead.objects.select_for_update() if locked else CatalogHead.objects
    return rows.get(pk=1)


def get_revision(number: int) -> CatalogRevision:
    """UnknownRevisionError if there is none."""
    revision = CatalogRevision.objects.filter(number=number).select_related("created_by", "published_by").first()
    if revision is None:
        raise no_such_revision(number)
    return revision


def authors_since_published(number: int, head: CatalogHead) -> set:
    """The ids of the users who made the changes after the published revision, up to revision number."""
    changes = CatalogRevision.objects.filter(number__gt=head.published, number__lte=number)
    return set(changes.exclude(created_by=None).values_list("created_by", flat=True))


def _require(user, permission: str, doing: str) -> None:
    if not may(user, permission):
        raise ReleaseForbidden(f"You need the permission modes.{permission} to {doing}.")


def release_actions(user, summary: dict) -> dict:
    """What user may do on the releases page: approve or publish the pending revision, roll back."""
    pending, head = summary["pending"], summary["head"]
    return {
        "approve": bool(pending)
        and may(user, "approve_revision")
        and user.pk not in authors_since_published(pending.number, head)
        and not any(approval.user_id == user.pk for approval in summary["approvals"]),
        "publish": bool(pending) and (may(user, "publish_revision") or may(user, "publish_unreviewed_revision")),
        "roll_back": may(user, "publish_revision"),
    }


def approve_revision(*, number: int, user) -> CatalogRevision:
    """Record user's approval of the pending revision number; approving it again changes nothing."""
    _require(user, "approve_revision", "approve catalog revisions")
    with transaction.atomic():
        head = catalog_head(locked=True)
        revision = get_revision(number)
        status = revision_status(revision, head)
        if status != ReleaseStatus.PENDING:
            raise ReleaseConflict(
                f"Revision {number} is {status}, not pending: only the newest revision, before it is published, "
                "can be approved."
            )
        if user.pk in authors_since_published(number, head):
            raise ReleaseForbidden(
                f"You made changes that revision {number} publishes, so another admin must approve it."
            )
        check_gate(number=number, published=head.published, user=user)
        CatalogApproval.objects.get_or_create(revision=revision, user=user)
    return revision


def publish_revision(*, number: int, user) -> CatalogRevision:
    """Make revision number the one agents are served; a rollback returns the new revision that restores it."""
    unreviewed_allowed = may(user, "publish_unreviewed_revision")
    if not unreviewed_allowed:
        _require(user, "publish_revision", "publish catalog revisions")
    with transaction.atomic():
        head = catalog_head(locked=True)
        revision = get_revision(number)
        status = revision_status(revision, head)
        if status == ReleaseStatus.PUBLISHED:
            return revision
        if status == ReleaseStatus.PREVIOUS:
            _require(user, "publish_revision", "roll the catalog back to an earlier revision")
            _validate(number)
            return _roll_back(revision, user)
        if status == ReleaseStatus.UNPUBLISHED:
            raise ReleaseConflict(
                f"Revision {number} was never published and revision {head.latest} has replaced it; "
                f"review and publish revision {head.latest} instead."
            )
        approvals = revision.approvals.count()
        missing = settings.CATALOG_APPROVALS - approvals
        if missing > 0 and not unreviewed_allowed:
            raise ReleaseConflict(
                f"Revision {number} has {approvals} of the {settings.CATALOG_APPROVALS} approvals it needs; "
                f"{missing} more staff user(s) with modes.approve_revision who made none of its changes must "
                "approve it first."
            )
        _validate(number)
        check_gate(number=number, published=head.published, user=user)
        publish(head, revision, by=user, unreviewed=missing > 0)
        head.save(update_fields=["published", "published_at"])
    return revision


def _validate(number: int) -> None:
    """A catalog that breaks a rule is never published (again): ReleaseConflict naming the rule."""
    try:
        validate_catalog(catalog_at_revision(number).modes)
    except InvalidCatalog as error:
        raise ReleaseConflict(f"Revision {number} cannot be published: {error}") from None


def _roll_back(revision: CatalogRevision, user) -> CatalogRevision:
    try:
        restored = restore_revision_rows(number=revision.number, document=revision.catalog, restored_by=user)
    except (ModeDeletionRefused, InvalidCatalog) as error:
        raise ReleaseConflict(str(error)) from None
    head = catalog_head(locked=True)
    latest = restored or CatalogRevision.objects.get(number=head.latest)
    if head.published != latest.number:
        publish(head, latest, by=user, unreviewed=False)
        head.save(update_fields=["published", "published_at"])
    return latest


def revision_diff(*, number: int, against: int | None = None) -> dict:
    """What revision number changes against revision against (by default the published one), each field old and new."""
    against = catalog_head().published if against is None else against
    before, after = catalog_at_revision(against), catalog_at_revision(number)
    # In the new catalog's order, then what it removed.
    modes = [_mode_diff(before, after, pk, against, number) for pk in after.by_id | before.by_id]
    old_tools, new_tools = ({tool.name: tool for tool in catalog.declared_tools} for catalog in (before, after))
    tools = [
        {"name": name, **_changes(old_tools.get(name), new_tools.get(name), TOOL_FIELDS)}
        for name in new_tools | old_tools
    ]
    # The block as a session in the default mode gets it: the same for every mode but its first line, so once.
    prompt = _line_diff(before.system_prompt(None), after.system_prompt(None), against, number)
    return {"revision": number, "against": against, "prompt": prompt, "modes": modes, "declaredTools": tools}


def _line_diff(old: str, new: str, old_number: int, new_number: int) -> list[str]:
    names = f"revision {old_number}", f"revision {new_number}"
    return list(difflib.unified_diff(old.splitlines(), new.splitlines(), *names, lineterm=""))


def _changes(old, new, fields) -> dict:
    """Whether a row was added, removed, changed or unchanged, and its fields that differ, before and after."""
    changed = {
        field: {"before": getattr(old, field, None), "after": getattr(new, field, None)}
        for field in fields
        if getattr(old, field, None) != getattr(new, field, None)
    }
    change = "added" if old is None else "removed" if new is None else "changed" if changed else "unchanged"
    return {"change": change, "fields": changed}


def _mode_diff(before: Catalog, after: Catalog, pk: str, old: int, new: int) -> dict:
    """Shaped as modes.serializers.ModeDiffResponse documents it: its fields, its own prompt lines and its tools."""
    old_mode, new_mode = before.by_id.get(pk), after.by_id.get(pk)
    old_tools = {tool.name for tool in before.tools_for_mode(old_mode)} if old_mode else set()
    new_tools = {tool.name for tool in after.tools_for_mode(new_mode)} if new_mode else set()
    old_lines, new_lines = (
        f"Current Mode: {mode.key}\n- {mode.key}: {mode.when_to_use}" if mode else "" for mode in (old_mode, new_mode)
    )
    return {
        "key": (new_mode or old_mode).key,
        **_changes(old_mode, new_mode, PORTABLE_FIELDS),  # about the mode's own fields
        "prompt": _line_diff(old_lines, new_lines, old, new),  # the block's lines that are this mode's own
        "tools": {"added": sorted(new_tools - old_tools), "removed": sorted(old_tools - new_tools)},
        "warnings": _warnings(old_mode, new_mode),
    }


def _warnings(old_mode, new_mode) -> list[dict]:
    """What a reviewer should not miss in a mode's change, each {code, message}."""
    warnings, none = [], AgentMode.EntryConfirmation.NONE
    was_none = old_mode is not None and old_mode.entry_confirmation == none
    if new_mode is not None and new_mode.entry_confirmation == none and not was_none:
        warnings.append({
            "code": ENTERED_UNCONFIRMED,
            "message": f"Nobody will confirm a switch into {new_mode.key!r}: its entry_confirmation becomes none, so "
            "the model moves sessions into it without asking the user, whatever MODE_CHANGE_CONFIRMATION says.",
        })
    return warnings


def pending_release() -> tuple[int, int, int] | None:
    """(published, pending, approvals so far) while one is pending, else None: the mode pages' banner, two queries."""
    head = CatalogHead.objects.filter(pk=1).first()
    if head is None or head.latest <= head.published:
        return None
    return head.published, head.latest, CatalogApproval.objects.filter(revision_id=head.latest).count()


def release_summary() -> dict:
    """What catalog_status and the releases page show; "unrecorded": what changes made past the services changed."""
    head = catalog_head()
    pending = get_revision(head.latest) if head.latest > head.published else None
    earlier = CatalogRevision.objects.filter(published_at__isnull=False).exclude(number=head.published)
    return {
        "head": head,
        "published": get_revision(head.published) if head.published else None,
        "earlier": list(earlier.select_related("published_by")[:10]),
        "pending": pending,
        "approvals": list(pending.approvals.select_related("user")) if pending else [],
        "needed": settings.CATALOG_APPROVALS,
        "unrecorded": rows_differ_from_latest(),
    }
