"""The migrations match the models."""

from io import StringIO

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def test_makemigrations_check_finds_no_missing_migration():
    out = StringIO()
    call_command("makemigrations", "--check", "--dry-run", stdout=out, stderr=StringIO())  # SystemExit(1) on changes
    assert out.getvalue() == "No changes detected\n"
