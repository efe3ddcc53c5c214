"""Creates the local development login (admin) and a fresh API token, and prints them. DEBUG only."""

import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from accounts.tokens import replace_token
from aptix_site.commands import ServiceCommand

USERNAME = "admin"


class Command(ServiceCommand):
    help = (
        "Create a local admin login on first run, and at each run a new API token named 'local' (the previous "
        "one is revoked: only a digest of a key is stored, so a key cannot be shown twice); print them (DEBUG only)."
    )

    def handle(self, *args, **options):
        if not settings.DEBUG:
            raise CommandError("create_local_admin is for local development; it refuses to run with DEBUG off.")
        User = get_user_model()
        user = User.objects.filter(username=USERNAME).first()
        if user is None:
            password = secrets.token_urlsafe(12)
            user = User.objects.create_superuser(USERNAME, f"{USERNAME}@localhost", password)
            self.stdout.write(f"Local admin login: {USERNAME} / {password}  (shown once; /admin/)")
        else:
            self.stdout.write(f"Local admin login: {USERNAME} (exists; password unchanged)")
        _, key = replace_token(user=user, name="local")
        self.stdout.write(f"API token: {key}  (Authorization: Token {key}; a new one at each start)")
