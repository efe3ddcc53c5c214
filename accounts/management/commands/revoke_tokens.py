"""Revokes a user's API tokens: all of them, or those of one name."""

from django.core.management.base import BaseCommand, CommandError

from accounts.management.users import user_named
from accounts.models import ApiToken
from accounts.tokens import revoke_tokens


class Command(BaseCommand):
    help = "Revoke a user's API tokens (all of them, or with --name only those of that name) and say how many."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", help="Revoke only the tokens of this name.")

    def handle(self, *args, username, name, **options):
        user = user_named(username=username)
        revoked = revoke_tokens(user=user, name=name)
        if name is not None and revoked == 0:
            names = sorted(set(ApiToken.objects.filter(user=user).values_list("name", flat=True)))
            held = ", ".join(repr(held_name) for held_name in names) or "none"
            raise CommandError(f"{user.get_username()!r} has no token named {name!r} (its tokens: {held}).")
        which = f" named {name!r}" if name is not None else ""
        self.stdout.write(f"Revoked {revoked} token{'' if revoked == 1 else 's'}{which} of {user.get_username()!r}.")
