"""
On PostgreSQL the server binds query parameters and psycopg prepares what a connection runs often
(DATABASE_PREPARED_STATEMENTS, on unless set to 0): the queries every request makes are parsed and planned once
per connection, not once per request.
"""

import pytest
from django.db import connection

from aptix_site.fixed_sql import singleton_sql
from modes.models import CatalogVersion

pytestmark = pytest.mark.django_db

STATE_SQL = singleton_sql(CatalogVersion)


def prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [statement for (statement,) in cursor.fetchall()]


@pytest.mark.postgres(reason="prepared statements are PostgreSQL's")
def test_the_token_lookup_and_the_catalog_version_read_are_prepared_after_a_few_requests(alice_client):
    for _ in range(6):
        assert alice_client.get("/api/modes/").status_code == 200
    statements = prepared_statements()
    assert any('JOIN "accounts_apitoken"' in statement for statement in statements), statements
    assert STATE_SQL in statements, statements

