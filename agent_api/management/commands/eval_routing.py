"""Scores a catalog revision on the routing cases, stores the evaluation with it, and prints it as a table."""

import sys

from django.core.management.base import CommandError
from tqdm import tqdm

from agent_api.routing_llm import LlmScorer
from aptix_site.commands import ServiceCommand
from modes.management.revisions import revision_argument
from modes.models import CatalogHead
from modes.releases import get_revision
from modes.routing.evaluation import evaluate_revision, evaluation_payload
from modes.routing.offline import OfflineScorer
from modes.routing.serializers import RoutingEvaluationResponse

SCORERS = {"offline": OfflineScorer, "llm": LlmScorer}


class Command(ServiceCommand):
    help = (
        "Score catalog revision N (the newest if omitted) on the routing cases with the offline scorer (seconds, no "
        "network) or the llm one (ROUTING_EVAL_BASE_URL, ROUTING_EVAL_MODEL: minutes), store the evaluation with the "
        "revision and print it."
    )

    def add_arguments(self, parser):
        parser.add_argument("--revision", type=revision_argument, help="The catalog revision; the newest if omitted.")
        parser.add_argument("--scorer", choices=list(SCORERS), default="offline")

    def handle(self, *args, revision, scorer, **options):
        number = revision or CatalogHead.objects.values_list("latest", flat=True).get(pk=1)
        if not number:
            raise CommandError("No catalog revision is recorded yet: run migrate first.")
        get_revision(number)  # refused before any bar is drawn: an unknown revision, as a missing endpoint below
        chosen = SCORERS[scorer]()
        with tqdm(desc=f"Scoring revision {number}", unit="case", file=sys.stderr, leave=False) as bar:
            def progress(done, total):
                bar.total = total
                bar.update(1)

            evaluation = evaluate_revision(number=number, scorer=chosen, progress=progress)
        self.stdout.write(table(RoutingEvaluationResponse(evaluation_payload(evaluation)).data))


def table(evaluation: dict) -> str:
    """The evaluation for a terminal: its score, per mode precision and recall with the confusion row, the failures."""
    lines = [
        f"Revision {evaluation['revision']}, {evaluation['scorer']} scorer: {evaluation['passed']} of "
        f"{evaluation['cases']} cases routed right ({_share(evaluation['accuracy'])}).",
        *(evaluation["changes"] or {}).get("summary", ()),
        "",
        f"{'expected':<24} {'precision':>9} {'recall':>7}  predicted",
    ]
    for label in evaluation["labels"]:
        scores, row = evaluation["perMode"][label], evaluation["confusion"].get(label, {})
        predicted = ", ".join(f"{key} {count}" for key, count in sorted(row.items(), key=lambda item: -item[1]))
        lines.append(f"{label:<24} {_share(scores['precision']):>9} {_share(scores['recall']):>7}  {predicted}")
    for title, rows in (("Violations of TUL-007 §4.3", evaluation["violations"]), ("Failures", evaluation["failures"])):
        if rows:
            lines += ["", f"{title} ({len(rows)}):"]
            lines += [
                f"- {row['utterance']!r} from {row['currentMode']}: expected {row['expected']}, "
                f"predicted {row['predicted'] or 'nothing'}"
                + (f" (called agent_change_mode with {row['called']!r})" if "called" in row else "")
                + (f" ({row['error']})" if row.get("error") else "")
                for row in rows
            ]
    if evaluation["skipped"]:
        lines += ["", f"Skipped ({len(evaluation['skipped'])}):"]
        lines += [f"- {row['utterance']!r} from {row['currentMode']}: {row['reason']}" for row in evaluation["skipped"]]
    return "\n".join(lines) + "\n"


def _share(value) -> str:
    return "-" if value is None else f"{value:.1%}"
