"""
How a rollout's cohort fares against the control (issue 43), and its guard. A cohort is read from what its sessions
did since the rollout started, each record naming the revision it was served under: the sessions created or acting
(a mode change, a refusal by the mode graph, a declined proposal), their mode changes, refusals and declined proposals.

The guard aborts the rollout when its metric per session in the cohort is more than its ratio times the control's,
once the cohort has its minimum of sessions. Nothing runs in the background: the guard is judged on the writes that
feed it (a refusal, a declined proposal), at most once a minute per rollout whichever host takes them, and by
`manage.py check_rollout`.
"""

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from modes.models import CatalogRollout
from modes.releases import abort_rollout_by_guard
from modes.routing.evaluation import latest_evaluation

from .confirmations import DECLINED
from .models import AgentSession, ModeChange, ModeChangeConfirmation, ModeChangeRefusal

logger = logging.getLogger(__name__)

GUARD_INTERVAL = timedelta(minutes=1)


@dataclass(frozen=True)
class Cohort:
    """What the sessions served one revision did since a rollout started; each figure with its count."""

    revision: int
    sessions: int
    changes: int
    refused: int
    declined: int

    def per_session(self, metric: str) -> float:
        """changes, refused or declined, per session (0 for a cohort with none)."""
        return getattr(self, metric) / self.sessions if self.sessions else 0.0

    def report(self) -> dict:
        """As GET /api/catalog/rollout/ and the cohorts page show it: the figures, per session, and the routing
        evaluation of the revision by CATALOG_EVAL_SCORER, each with its count."""
        evaluation = latest_evaluation(number=self.revision, scorer=settings.CATALOG_EVAL_SCORER)
        return {
            "revision": self.revision, "sessions": self.sessions,
            **{name: getattr(self, name) for name in METRICS},
            **{f"{name}_per_session": self.per_session(name) for name in METRICS},
            "routing_accuracy": evaluation and evaluation.result["accuracy"],
            "routing_cases": evaluation and evaluation.result["cases"],
        }


METRICS = ("changes", "refused", "declined")


def cohorts(rollout: CatalogRollout) -> tuple[Cohort, Cohort]:
    """(the rollout's cohort, the control's), from the rollout's start to its end (or now)."""
    return tuple(_cohort(revision, rollout) for revision in (rollout.revision_id, rollout.control_id))


def _cohort(revision: int, rollout: CatalogRollout) -> Cohort:
    def during(rows, field):
        period = {f"{field}__gte": rollout.started_at, **({f"{field}__lt": rollout.ended_at} if rollout.ended_at else {})}
        return rows.filter(catalog_revision=revision, **period).order_by()

    created = during(AgentSession.objects, "created_at")
    changes = during(ModeChange.objects, "changed_at")
    refused = during(ModeChangeRefusal.objects, "refused_at")
    declined = during(ModeChangeConfirmation.objects.filter(choice__in=DECLINED), "answered_at")
    acting = created.values("id").union(*(rows.values("session_id") for rows in (changes, refused, declined)))
    return Cohort(revision, acting.count(), changes.count(), refused.count(), declined.count())


def guard_verdict(rollout: CatalogRollout) -> str | None:
    """Why the rollout's guard aborts it (the reason recorded), or None: no guard, too few sessions, or within it."""
    if not rollout.guard_metric:
        return None
    staged, control = cohorts(rollout)
    if staged.sessions < rollout.guard_min_sessions:
        return None
    metric = rollout.guard_metric
    mine, theirs = staged.per_session(metric), control.per_session(metric)
    if mine <= float(rollout.guard_ratio) * theirs:
        return None
    return (
        f"Its guard tripped: {rollout.get_guard_metric_display()} {mine:.2f} in revision {staged.revision}'s cohort "
        f"({staged.sessions} sessions) against {theirs:.2f} in the control's (revision {control.revision}, "
        f"{control.sessions} sessions), more than {rollout.guard_ratio.normalize():f} times."
    )


def judge_guard(rollout: CatalogRollout) -> bool:
    """
    Abort the rollout if its guard trips: whether it did. Judged first without the head's lock, so that a guard that
    holds (nearly every judgment) keeps no catalog write waiting while the cohorts are counted; one that trips is judged
    again under it, on the rollout as promote, abort and a wider share leave it.
    """
    return guard_verdict(rollout) is not None and abort_rollout_by_guard(rollout_id=rollout.pk, verdict=guard_verdict)


def judge_guard_if_due() -> None:
    """
    After a write that feeds a guard: the guarded rollout in flight is judged if nobody judged it in the last
    GUARD_INTERVAL. One UPDATE claims the turn, so that one request on one host judges it, the others go on.
    """
    now = timezone.now()
    due = Q(guard_checked_at__isnull=True) | Q(guard_checked_at__lte=now - GUARD_INTERVAL)
    guarded = CatalogRollout.objects.filter(due, state=CatalogRollout.State.IN_FLIGHT).exclude(guard_metric="")
    if guarded.update(guard_checked_at=now):
        rollout = CatalogRollout.objects.filter(state=CatalogRollout.State.IN_FLIGHT).first()
        if rollout is None:  # ended meanwhile
            return
        try:
            judge_guard(rollout)
        except Exception:  # the write it follows is done: a guard that cannot be judged now is judged next time
            logger.exception("The guard of the rollout of catalog revision %s could not be judged", rollout.revision_id)
