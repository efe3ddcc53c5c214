"""Fills the reference database: the modes of a portable mode file, a user with a token, and a session of theirs."""

import json
from pathlib import Path

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand
from rest_framework.authtoken.models import Token

from benchmarks.reference.models import Mode, Session

FIELDS = {field.name for field in Mode._meta.fields}


class Command(BaseCommand):
    help = "Load the modes of a JSON mode file, create a user, token and session; print the token and session id."

    def add_arguments(self, parser):
        parser.add_argument("modes_file", help="A JSON file as `manage.py export_modes --format json` writes it.")

    def handle(self, *args, modes_file, **options):
        entries = json.loads(Path(modes_file).read_text(encoding="utf-8"))["modes"]
        Mode.objects.bulk_create(Mode(**{name: value for name, value in entry.items() if name in FIELDS}) for entry in entries)
        user = User.objects.create_user("bench")
        session = Session.objects.create(owner=user, mode=Mode.objects.get(is_default=True))
        self.stdout.write(json.dumps({"token": Token.objects.create(user=user).key, "session": str(session.pk)}))
