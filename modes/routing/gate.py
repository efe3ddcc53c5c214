"""
The release gate: a revision whose routing evaluation misses CATALOG_EVAL_MIN_ACCURACY, or drops more than
CATALOG_EVAL_MAX_DROP below the published revision's (by the same scorer, CATALOG_EVAL_SCORER), is not approved or
published, unless the user holds modes.publish_failing_revision. No gate is set by default. With CATALOG_APPROVALS = 0
a revision is published as it is recorded, so the offline evaluation runs then, and a change the gate refuses is not
saved. Rollbacks to a revision once published are not gated.
"""

from collections import Counter

from django.conf import settings

from aptix_site.service_errors import Conflict, InvalidInput

from ..models import RoutingCase, RoutingEvaluation
from ..permissions import may
from .cases import cases_digest
from .evaluation import evaluate_revision, passed_on_common_cases, latest_evaluation
from .offline import OfflineScorer

SHOWN_FAILURES = 5  # the refusal names this many failing cases; the evaluation lists them all


class RoutingGateRefused(Conflict):
    """Approving or publishing a revision whose routing evaluation misses the gate (409)."""


class RoutingGateRefusedChange(InvalidInput):
    """A change that would be published at once (CATALOG_APPROVALS = 0) and misses the gate (400)."""


def gate_is_set() -> bool:
    return settings.CATALOG_EVAL_MIN_ACCURACY is not None or settings.CATALOG_EVAL_MAX_DROP is not None


def check_gate(*, number: int, published: int, user) -> None:
    """RoutingGateRefused if revision number may not be approved or published by user for its routing."""
    if gate_is_set() and not may(user, "publish_failing_revision"):
        if refusal := gate_refusal(number=number, published=published):
            raise RoutingGateRefused(refusal)


def check_gate_on_record(*, number: int, published: int, user) -> None:
    """For revision number, about to be published as it is recorded: evaluated offline, and RoutingGateRefusedChange
    if it misses the gate. The published revision is evaluated too if it has not been, to judge the drop against.
    With no gate set, nothing is read: every save under CATALOG_APPROVALS = 0 comes through here."""
    if not gate_is_set():
        return
    scorer = OfflineScorer()
    evaluate_revision(number=number, scorer=scorer, by=user)
    if settings.CATALOG_EVAL_MAX_DROP is not None and not latest_evaluation(number=published, scorer=scorer.name):
        evaluate_revision(number=published, scorer=scorer)
    if not may(user, "publish_failing_revision"):
        if refusal := gate_refusal(number=number, published=published, subject="This change"):
            raise RoutingGateRefusedChange(refusal)


def gate_refusal(*, number: int, published: int, subject: str = "") -> str | None:
    """Why revision number (subject: "Revision <number>") misses the gate, naming its failing cases; None if not."""
    subject, scorer = subject or f"Revision {number}", settings.CATALOG_EVAL_SCORER
    evaluation = latest_evaluation(number=number, scorer=scorer)
    if evaluation is None:
        return f"Revision {number} has no routing evaluation by the {scorer} scorer, which the release gate needs: {_run(number)}"
    current = cases_digest(RoutingCase.objects.all())
    if evaluation.cases_digest != current:
        return f"The routing cases changed since revision {number} was last evaluated by the {scorer} scorer: {_run(number)}"
    # Judged on the counts: the stored accuracy is rounded to 4 places, which can lift it to the minimum.
    passed, cases, minimum = evaluation.result["passed"], evaluation.result["cases"], settings.CATALOG_EVAL_MIN_ACCURACY
    if not cases:
        return f"Revision {number} has no routing case to be judged on: add cases, then {_run(number)}"
    if minimum is not None and passed / cases < minimum:
        more = next(right for right in range(passed, cases + 1) if right / cases >= minimum) - passed
        return (
            f"{subject} routes {passed:,} of the {cases:,} cases right ({passed / cases:.1%}), below the {minimum:.1%} "
            f"of CATALOG_EVAL_MIN_ACCURACY: {_cases(more)} more must pass. {_failing(evaluation)}"
        )
    most = settings.CATALOG_EVAL_MAX_DROP
    if most is None or number == published:
        return None
    baseline = latest_evaluation(number=published, scorer=scorer)
    if baseline is None:
        return (
            f"The published revision {published} has no routing evaluation by the {scorer} scorer to compare "
            f"revision {number} with: {_run(published)}"
        )
    if (common := passed_on_common_cases(baseline, evaluation)) is None:
        return None  # no case in common: no drop to judge
    was, now, cases = common
    if (was - now) / cases > most:  # one division of counts: a drop of exactly the allowed share passes
        return (
            f"{subject} routes {now:,} of the {cases:,} cases it shares with the published revision {published} "
            f"right, where that one routed {was:,}: a drop of {(was - now) / cases:.1%}, more than the {most:.1%} "
            f"CATALOG_EVAL_MAX_DROP allows. {_failing(evaluation)}"
        )
    return None


def _cases(count: int) -> str:
    return f"{count:,} case{'s' if count != 1 else ''}"


def _run(number: int) -> str:
    """How to evaluate revision number by the gate's scorer."""
    if settings.CATALOG_EVAL_SCORER == "llm":
        return f"run one (manage.py eval_routing --revision {number} --scorer llm)."
    return f"run an evaluation first (POST /api/catalog/revisions/{number}/evals/ or manage.py eval_routing --revision {number})."


def _failing(evaluation: RoutingEvaluation) -> str:
    """The failing cases, the most common confusion's first: what the edit most likely broke."""
    pairs = Counter((failure["expected"], failure["predicted"]) for failure in evaluation.result["failures"])
    failures = sorted(evaluation.result["failures"], key=lambda failure: -pairs[failure["expected"], failure["predicted"]])
    named = "; ".join(
        f"{failure['utterance']!r} from {failure['current_mode']}: expected {failure['expected']}, "
        f"predicted {failure['predicted'] or 'nothing (' + failure.get('error', '') + ')'}"
        for failure in failures[:SHOWN_FAILURES]
    )
    more = f" and {len(failures) - SHOWN_FAILURES} more" if len(failures) > SHOWN_FAILURES else ""
    return f"Failing cases: {named}{more}."
