"""Records a change made past the services (QuerySet.update(), raw SQL) as a catalog revision, through its rules."""

from aptix_site.commands import ServiceCommand
from modes.services import record_unrecorded_changes


class Command(ServiceCommand):
    help = (
        "Record changes made to the catalog past the services as one new revision (published at once with no "
        "review), or say which rule of the catalog they break."
    )

    def handle(self, *args, **options):
        revision = record_unrecorded_changes()
        self.stdout.write(f"Recorded catalog revision {revision.number}." if revision else "Nothing to record.")
