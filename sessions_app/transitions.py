"""
How agents moved between modes over the last days (issue 29): the switches taken (and how many branched), those
the mode graph refused, those the user declined (issue 40: a question answered stay, decline or cancel; one left to
expire is neither), and the switches per day, for GET /api/catalog/transitions/ and the admin's mode graph.

Summing a 30-day period of the audit trail at each request took 10 s at ten million rows (benchmarks/RESULTS.md).
So the first request after an hour ends sums every complete hour not summed yet into TransitionHour, and a request
sums the hours' rows plus the audit rows since. An hour is summed once it ended ROLLUP_MARGIN ago: a change's time
is read under its session's lock and committed within seconds (DATABASE_STATEMENT_TIMEOUT_MS). Refusals and
declined proposals are few, and counted from their rows.

Days are UTC dates; a period of n days is today and the n - 1 days before it. Modes are named by their current
keys; a deleted mode, which only a refusal or a declined proposal can name (the audit keeps its modes from
deletion), by its id.
"""

from collections import Counter
from datetime import UTC, datetime, time, timedelta

from django.db import transaction
from django.db.models import Count, Q, Sum
from django.db.models.functions import TruncDate, TruncHour
from django.utils import timezone

from modes.catalog import no_such_revision
from modes.models import AgentMode, CatalogRevision

from .confirmations import DECLINED
from .models import ModeChange, ModeChangeConfirmation, ModeChangeRefusal, TransitionHour, TransitionRollup

MAX_DAYS = 365
ROLLUP_MARGIN = timedelta(minutes=5)
# Hours summed per transaction when catching up: about a second each at 35,000 changes an hour (benchmarks/RESULTS.md).
ROLLUP_CHUNK = timedelta(hours=6)


def transition_counts(*, days: int, revision: int | None = None) -> dict:
    """
    The switches of the last `days` days: {days, revision, transitions, refusals, declined, byDay}, as the endpoint
    answers; with revision, only those made, refused or declined under that catalog revision (a rollout's cohort).
    UnknownRevisionError for a revision that does not exist: a mistyped number must not read as "no switches".
    """
    if revision is not None and not CatalogRevision.objects.filter(number=revision).exists():
        raise no_such_revision(revision)
    now = timezone.now()
    first_day = now.astimezone(UTC).date() - timedelta(days=days - 1)
    since = datetime.combine(first_day, time.min, tzinfo=UTC)
    summed_through = max(roll_up(now=now), since)
    under = {} if revision is None else {"catalog_revision": revision}
    hours = TransitionHour.objects.filter(hour__gte=since, hour__lt=summed_through, **under)
    recent = ModeChange.objects.filter(changed_at__gte=summed_through, **under)

    pairs, branches, per_day = Counter(), Counter(), Counter()
    summed = hours.annotate(day=TruncDate("hour", tzinfo=UTC)).values("day", "from_mode_id", "to_mode_id")
    recent_rows = _per_pair(recent.annotate(day=TruncDate("changed_at", tzinfo=UTC)), "day")
    for row in [*summed.annotate(n=Sum("count"), b=Sum("branches")), *recent_rows]:
        pair = row["from_mode_id"], row["to_mode_id"]
        pairs[pair] += row["n"]
        branches[pair] += row["b"]
        per_day[row["day"]] += row["n"]
    refused = ModeChangeRefusal.objects.filter(refused_at__gte=since, **under).values("from_mode_id", "to_mode_id")
    refusals = Counter({(row["from_mode_id"], row["to_mode_id"]): row["n"] for row in refused.annotate(n=Count("id"))})
    # Questions answered stay, decline or cancel: by the day of the answer. An unanswered one has no answered_at.
    answered = ModeChangeConfirmation.objects.filter(answered_at__gte=since, choice__in=DECLINED, **under).order_by()
    declined, declined_per_day = Counter(), Counter()
    per_pair_and_day = answered.annotate(day=TruncDate("answered_at", tzinfo=UTC))
    for row in per_pair_and_day.values("day", "from_mode_id", "to_mode_id").annotate(n=Count("id")):
        declined[row["from_mode_id"], row["to_mode_id"]] += row["n"]
        declined_per_day[row["day"]] += row["n"]

    keys = dict(AgentMode.objects.values_list("id", "key"))
    named = lambda mode_id: keys.get(mode_id, mode_id)  # noqa: E731 - a deleted mode is named by its id
    return {
        "days": days,
        "revision": revision,
        "transitions": [
            {"from": named(a), "to": named(b), "count": n, "branches": branches[a, b]}
            for (a, b), n in _most_first(pairs, named)
        ],
        "refusals": [{"from": named(a), "to": named(b), "count": n} for (a, b), n in _most_first(refusals, named)],
        "declined": [{"from": named(a), "to": named(b), "count": n} for (a, b), n in _most_first(declined, named)],
        "byDay": [
            {"date": day.isoformat(), "count": per_day[day], "declined": declined_per_day[day]}
            for day in (first_day + timedelta(days=n) for n in range(days))
        ],
    }


def _per_pair(changes, *also):
    """The changes counted per pair of modes (and per the fields in also): n, and b of them branched."""
    grouped = changes.values(*also, "from_mode_id", "to_mode_id")
    return grouped.annotate(n=Count("id"), b=Count("id", filter=Q(branch=True)))


def _most_first(counts: Counter, named) -> list:
    """The pairs, most taken first, then by their keys: a stable order for equal counts."""
    return sorted(counts.items(), key=lambda item: (-item[1], named(item[0][0]), named(item[0][1])))


def roll_up(*, now: datetime) -> datetime:
    """Sums every complete hour not summed yet into TransitionHour; returns where the sums end."""
    target = (now - ROLLUP_MARGIN).replace(minute=0, second=0, microsecond=0)
    state, _ = TransitionRollup.objects.get_or_create(pk=1)
    while state.through is None or state.through < target:
        # A chunk per transaction: each statement stays short (DATABASE_STATEMENT_TIMEOUT_MS), and a long backlog
        # (the first request after a deployment) keeps what it summed even if a later chunk fails. Locked, so
        # that two requests do not sum the same hours: the second waits, then finds them summed.
        with transaction.atomic():
            state = TransitionRollup.objects.select_for_update().get(pk=1)
            start = state.through or _first_hour(oldest=target - timedelta(days=MAX_DAYS + 1)) or target
            end = max(start, min(start + ROLLUP_CHUNK, target))  # never back: another request may have gone further
            if start < end:
                _sum_hours(start, end)
            state.through = end
            state.save(update_fields=["through"])
    return state.through


def _sum_hours(start: datetime, end: datetime) -> None:
    """The audit rows from start to end (whole hours), summed per hour, pair and revision into TransitionHour."""
    changes = ModeChange.objects.filter(changed_at__gte=start, changed_at__lt=end)
    TransitionHour.objects.bulk_create(
        TransitionHour(
            hour=row["hour"], from_mode_id=row["from_mode_id"], to_mode_id=row["to_mode_id"],
            catalog_revision=row["catalog_revision"], count=row["n"], branches=row["b"],
        )
        for row in _per_pair(changes.annotate(hour=TruncHour("changed_at", tzinfo=UTC)), "hour", "catalog_revision")
    )


def _first_hour(*, oldest: datetime) -> datetime | None:
    """The hour of the oldest audit row still worth summing (none older than a period can reach back)."""
    changes = ModeChange.objects.filter(changed_at__gte=oldest).order_by("changed_at")
    first = changes.values_list("changed_at", flat=True).first()
    return first and first.replace(minute=0, second=0, microsecond=0)
