"""
An existing install's API tokens (DRF's authtoken_token, one per user, the key in clear) become API tokens
named "migrated", stored as a digest only: they keep working with the key their clients hold. The old table is
then dropped, with the migration records of DRF's authtoken app, so that no key stays in clear.

Going back leaves no tokens: the keys are gone, and the old table is not rebuilt (DRF's authtoken app is no
longer installed). A new install has no old table, and this does nothing.
"""

from django.db import migrations
from knox.crypto import hash_token
from knox.settings import CONSTANTS

OLD_TABLE = "authtoken_token"


def digests_from_clear_keys(apps, schema_editor):
    connection = schema_editor.connection
    if OLD_TABLE not in connection.introspection.table_names():
        return
    new_table = apps.get_model("accounts", "ApiToken")._meta.db_table
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {quote('key')}, {quote('user_id')}, {quote('created')} FROM {quote(OLD_TABLE)}")
        # Each created time goes back as the database gave it: the ORM would stamp a new one (auto_now_add).
        cursor.executemany(
            f"INSERT INTO {quote(new_table)} (digest, token_key, user_id, created, name) VALUES (%s, %s, %s, %s, %s)",
            [
                (hash_token(key), key[: CONSTANTS.TOKEN_KEY_LENGTH], user_id, created, "migrated")
                for key, user_id, created in cursor.fetchall()
            ],
        )
    schema_editor.execute(f"DROP TABLE {quote(OLD_TABLE)}")
    # Its migrations are no longer applied: were the app installed again, they would build the table anew.
    schema_editor.execute("DELETE FROM django_migrations WHERE app = %s", ["authtoken"])


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0002_api_tokens"),
    ]

    operations = [
        migrations.RunPython(digests_from_clear_keys, migrations.RunPython.noop, elidable=False),
    ]
