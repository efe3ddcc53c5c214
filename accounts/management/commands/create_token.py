"""Creates a named API token for an existing user and prints its key, the one time it can be seen."""

from argparse import ArgumentTypeError

from django.conf import settings
from django.core.management.base import CommandError

from accounts.management.users import user_named
from accounts.models import ApiToken
from accounts.tokens import create_token
from aptix_site.commands import ServiceCommand
from aptix_site.text import whole_number

NAME_LENGTH = ApiToken._meta.get_field("name").max_length


class Command(ServiceCommand):
    help = (
        "Create an API token for an existing user and print its key (alone on stdout; it cannot be shown again). "
        "The user's other tokens keep working."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", required=True, help="What the token is for, such as the agent back-end using it.")
        parser.add_argument(
            "--expires-days", type=_days, metavar="DAYS",
            help=f"Days until the token expires, 1 to {settings.API_TOKEN_MAX_TTL_DAYS} (default: API_TOKEN_TTL_DAYS, "
            "unset meaning never).",
        )

    def handle(self, *args, username, name, expires_days, **options):
        if not name.strip() or len(name) > NAME_LENGTH:
            raise CommandError(f"--name must be 1 to {NAME_LENGTH} characters; it is {name!r}.")
        user = user_named(username=username)
        token, key = create_token(user=user, name=name, expires_in_days=expires_days)
        expiry = f"expires {token.expiry:%Y-%m-%d %H:%M} UTC" if token.expiry else "never expires"
        owner = user.get_username()
        self.stderr.write(f"Created token {name!r} ({token.token_key}…) of {owner!r}; it {expiry}. Its key:")
        self.stdout.write(key)


def _days(text: str) -> int:
    if (days := whole_number(text, at_most=settings.API_TOKEN_MAX_TTL_DAYS)) is None:
        raise ArgumentTypeError(f"must be a whole number from 1 to {settings.API_TOKEN_MAX_TTL_DAYS}; it is {text!r}.")
    return days
