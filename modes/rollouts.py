"""
Staged rollouts (issue 43): a publication that serves its revision to a share of the sessions (by their buckets,
modes.catalog.Rollout) and to the sessions of named organizations, while every other session keeps the revision
published before it, the control; until it is promoted to everyone or aborted. modes.releases says who may do which
and when; this module keeps the rollout's row and the head's pointer to it, under the head's lock.
"""

import logging
from dataclasses import dataclass
from decimal import Decimal

from django.utils import timezone

from accounts.models import Organization
from aptix_site.service_errors import Conflict, InvalidInput

from .models import CatalogHead, CatalogRevision, CatalogRollout
from .revisions import RolloutInFlight

logger = logging.getLogger(__name__)


class InvalidStaging(InvalidInput):
    """A share, organization or guard that a rollout cannot take (400)."""


class RolloutNarrowed(Conflict):
    def __init__(self, rollout: CatalogRollout, share: Decimal):
        super().__init__(
            f"The rollout of revision {rollout.revision_id} serves {rollout.share}% of the sessions: its share can be "
            f"raised, never lowered to {share}%, which would move sessions back. Abort it instead. Nothing changed."
        )


class RolloutAborted(Conflict):
    """A request to raise the share of a rollout that has ended (a stale page, or one that raced the abort)."""

    def __init__(self, rollout: CatalogRollout):
        why = f" ({rollout.end_reason})" if rollout.end_reason else ""
        super().__init__(
            f"The rollout of revision {rollout.revision_id} was aborted{why}: a request to raise its share comes too "
            "late. To roll it out again, ask for a restart. Nothing changed."
        )


class RolloutsChangedSinceSeen(Conflict):
    def __init__(self, number: int):
        super().__init__(
            f"Revision {number} was staged, promoted or aborted since this page was opened. Nothing changed: see where "
            "it is on the releases page."
        )


@dataclass(frozen=True)
class Guard:
    """Abort when the cohort's metric per session is more than ratio times the control's, once min_sessions acted."""

    metric: str  # CatalogRollout.Metric
    ratio: Decimal
    min_sessions: int


@dataclass(frozen=True)
class Staging:
    """What a staged publication asks: a percentage of the sessions, organizations by slug, and a guard."""

    share: Decimal | None = None  # None: none (a new rollout), or the rollout's own (a wider one)
    organizations: tuple[str, ...] = ()
    guard: Guard | None = None
    restart: bool = False  # a revision whose rollout was aborted is rolled out again only when asked
    # A page's: the id of the revision's latest rollout it showed ("" for none); None: the caller does not say.
    seen_rollout: str | None = None


def check_seen_rollout(revision: CatalogRevision, staging: Staging) -> None:
    """RolloutsChangedSinceSeen if the page staging comes from showed another latest rollout than revision has now."""
    if staging.seen_rollout is not None:
        latest = revision.rollouts.order_by("-started_at").values_list("pk", flat=True).first()
        if str(latest or "") != staging.seen_rollout:
            raise RolloutsChangedSinceSeen(revision.number)


def start_rollout(head: CatalogHead, revision: CatalogRevision, *, staging: Staging, by, unreviewed: bool):
    """Serve revision to staging's cohort from every worker's next request; the caller holds the head's lock."""
    if head.rollout_id is not None:
        raise RolloutInFlight(head)
    aborted = revision.rollouts.filter(state=CatalogRollout.State.ABORTED).order_by("-started_at").first()
    if aborted is not None and not staging.restart:
        raise RolloutAborted(aborted)
    organizations = _organizations(staging.organizations)
    share = staging.share or Decimal(0)
    if not share and not organizations:
        raise InvalidStaging("A staged publication needs a share above 0 or at least one organization.", field="share")
    rollout = CatalogRollout.objects.create(
        revision=revision, control_id=head.published, share=share, unreviewed=unreviewed, started_by=by,
        **_guard_fields(staging.guard),
    )
    rollout.organizations.set(organizations)
    head.rollout = rollout
    head.save(update_fields=["rollout"])
    logger.info("Rollout of catalog revision %s started by %s: %s", revision.number, by, describe(rollout))
    return rollout


def widen_rollout(rollout: CatalogRollout, *, staging: Staging) -> CatalogRollout:
    """A higher share (never lower), more organizations (those named are kept), and the guard if one is given."""
    share = rollout.share if staging.share is None else staging.share
    if share < rollout.share:
        raise RolloutNarrowed(rollout, share)
    organizations = _organizations(staging.organizations)
    rollout.share = share
    fields = ["share", "changed_at"]
    for name, value in _guard_fields(staging.guard).items():
        setattr(rollout, name, value)
        fields.append(name)
    rollout.save(update_fields=fields)  # changed_at: every process loads the rollout again
    rollout.organizations.add(*organizations)
    logger.info("Rollout of catalog revision %s widened: %s", rollout.revision_id, describe(rollout))
    return rollout


def end_rollout(head: CatalogHead, *, state: str, by, reason: str = "") -> CatalogRollout:
    """The rollout in flight ends (promoted or aborted); the caller holds the head's lock and publishes, if it does."""
    rollout = head.rollout
    rollout.state, rollout.ended_at, rollout.ended_by, rollout.end_reason = state, timezone.now(), by, reason
    rollout.save(update_fields=["state", "ended_at", "ended_by", "end_reason"])
    head.rollout = None
    head.save(update_fields=["rollout"])
    return rollout


def describe(rollout: CatalogRollout) -> str:
    """Who the rollout serves, in words: "10% of the sessions and those of acme"."""
    slugs = sorted(rollout.organizations.values_list("slug", flat=True))
    parts = [f"{rollout.share.normalize():f}% of the sessions"] if rollout.share else []
    parts += [f"those of {', '.join(slugs)}"] if slugs else []
    return " and ".join(parts)


def _organizations(slugs) -> list[Organization]:
    """The organizations named, locked until the rollout is written: one being deleted meanwhile is waited for, then
    unknown, rather than a foreign key broken at commit."""
    named = Organization.objects.select_for_update(no_key=True).filter(slug__in=slugs)
    found = {organization.slug: organization for organization in named}
    if unknown := sorted(set(slugs) - set(found)):
        raise InvalidStaging(f"No organization has the slug {', '.join(map(repr, unknown))}.", field="organizations")
    return list(found.values())


def _guard_fields(guard: Guard | None) -> dict:
    if guard is None:
        return {}
    return {"guard_metric": guard.metric, "guard_ratio": guard.ratio, "guard_min_sessions": guard.min_sessions}
