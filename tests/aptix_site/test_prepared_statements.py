"""
On PostgreSQL the server binds query parameters and psycopg prepares what a connection runs often
(DATABASE_PREPARED_STATEMENTS: on, unless set to 0 or behind DATABASE_POOLER=transaction): the queries every
request makes are parsed and planned once per connection, not once per request.
"""

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db


def prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [statement for (statement,) in cursor.fetchall()]


@pytest.mark.postgres(reason="prepared statements are PostgreSQL's")
def test_the_token_lookup_and_the_catalog_head_read_are_prepared_after_a_few_requests(alice_client):
    for _ in range(6):
        assert alice_client.get("/api/modes/").status_code == 200
    statements = prepared_statements()
    assert any('FROM "accounts_apitoken" INNER JOIN' in statement for statement in statements), statements
    assert any('FROM "modes_cataloghead"' in statement for statement in statements), statements

