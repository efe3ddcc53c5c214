"""
The owned-session lookup is fixed SQL (sessions_app.selectors, kept for its measured gain): it must read exactly
what the ORM reads, every field of the model included, and refuse exactly what the ORM would not find.
"""

import pytest
from django.db import transaction

from sessions_app.models import AgentSession
from sessions_app.selectors import get_owned_session

pytestmark = pytest.mark.django_db


def all_fields(session):
    return {field.attname: getattr(session, field.attname) for field in AgentSession._meta.concrete_fields}


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
