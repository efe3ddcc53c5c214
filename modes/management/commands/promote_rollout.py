"""Promotes the rollout in flight: its revision is published to every session."""

from modes.management.revisions import ReleaseCommand, revision_argument
from modes.releases import promote_rollout


class Command(ReleaseCommand):
    help = "Publish the revision being rolled out to every session, as --user, checked against their permissions."
    with_revision = False

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument(
            "--revision", type=revision_argument,
            help="The revision being rolled out, as you saw it: refused if another one is.",
        )

    def act(self, user, *, revision, **options):
        return f"Revision {promote_rollout(user=user, number=revision).number} is published to every session."
