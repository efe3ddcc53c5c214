"""Sums the audit trail's complete hours for the transition counts now, rather than in the first request after."""

from django.core.management.base import BaseCommand
from django.utils import timezone

from sessions_app.transitions import roll_up


class Command(BaseCommand):
    help = (
        "Sum every complete hour of mode changes not summed yet for GET /api/catalog/transitions/ and the mode graph: "
        "after a restore or an upgrade on a long audit trail, so that no request has to (it takes a while at "
        "millions of rows)."
    )

    def handle(self, *args, **options):
        through = roll_up(now=timezone.now())
        self.stdout.write(f"Mode changes are summed up to {through:%Y-%m-%d %H:%M} UTC.")
