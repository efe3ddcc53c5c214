"""
An evaluation: a scorer's outcome for every case of a revision's catalog, measured (accuracy, precision and recall per
mode, the confusion matrix, the failures and TUL-007 §4.3 violations) and stored with the revision and the scorer's
name. Its answer also says what the revision moves against the published one, by the same scorer.
"""

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from ..catalog import Catalog, catalog_at_revision
from ..models import ROUTING_STAY, CatalogHead, RoutingCase, RoutingEvaluation
from .cases import Case, catalog_cases, cases_digest


Progress = Callable[[int, int], None]  # cases scored, cases in all


@dataclass(frozen=True)
class Outcome:
    """What a scorer made of one case."""

    predicted: str | None  # the key of the mode proposed, ROUTING_STAY, or None when the scorer got no answer
    error: str | None = None  # why there is no answer (a timeout, a rate limit, a refused key)
    called: str | None = None  # the mode an agent_change_mode call asked for: a switch nobody confirmed

    def passes(self, case: Case) -> bool:
        return self.predicted == case.expected and self.called is None


class Scorer(Protocol):
    name: str

    def outcomes(self, catalog: Catalog, cases: list[Case]) -> Iterator[Outcome]:
        """One outcome per case, in order, as each is known."""


def evaluate_revision(*, number: int, scorer: Scorer, by=None, progress: Progress = lambda done, total: None):
    """Score revision number's catalog on the cases (progress(done, total) after each) and store the evaluation."""
    catalog = catalog_at_revision(number)
    stored = list(RoutingCase.objects.all())
    cases, skipped = catalog_cases(catalog, stored)
    outcomes = []
    for outcome in scorer.outcomes(catalog, cases):
        outcomes.append(outcome)
        progress(len(outcomes), len(cases))
    labels = [*(mode.key for mode in catalog.modes), ROUTING_STAY]
    result = {**measure(cases, outcomes, labels=labels), "skipped": skipped}
    rows = [[*case.identity, outcome.predicted, outcome.passes(case)] for case, outcome in zip(cases, outcomes)]
    return RoutingEvaluation.objects.create(
        revision_id=catalog.revision, scorer=scorer.name, created_by=by, result=result, outcomes=rows,
        cases_digest=cases_digest(stored),
    )


def measure(cases: list[Case], outcomes: list[Outcome], *, labels: list[str]) -> dict:
    """accuracy, cases, passed, per_mode, confusion, failures, violations, errors; labels: the modes' keys and stay."""
    passed = sum(outcome.passes(case) for case, outcome in zip(cases, outcomes))
    answered = [(case, outcome) for case, outcome in zip(cases, outcomes) if outcome.predicted is not None]
    pairs = Counter((case.expected, outcome.predicted) for case, outcome in answered)
    expected = Counter(case.expected for case in cases)
    predicted = Counter(outcome.predicted for _, outcome in answered)
    confusion = {}
    for (want, got), count in pairs.items():
        confusion.setdefault(want, {})[got] = count
    return {
        "accuracy": round(passed / len(cases), 4) if cases else None,
        "cases": len(cases),
        "passed": passed,
        "labels": labels,  # the order of the matrix's rows and columns
        "per_mode": {
            label: {"precision": _ratio(pairs[label, label], predicted[label]),
                    "recall": _ratio(pairs[label, label], expected[label])}
            for label in labels
        },
        "confusion": confusion,
        "failures": [
            {**case.shown(outcome.predicted), **({"error": outcome.error} if outcome.error else {})}
            for case, outcome in zip(cases, outcomes)
            if not outcome.passes(case)
        ],
        "violations": [
            {**case.shown(outcome.predicted), "called": outcome.called}
            for case, outcome in zip(cases, outcomes)
            if outcome.called is not None
        ],
        "errors": sum(outcome.error is not None for outcome in outcomes),
    }


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def passed_on_common_cases(before: RoutingEvaluation, after: RoutingEvaluation) -> tuple[int, int, int] | None:
    """(the cases before routed right, those after did, the cases both scored), None if they scored none alike: a
    drop is judged on the same cases, not on cases added or deleted since; in counts, which a subtraction of two
    rounded accuracies would not keep exact."""
    old = {tuple(row[:3]): row[4] for row in before.outcomes}
    common = [(old[tuple(row[:3])], row[4]) for row in after.outcomes if tuple(row[:3]) in old]
    if not common:
        return None
    return sum(was for was, _ in common), sum(now for _, now in common), len(common)


def latest_evaluation(*, number: int, scorer: str) -> RoutingEvaluation | None:
    return RoutingEvaluation.objects.filter(revision_id=number, scorer=scorer).select_related("created_by").first()


def evaluation_payload(evaluation: RoutingEvaluation) -> dict:
    """The evaluation as the API, the command and the releases page show it, with its moves against the published."""
    published = CatalogHead.objects.values_list("published", flat=True).get(pk=1)
    baseline = None
    if published != evaluation.revision_id:
        baseline = latest_evaluation(number=published, scorer=evaluation.scorer)
    return {
        "revision": evaluation.revision_id,
        "scorer": evaluation.scorer,
        "created_at": evaluation.created_at,
        "created_by": evaluation.created_by.get_username() if evaluation.created_by else None,
        **evaluation.result,
        "changes": changes(baseline, evaluation) if baseline else None,
    }


def changes(before: RoutingEvaluation, after: RoutingEvaluation) -> dict:
    """What after predicts otherwise than before for the cases both scored: "moves 3 cases from a to b"."""
    old = {tuple(row[:3]): row[3] for row in before.outcomes}
    moved = Counter(
        (old[tuple(row[:3])], row[3]) for row in after.outcomes if tuple(row[:3]) in old and old[tuple(row[:3])] != row[3]
    )
    moves = [{"was": was, "now": now, "cases": count} for (was, now), count in moved.most_common()]
    return {
        "against": before.revision_id,
        "accuracy": before.result["accuracy"],
        "moves": moves,
        "summary": [
            f"This edit moves {move['cases']} case{'s' if move['cases'] != 1 else ''} from {move['was'] or 'no answer'} "
            f"to {move['now'] or 'no answer'}." for move in moves
        ],
    }
