"""Creates the local development login (admin) and its API token, and prints them. DEBUG only."""

import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from rest_framework.authtoken.models import Token

USERNAME = "admin"


class Command(BaseCommand):
    help = "Create a local admin login and API token on first run, and print them (DEBUG only)."

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
        token, _ = Token.objects.get_or_create(user=user)
        self.stdout.write(f"API token: {token.key}  (Authorization: Token {token.key})")
