"""
The mode change's hand-written SQL (aptix_site.fixed_sql, run by sessions_app.services, kept for the instructions
it saves: benchmarks/RESULTS.md) held to the ORM: the same change made by set_session_mode and by the ORM (select_for_update, create,
update in one atomic) writes the same audit row and leaves the session the same, field by field, whichever
statement wrote it (PostgreSQL's one statement, the transaction elsewhere, a branch on both). A field added to
either model is compared too, and one the SQL does not write stops the import (tested below).
"""

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction

from accounts.models import organization_of
from modes.catalog import current_catalog
from sessions_app import services
from sessions_app.models import AgentSession, ModeChange
from sessions_app.services import create_session, set_session_mode

pytestmark = pytest.mark.django_db

# What differs between two changes of two sessions: their own ids, and the moments they were made.
OWN = {"id", "session", "branch_session", "parent", "changed_at", "created_at", "updated_at"}


def orm_change(*, session_id, mode, reason, user, branch) -> ModeChange:
    """The mode change as the ORM writes it: the reference."""
    catalog = current_catalog()
    with transaction.atomic():
        session = AgentSession.objects.select_for_update().get(pk=session_id, owner=user)
        branch_session = None
        if branch:
            branch_session = AgentSession.objects.create(
                owner=user, org_id=session.org_id, mode=mode, parent=session, title=session.title,
                catalog_revision=catalog.revision,
            )
        change = ModeChange.objects.create(
            session=session, from_mode_id=session.mode_id, to_mode=mode, reason=reason, branch=branch,
            branch_session=branch_session, changed_by=user, org=organization_of(user),
            catalog_revision=catalog.revision,
        )
        AgentSession.objects.filter(pk=session.pk).update(mode=mode, updated_at=change.changed_at)
    return change


def fields(row) -> dict:
    """Every concrete field of row, but those that differ between two changes by nature (OWN)."""
    row.refresh_from_db()
    return {field.attname: getattr(row, field.attname) for field in row._meta.concrete_fields if field.name not in OWN}


@pytest.mark.parametrize("branch", [False, True], ids=["switch", "branch"])
def test_the_sql_writes_the_audit_row_and_moves_the_session_as_the_orm_does(alice, branch):
    by_sql, by_orm = (
        create_session(owner=alice, org=organization_of(alice), title="The same session") for _ in range(2)
    )
    target = current_catalog().mode("ddr_authoring")
    written = {
        "sql": set_session_mode(session_id=by_sql.pk, mode=target, reason="Agreed.", user=alice, branch=branch),
        "orm": orm_change(session_id=by_orm.pk, mode=target, reason="Agreed.", user=alice, branch=branch),
    }
    assert fields(written["sql"]) == fields(written["orm"])
    assert fields(by_sql) == fields(by_orm)
    for change, session in ((written["sql"], by_sql), (written["orm"], by_orm)):
        assert change.session_id == session.pk and session.updated_at == change.changed_at
        if branch:
            assert fields(change.branch_session) == fields(written["orm"].branch_session)
            assert change.branch_session.parent_id == session.pk


def test_a_model_field_the_sql_does_not_write_stops_the_import(monkeypatch):
    statements = services.MODE_CHANGE_SQL
    values = {name: value for name, value in statements.audit_values.items() if name != "reason"}
    monkeypatch.setattr(statements, "audit_values", values)
    with pytest.raises(ImproperlyConfigured, match=r"writes no value for ModeChange fields \['reason'\]"):
        statements.audit_row_sql(source="anywhere", changed_at="now")
