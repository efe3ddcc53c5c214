"""Records a change made past the services (QuerySet.update(), raw SQL) as a catalog revision, through its rules."""

from aptix_site.commands import ServiceCommand
from modes.releases import catalog_head
from modes.services import record_unrecorded_changes


class Command(ServiceCommand):
    help = (
        "Record changes made to the catalog past the services as one new revision, released as any change is "
        "(published at once, or pending under CATALOG_APPROVALS), or say which rule of the catalog they break."
    )

    def handle(self, *args, **options):
        revision = record_unrecorded_changes()
        if revision is None:
            self.stdout.write("Nothing to record.")
        elif revision.published_at is None:  # under review: a change made past the services is reviewed as any other
            self.stdout.write(
                f"Recorded catalog revision {revision.number}, pending: agents are served revision "
                f"{catalog_head().published} until it is approved and published."
            )
        else:
            self.stdout.write(f"Recorded catalog revision {revision.number}.")
