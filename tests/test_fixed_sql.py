"""
The lookups every request makes are fixed SQL (aptix_site.fixed_sql), kept for their measured gain over the ORM
(benchmarks/RESULTS.md): the token with its user (accounts.tokens), the catalog version row (modes.catalog), the
owned session (sessions_app.selectors). Each must read exactly what the ORM reads, every field of its models included, and find
nothing where the ORM finds nothing.
"""

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from accounts.models import ApiToken
from accounts.tokens import LAST_USED_PRECISION, create_token, token_of_key
from modes.catalog import CatalogState, read_state
from modes.models import CatalogVersion
from sessions_app.models import AgentSession
from sessions_app.selectors import get_owned_session

pytestmark = pytest.mark.django_db


def all_fields(row):
    return {field.attname: getattr(row, field.attname) for field in type(row)._meta.concrete_fields}


def test_the_owned_session_sql_reads_every_field_as_the_orm_does(alice, alice_session):
    child = AgentSession.objects.create(
        owner=alice, org=alice_session.org, mode_id=alice_session.mode_id, parent=alice_session, title="A branch"
    )
    for session in (alice_session, child):
        by_sql = get_owned_session(session_id=str(session.pk), user=alice)
        by_orm = AgentSession.objects.get(pk=session.pk, owner=alice)
        assert all_fields(by_sql) == all_fields(by_orm)


def test_the_owned_session_sql_with_its_lock_reads_what_the_orm_reads(alice, alice_session):
    with transaction.atomic():
        locked = get_owned_session(session_id=alice_session.pk, user=alice, for_update=True)
        assert all_fields(locked) == all_fields(AgentSession.objects.select_for_update().get(pk=alice_session.pk))


def test_the_owned_session_sql_finds_no_session_of_another_user(bob, alice_session):
    assert not AgentSession.objects.filter(pk=alice_session.pk, owner=bob).exists()
    with pytest.raises(AgentSession.DoesNotExist):
        get_owned_session(session_id=alice_session.pk, user=bob)


@pytest.mark.parametrize("last_used", [None, timedelta(seconds=5), LAST_USED_PRECISION * 2], ids=["never", "now", "long ago"])
def test_the_token_sql_reads_the_user_and_the_last_use_as_the_orm_does(alice, last_used):
    token, key = create_token(user=alice, name="agent")
    if last_used is not None:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now() - last_used)
    by_orm = ApiToken.objects.select_related("user").get(pk=token.pk)

    by_sql = token_of_key(key=key)

    assert (by_sql.pk, by_sql.digest, by_sql.user_id) == (by_orm.pk, by_orm.digest, by_orm.user_id)
    assert all_fields(by_sql.user) == all_fields(by_orm.user)
    assert by_sql.last_used_is_stale == (
        by_orm.last_used_at is None or by_orm.last_used_at < timezone.now() - LAST_USED_PRECISION
    )


def test_the_token_sql_finds_no_expired_token_as_the_orm_finds_none(alice):
    token, key = create_token(user=alice, name="agent", expires_in_days=1)
    ApiToken.objects.filter(pk=token.pk).update(expiry=timezone.now() - timedelta(seconds=1))
    assert not ApiToken.objects.filter(pk=token.pk, expiry__gt=timezone.now()).exists()
    assert token_of_key(key=key) is None


def test_the_catalog_version_sql_reads_the_row_as_the_orm_does(custom_mode):
    names = [field.name for field in CatalogVersion._meta.concrete_fields if not field.primary_key]
    assert read_state() == CatalogState(**CatalogVersion.objects.values(*names).get(pk=1))
