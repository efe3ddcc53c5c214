"""
Catalog releases: which revision (modes.revisions) agents are served (modes.catalog), and how one gets there.

With CATALOG_APPROVALS = N >= 1, a change makes a pending revision that agents do not see until N staff users holding
modes.approve_revision, none of whom authored a change since the published revision, approve it, and a user with
modes.publish_revision publishes it; modes.publish_unreviewed_revision publishes without them, recorded as unreviewed.
Publishing a revision that was published before is a rollback: the rows are written back to it as a new revision,
published at once, so that admins edit what agents see. A publication may be staged (modes.rollouts): its revision
then reaches a share of the sessions first, and is promoted to everyone or aborted. ReleaseForbidden or
ReleaseConflict change nothing.
"""

import difflib
import logging
from collections.abc import Callable

from django.conf import settings
from django.db import models, transaction

from aptix_site.service_errors import Conflict, NotAllowed

from .catalog import Catalog, catalog_at_revision, no_such_revision
from .models import AgentMode, CatalogApproval, CatalogHead, CatalogRevision, CatalogRollout
from .permissions import may
from .portable import PORTABLE_FIELDS, TOOL_FIELDS
from .revisions import publish, rows_differ_from_latest
from .rollouts import Staging, check_seen_rollout, describe, end_rollout, start_rollout, widen_rollout
from .routing.gate import check_gate
from .rules import InvalidCatalog, validate_catalog
from .services import ModeDeletionRefused, restore_revision_rows


logger = logging.getLogger(__name__)

# The diff's warning for a mode whose entry_confirmation becomes none (issue 40).
ENTERED_UNCONFIRMED = "entryConfirmationNone"
DIFF_WARNING_CODES = (ENTERED_UNCONFIRMED,)


class ReleaseStatus(models.TextChoices):
    """Where a revision stands (revision_status): what the API, the admin and the commands call it."""

    PUBLISHED = "published"  # the one agents are served (while a rollout is in flight: the control)
    STAGED = "staged"  # served to a rollout's cohort
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
    if head.rollout_id is not None and revision.number == head.rollout.revision_id:
        return ReleaseStatus.STAGED
    if revision.published_at is not None:
        return ReleaseStatus.PREVIOUS
    if revision.number == head.latest and revision.number > head.published:
        return ReleaseStatus.PENDING
    return ReleaseStatus.UNPUBLISHED


def catalog_head(*, locked: bool = False) -> CatalogHead:
    # Locked: one release at a time, approvals and publications queue on the head row, as the catalog's writes do.
    # Unlocked, with the rollout in flight (a revision's status names it); locked, it is read when needed, as
    # PostgreSQL locks no row on the nullable side of a join.
    return CatalogHead.locked() if locked else CatalogHead.objects.select_related("rollout").get(pk=1)


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


def may_publish(user) -> bool:
    return may(user, "publish_revision") or may(user, "publish_unreviewed_revision")


def _require_publisher(user, doing: str) -> None:
    if not may_publish(user):
        _require(user, "publish_revision", doing)


def _missing_approvals(revision: CatalogRevision, user) -> int:
    """How many approvals revision lacks; ReleaseConflict if it lacks any and user may not publish it without them."""
    approvals = revision.approvals.count()
    missing = settings.CATALOG_APPROVALS - approvals
    if missing > 0 and not may(user, "publish_unreviewed_revision"):
        raise ReleaseConflict(
            f"Revision {revision.number} has {approvals} of the {settings.CATALOG_APPROVALS} approvals it needs; "
            f"{missing} more staff user(s) with modes.approve_revision who made none of its changes must "
            "approve it first."
        )
    return max(missing, 0)


def release_actions(user, summary: dict) -> dict:
    """What user may do on the releases page: approve the pending or the staged revision, publish, roll back."""
    pending, head = summary["pending"], summary["head"]
    return {
        "approve": _may_approve(user, pending, summary["approvals"], head),
        "approve_staged": _may_approve(user, summary["staged"], summary["staged_approvals"], head),
        "publish": bool(pending) and may_publish(user),
        "roll_back": may(user, "publish_revision"),
        "rollout": may_publish(user),
    }


def _may_approve(user, revision: CatalogRevision | None, approvals: list[CatalogApproval], head: CatalogHead) -> bool:
    return (
        revision is not None
        and may(user, "approve_revision")
        and user.pk not in authors_since_published(revision.number, head)
        and not any(approval.user_id == user.pk for approval in approvals)
    )


def approve_revision(*, number: int, user) -> CatalogRevision:
    """Record user's approval of the pending revision number; approving it again changes nothing."""
    _require(user, "approve_revision", "approve catalog revisions")
    with transaction.atomic():
        head = catalog_head(locked=True)
        revision = get_revision(number)
        status = revision_status(revision, head)
        if status not in (ReleaseStatus.PENDING, ReleaseStatus.STAGED):
            raise ReleaseConflict(
                f"Revision {number} is {status}, not pending: only the newest revision, before it is published, "
                "or the one being rolled out can be approved."
            )
        if user.pk in authors_since_published(number, head):
            raise ReleaseForbidden(
                f"You made changes that revision {number} publishes, so another admin must approve it."
            )
        check_gate(number=number, published=head.published, user=user)
        CatalogApproval.objects.get_or_create(revision=revision, user=user)
    return revision


def publish_revision(*, number: int, user, staging: Staging | None = None) -> CatalogRevision:
    """
    Make revision number the one agents are served, or with staging the one a rollout serves to its cohort (raising
    the share of the rollout in flight, for its revision); a rollback returns the new revision that restores it.
    """
    _require_publisher(user, "publish catalog revisions")
    with transaction.atomic():
        head = catalog_head(locked=True)
        revision = get_revision(number)
        if staging is not None:
            check_seen_rollout(revision, staging)
        status = revision_status(revision, head)
        if status == ReleaseStatus.STAGED:
            if staging is None:
                raise ReleaseConflict(
                    f"Revision {number} is being rolled out to part of the sessions: promote it to everyone "
                    "(promote_rollout, POST /api/catalog/rollout/promote/) or raise its share."
                )
            _judged_for_publication(revision, head, user)  # a wider share is a wider publication: judged as one
            return widen_rollout(head.rollout, staging=staging).revision
        if staging is not None and status != ReleaseStatus.PENDING:
            raise ReleaseConflict(f"Revision {number} is {status}: only the pending revision can be staged.")
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
        missing = _judged_for_publication(revision, head, user)
        if staging is not None:
            start_rollout(head, revision, staging=staging, by=user, unreviewed=missing > 0)
            return revision
        publish(head, revision, by=user, unreviewed=missing > 0)
        head.save(update_fields=["published", "published_at"])
    return revision


def promote_rollout(*, user, number: int | None = None) -> CatalogRevision:
    """
    The rollout in flight's revision (number's, if given: a page that shows it), published to every session; its
    approvals, the catalog's rules and the routing gate are judged again, as publishing it.
    """
    _require_publisher(user, "promote a rollout")
    with transaction.atomic():
        head = _head_in_rollout(number)
        revision = head.rollout.revision
        missing = _judged_for_publication(revision, head, user)
        end_rollout(head, state=CatalogRollout.State.PROMOTED, by=user)
        publish(head, revision, by=user, unreviewed=missing > 0)
        head.save(update_fields=["published", "published_at"])
    logger.info("Rollout of catalog revision %s promoted to every session by %s", revision.number, user)
    return revision


def abort_rollout(*, user, number: int | None = None, reason: str = "") -> CatalogRollout:
    """
    Every session back on the control revision (ending the rollout of revision number, if given); their audit trails
    keep every change made in the rollout.
    """
    _require_publisher(user, "abort a rollout")
    with transaction.atomic():
        rollout = end_rollout(_head_in_rollout(number), state=CatalogRollout.State.ABORTED, by=user, reason=reason)
    logger.warning("Rollout of catalog revision %s aborted by %s: %s", rollout.revision_id, user, reason or "no reason")
    return rollout


def abort_rollout_by_guard(*, rollout_id, verdict: Callable[[CatalogRollout], str | None]) -> bool:
    """
    The guard's abort (sessions_app.rollout_cohorts), if that rollout is still in flight and verdict gives a reason to
    end it: whether it ended it. The verdict is judged under the head's lock, on the rollout as it is then: a wider
    share may have replaced its guard meanwhile, and a verdict on the guard it replaced would end it for a reason
    untrue.
    """
    with transaction.atomic():
        head = catalog_head(locked=True)
        if head.rollout_id != rollout_id or not (reason := verdict(head.rollout)):
            return False
        rollout = end_rollout(head, state=CatalogRollout.State.ABORTED, by=None, reason=reason)
    logger.warning("Rollout of catalog revision %s aborted by its guard: %s", rollout.revision_id, reason)
    return True


def rollout_settled(*, rollout_id) -> CatalogRollout:
    """
    The rollout as it is once a promotion or abort under way has committed: read under the head's lock, which they
    take. A judgment of it (check_rollout's) reports this, true at its end, not the rollout it read before judging.
    """
    with transaction.atomic():
        catalog_head(locked=True)
        return CatalogRollout.objects.select_related("ended_by").get(pk=rollout_id)


class NoRolloutInFlight(ReleaseConflict):
    message = "No rollout is in flight: nothing to promote or abort."


def _head_in_rollout(number: int | None) -> CatalogHead:
    head = catalog_head(locked=True)
    if head.rollout_id is None:
        raise NoRolloutInFlight()
    if number is not None and head.rollout.revision_id != number:
        raise ReleaseConflict(
            f"Revision {number} is not being rolled out; revision {head.rollout.revision_id} is. Nothing changed."
        )
    return head


def _judged_for_publication(revision: CatalogRevision, head: CatalogHead, user) -> int:
    """
    What publishing revision to more sessions than now asks, whether it is published, staged or widened: its approvals
    (the number missing, which user may publish without), the catalog's rules and the routing gate; ReleaseConflict
    or RoutingGateRefused otherwise.
    """
    missing = _missing_approvals(revision, user)
    _validate(revision.number)
    check_gate(number=revision.number, published=head.published, user=user)
    return missing


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
        if restored is None:  # the pending revision holds that catalog already: published as the rollback it is
            latest.restores = revision.number
            latest.save(update_fields=["restores"])
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
    head = CatalogHead.objects.select_related("rollout").filter(pk=1).first()
    if head is None or _pending_number(head) is None:
        return None
    return head.published, head.latest, CatalogApproval.objects.filter(revision_id=head.latest).count()


def _pending_number(head: CatalogHead) -> int | None:
    """The newest revision while it waits for its release: newer than the published one, and not being rolled out."""
    staged = head.rollout.revision_id if head.rollout_id is not None else None
    return head.latest if head.latest > head.published and head.latest != staged else None


def release_summary() -> dict:
    """What catalog_status and the releases page show; "unrecorded": what changes made past the services changed."""
    head = catalog_head()
    pending = get_revision(head.latest) if _pending_number(head) else None
    staged = head.rollout.revision if head.rollout_id is not None else None
    earlier = CatalogRevision.objects.filter(published_at__isnull=False).exclude(number=head.published)
    return {
        "head": head,
        "rollout": rollout_of(head),
        "published": get_revision(head.published) if head.published else None,
        "earlier": list(earlier.select_related("published_by")[:10]),
        "pending": pending,
        "approvals": _approvals(pending),
        "staged": staged,  # the rollout in flight's revision, which promoting it judges the approvals of again
        "staged_approvals": _approvals(staged),
        "needed": settings.CATALOG_APPROVALS,
        "unrecorded": rows_differ_from_latest(),
    }


def _approvals(revision: CatalogRevision | None) -> list[CatalogApproval]:
    return list(revision.approvals.select_related("user")) if revision else []


def rollout_of(head: CatalogHead) -> dict | None:
    """The rollout in flight, else the last one that ended, with who it serves in words; None if there was none."""
    rollout = head.rollout or CatalogRollout.objects.order_by("-started_at").first()
    return rollout and {"rollout": rollout, "in_flight": rollout.pk == head.rollout_id, "serves": describe(rollout)}
