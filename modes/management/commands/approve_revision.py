"""Approves a pending catalog revision as a named staff user (modes.approve_revision; not one of its authors)."""

from modes.management.revisions import ReleaseCommand
from modes.releases import approve_revision


class Command(ReleaseCommand):
    help = "Approve the pending catalog revision N as --user, checked against that user's permissions."

    def act(self, user, *, number, **options):
        return f"Revision {approve_revision(number=number, user=user).number} approved."
