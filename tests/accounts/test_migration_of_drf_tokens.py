"""
Upgrading an install whose API tokens are DRF's (authtoken_token, keys in clear): `manage.py migrate` keeps
every token working with the key its client holds, stores it as a digest only, and drops the old table.
On a scratch database of the suite's kind, built as such an install was: DRF's authtoken app installed and
accounts at its first migration, with a real DRF token.
"""

import json
import subprocess
import sys

from ..servers import ROOT, run_django, run_manage, scratch_database

# The install before API tokens: DRF's authtoken app and the accounts app as they were, a DRF token made by DRF.
OLD_INSTALL = """
import json, django
from django.conf import settings
settings.INSTALLED_APPS = [*settings.INSTALLED_APPS, "rest_framework.authtoken"]
django.setup()
from django.contrib.auth.models import User
from django.core.management import call_command
call_command("migrate", "auth", verbosity=0)
call_command("migrate", "accounts", "0001", verbosity=0)
call_command("migrate", "authtoken", verbosity=0)
from rest_framework.authtoken.models import Token
token = Token.objects.create(user=User.objects.create_user("legacy"))
print(json.dumps({"key": token.key, "created": token.created.isoformat()}))
"""

AFTER = """
import json
from django.db import connection
from django.test import Client
from accounts.models import ApiToken
key = {key!r}
wrong_key = key[:-1] + ("1" if key.endswith("0") else "0")  # a key ending in 0 would be its own wrong key
client = Client(HTTP_HOST="localhost")
print(json.dumps({{
    "status": client.get("/api/modes/", HTTP_AUTHORIZATION="Token " + key).status_code,
    "wrong key": client.get("/api/modes/", HTTP_AUTHORIZATION="Token " + wrong_key).status_code,
    "mcp": client.post("/mcp/", {{}}, content_type="application/json", HTTP_AUTHORIZATION="Bearer " + key).status_code,
    "tokens": [[t.user.username, t.name, t.token_key, t.created.isoformat()] for t in ApiToken.objects.all()],
    "tables": connection.introspection.table_names(),
    "authtoken migrations": connection.cursor().execute(
        "SELECT COUNT(*) FROM django_migrations WHERE app = 'authtoken'").fetchone()[0],
    "rows": [list(map(str, row)) for row in connection.cursor().execute("SELECT * FROM accounts_apitoken").fetchall()],
}}))
"""


def test_migrate_turns_drf_tokens_into_digests_that_keep_working_and_drops_the_keys_in_clear(tmp_path):
    with scratch_database(migrated=False) as env:
        before = json.loads(
            subprocess.run(
                [sys.executable, "-c", OLD_INSTALL], cwd=ROOT, check=True, timeout=120, capture_output=True, text=True,
                env={**env, "DJANGO_SETTINGS_MODULE": "aptix_site.settings"},
            ).stdout
        )
        key = before["key"]
        assert len(key) == 40

        run_manage(env, "migrate", "--noinput", "-v0", timeout=180)
        after = json.loads(run_django(env, AFTER.format(key=key)))

    assert after["status"] == 200
    assert after["wrong key"] == 401
    assert after["mcp"] != 401  # the MCP endpoint accepts it as a bearer token too
    assert after["tokens"] == [["legacy", "migrated", key[:15], before["created"]]]
    assert "authtoken_token" not in after["tables"]
    assert "knox_authtoken" not in after["tables"]  # knox's own token table, which ours replaces, is not built
    assert after["authtoken migrations"] == 0
    assert not any(key in value for row in after["rows"] for value in row)
