"""Judges the guard of the rollout in flight now, and prints how its cohort fares against the control's."""

from django.core.management.base import BaseCommand

from modes.models import CatalogRollout
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
        if not rollout.guard_metric:
            lines.append("It has no guard.")
        elif judge_guard(rollout):
            rollout.refresh_from_db()
            lines.append(f"Aborted: {rollout.end_reason}")
        else:
            lines.append("Its guard holds.")
        self.stdout.write("\n".join(lines))
