"""Publishes a catalog revision to agents, or rolls back to one published before, as a named staff user."""

from modes.management.revisions import ReleaseCommand
from modes.releases import publish_revision


class Command(ReleaseCommand):
    help = "Publish catalog revision N to agents (or roll back to it) as --user, checked against their permissions."
    action = staticmethod(publish_revision)
    done = "Revision {revision.number} is published."
