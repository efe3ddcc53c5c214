"""Creates the account an agent back-end calls the API with (a user and its token, named "agent") and prints its key."""

from accounts.services import create_agent_user
from aptix_site.commands import ServiceCommand


class Command(ServiceCommand):
    help = (
        "Create a user for an agent back-end, without a password, and its API token; print the token. "
        "For an existing user, use create_token."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--organization", metavar="SLUG", help="Slug of the organization the user belongs to.")

    def handle(self, *args, username, organization, **options):
        user, key = create_agent_user(username=username, organization_slug=organization)
        where = f" in organization {organization!r}" if organization else ""
        self.stderr.write(
            f"Created user {user.get_username()!r}{where}; it has no password and calls the API with this token:"
        )
        self.stdout.write(key)
