"""
Judges the guard of the rollout in flight now, and prints how its cohort fares against the control's, and what is true
once judged: a rollout promoted or aborted meanwhile is reported so, whatever its guard said.
"""

from django.core.management.base import BaseCommand

from modes.models import CatalogRollout
from modes.releases import rollout_settled
from sessions_app.rollout_cohorts import METRICS, cohorts, judge_guard


class Command(BaseCommand):
    help = (
        "Judge the guard of the catalog rollout in flight (aborting it if it trips) and print each cohort: sessions, "
        "mode changes, refusals by the mode graph and declined proposals, each also per session."
    )

    def handle(self, *args, **options):
        rollout = CatalogRollout.objects.filter(state=CatalogRollout.State.IN_FLIGHT).first()
        if rollout is None:
            self.stdout.write("No rollout is in flight.")
            return
        lines = [f"Rollout of revision {rollout.revision_id} against revision {rollout.control_id}:"]
        for cohort in cohorts(rollout):
            lines.append(
                f"  revision {cohort.revision}: {cohort.sessions} sessions, "
                + ", ".join(f"{getattr(cohort, name)} {name} ({cohort.per_session(name):.2f} per session)"
                            for name in METRICS)
            )
        tripped = judge_guard(rollout)
        settled = rollout_settled(rollout_id=rollout.pk)
        if tripped:
            lines.append(f"Aborted: {settled.end_reason}")
        elif settled.state != CatalogRollout.State.IN_FLIGHT:
            lines.append(ended_meanwhile(settled))
        elif not rollout.guard_metric:
            lines.append("It has no guard.")
        else:
            lines.append("Its guard holds.")
        self.stdout.write("\n".join(lines))


def ended_meanwhile(rollout: CatalogRollout) -> str:
    """The last line for a rollout that someone (or the guard on another request) ended while it was judged."""
    by = f" by {rollout.ended_by}" if rollout.ended_by else ""
    if rollout.state == CatalogRollout.State.PROMOTED:
        return f"It was promoted meanwhile{by}: every session is served revision {rollout.revision_id}."
    return f"It was aborted meanwhile{by}" + (f": {rollout.end_reason}" if rollout.end_reason else ".")
