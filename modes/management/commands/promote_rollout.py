"""Promotes the rollout in flight: its revision is published to every session."""

from modes.management.revisions import ReleaseCommand
from modes.releases import promote_rollout


class Command(ReleaseCommand):
    help = "Publish the revision being rolled out to every session, as --user, checked against their permissions."
    with_revision = False

    def act(self, user, **options):
        return f"Revision {promote_rollout(user=user).number} is published to every session."
