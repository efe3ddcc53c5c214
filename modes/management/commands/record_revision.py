"""Records a change made past the ORM (QuerySet.update(), raw SQL) as a catalog revision, so that it can be served."""

from django.core.management.base import BaseCommand

from modes.revisions import record_pending_revision


class Command(BaseCommand):
    help = "Record changes made to the catalog past the ORM as one new revision (published at once with no review)."

    def handle(self, *args, **options):
        state = record_pending_revision()
        self.stdout.write(f"Catalog revision: {state.revision if state else 'none'}.")
