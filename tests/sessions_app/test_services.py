"""
sessions_app.services and selectors: creating sessions and changing their mode, with its audit trail.

A mode change takes one of two paths. On PostgreSQL a switch is one statement that checks the owner, locks, moves
and audits (MOVE_SESSION_SQL); a branch, and every change on SQLite, is a transaction of two statements. Under
SQLite nothing covers the one-statement path: `make test` runs both databases, and each case's id names the path
it covers on the database it runs on.
"""

import functools
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.db.transaction import TransactionManagementError
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from modes.catalog import UnknownModeError, get_mode
from modes.models import AgentMode
from sessions_app.models import AgentSession, ModeChange
from sessions_app.selectors import InvalidSessionId, get_owned_session, mode_changes_of, sessions_of
from sessions_app.services import create_session, set_session_mode

from ..expected import DDR_ID, GENERAL_ID, WORKFLOW_ID
from modes.catalog import published_catalog


SWITCH_PATH = "one-statement" if connection.vendor == "postgresql" else "two-statement-transaction"
SWITCH_AND_BRANCH = pytest.mark.parametrize(
    "branch",
    [pytest.param(False, id=f"switch-{SWITCH_PATH}"), pytest.param(True, id="branch-two-statement-transaction")],
)


# --- create_session ---------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_create_session_defaults_to_the_default_mode(alice, alice_org):
    session = create_session(catalog=published_catalog(), owner=alice, org=alice_org)
    assert session.mode_id == GENERAL_ID
    assert (session.owner, session.org, session.title, session.parent) == (alice, alice_org, "", None)


@pytest.mark.django_db
def test_create_session_follows_the_current_default_mode(alice, alice_org):
    from modes.services import set_default_mode

    set_default_mode(mode=AgentMode.objects.get(key="workflow_authoring"))
    assert create_session(catalog=published_catalog(), owner=alice, org=alice_org).mode_id == WORKFLOW_ID


@pytest.mark.django_db
def test_create_session_in_a_named_mode_stores_that_modes_id(alice, alice_org):
    session = create_session(catalog=published_catalog(), owner=alice, org=alice_org, mode_key="ddr_authoring", title="Specs")
    session.refresh_from_db()
    assert session.mode_id == DDR_ID
    assert session.title == "Specs"


@pytest.mark.django_db
def test_create_session_with_an_unknown_mode_creates_nothing(alice, alice_org):
    with pytest.raises(UnknownModeError, match="'poetry'"):
        create_session(catalog=published_catalog(), owner=alice, org=alice_org, mode_key="poetry")
    assert AgentSession.objects.count() == 0


# --- set_session_mode -------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_set_session_mode_moves_the_session_and_records_who_when_from_what_to_what_and_why(alice, alice_session):
    change = set_session_mode(catalog=published_catalog(), 
        session_id=alice_session.pk,
        mode=get_mode("ddr_authoring"),
        reason="Writing a spec.",
        user=alice,
    )

    alice_session.refresh_from_db()
    assert alice_session.mode_id == DDR_ID
    stored = ModeChange.objects.get()
    assert stored == change
    assert [getattr(change, f.attname) for f in ModeChange._meta.concrete_fields] == [
        getattr(stored, f.attname) for f in ModeChange._meta.concrete_fields
    ]
    assert (change.from_mode_id, change.to_mode_id, change.reason, change.branch) == (
        GENERAL_ID,
        DDR_ID,
        "Writing a spec.",
        False,
    )
    assert change.changed_by == alice
    assert change.org == alice.membership.organization
    # Dated when the session moved: its updated_at is the change's time.
    assert change.changed_at == alice_session.updated_at
    assert change.branch_session_id is None


def path_taken(queries) -> str:
    """
    The path a mode change took, told from the first words of its statements (a savepoint's name left out, and
    the catalog's version row, read when no request has read it).
    """
    heads = [" ".join(query["sql"].split()[:3]).split(' "')[0] for query in queries]
    heads = [head for head in heads if head != "SELECT version, revision,"]
    if heads == ["WITH moved AS"]:
        return "one-statement"
    if heads[-3:] == ["INSERT INTO sessions_app_modechange", "UPDATE sessions_app_agentsession SET", "RELEASE SAVEPOINT"]:
        return "two-statement-transaction"  # the audit row, then the move, then the end of the (nested) transaction
    return f"neither: {heads}"


@pytest.mark.django_db
@SWITCH_AND_BRANCH
def test_each_change_takes_the_path_its_id_names(alice, alice_session, branch):
    mode = get_mode("ddr_authoring")
    with CaptureQueriesContext(connection) as queries:
        set_session_mode(catalog=published_catalog(), session_id=alice_session.pk, mode=mode, reason="r", user=alice, branch=branch)
    assert path_taken(queries) == ("two-statement-transaction" if branch else SWITCH_PATH)


@pytest.mark.django_db
def test_set_session_mode_accepts_the_session_id_as_text(alice, alice_session):
    set_session_mode(catalog=published_catalog(), 
        session_id=str(alice_session.pk), mode=get_mode("ddr_authoring"), reason="r", user=alice
    )
    assert AgentSession.objects.get(pk=alice_session.pk).mode_id == DDR_ID


@pytest.mark.django_db
@SWITCH_AND_BRANCH
def test_set_session_mode_moves_updated_at_to_the_time_of_the_change(alice, alice_session, branch):
    # A day back, so that a coarse clock cannot make "moved on" look like "unchanged".
    a_day_ago = timezone.now() - timedelta(days=1)
    AgentSession.objects.filter(pk=alice_session.pk).update(updated_at=a_day_ago)
    change = set_session_mode(catalog=published_catalog(), 
        session_id=alice_session.pk, mode=get_mode("ddr_authoring"), reason="r", user=alice, branch=branch
    )
    after = AgentSession.objects.get(pk=alice_session.pk).updated_at
    assert after == change.changed_at
    assert after > a_day_ago


@pytest.mark.django_db
def test_set_session_mode_with_branch_creates_a_child_session(alice, alice_session):
    change = set_session_mode(catalog=published_catalog(), 
        session_id=alice_session.pk, mode=get_mode("workflow_authoring"), reason="r", user=alice, branch=True
    )
    child = change.branch_session
    assert child is not None and child.pk != alice_session.pk
    assert (child.parent_id, child.owner, child.org, child.mode_id, child.title) == (
        alice_session.pk,
        alice,
        alice_session.org,
        WORKFLOW_ID,
        alice_session.title,
    )
    assert list(alice_session.branches.all()) == [child]
    assert AgentSession.objects.get(pk=alice_session.pk).mode_id == WORKFLOW_ID
    assert child.mode_changes.count() == 0


@pytest.mark.django_db
@SWITCH_AND_BRANCH
@pytest.mark.parametrize("which", ["another-users", "nonexistent"])
def test_set_session_mode_on_a_session_the_user_does_not_own_raises_and_changes_nothing(
    alice, bob_session, which, branch
):
    session_id = bob_session.pk if which == "another-users" else uuid.uuid4()
    with pytest.raises(AgentSession.DoesNotExist, match=f"^No session {session_id} of this user\\.$"):
        set_session_mode(catalog=published_catalog(), 
            session_id=session_id, mode=get_mode("ddr_authoring"), reason="r", user=alice, branch=branch
        )
    assert AgentSession.objects.get(pk=bob_session.pk).mode_id == GENERAL_ID
    assert ModeChange.objects.count() == 0
    assert AgentSession.objects.count() == 1


@pytest.mark.django_db
@SWITCH_AND_BRANCH
def test_the_audit_row_records_the_callers_organization_not_the_sessions(alice, bob, branch):
    # A session that still names another organization (alice's, before she moved to globex, say).
    acme = alice.membership.organization
    session = create_session(catalog=published_catalog(), owner=alice, org=acme)
    alice.membership.organization = bob.membership.organization
    alice.membership.save()
    change = set_session_mode(catalog=published_catalog(), 
        session_id=session.pk, mode=get_mode("ddr_authoring"), reason="r", user=alice, branch=branch
    )
    assert ModeChange.objects.get(pk=change.pk).org.slug == "globex"
    assert change.org_id == ModeChange.objects.get(pk=change.pk).org_id


@pytest.mark.django_db
@SWITCH_AND_BRANCH
def test_the_audit_row_of_a_caller_outside_any_organization_names_none(alice, alice_session, branch):
    alice.membership.delete()
    change = set_session_mode(catalog=published_catalog(), 
        session_id=alice_session.pk, mode=get_mode("ddr_authoring"), reason="r", user=alice, branch=branch
    )
    assert (change.org_id, ModeChange.objects.get(pk=change.pk).org_id) == (None, None)


@pytest.mark.django_db
@SWITCH_AND_BRANCH
def test_set_session_mode_refuses_a_session_id_that_is_not_a_uuid(alice, alice_session, branch):
    with pytest.raises(InvalidSessionId, match=r"^'12; DROP TABLE x' is not a session id; session ids are UUIDs\.$"):
        set_session_mode(catalog=published_catalog(), 
            session_id="12; DROP TABLE x",
            mode=get_mode("ddr_authoring"),
            reason="r",
            user=alice,
            branch=branch,
        )
    assert ModeChange.objects.count() == 0


@pytest.mark.django_db
def test_a_mode_used_by_a_session_or_an_audit_row_cannot_be_deleted(alice, alice_session, custom_mode):
    from django.db.models import ProtectedError

    set_session_mode(catalog=published_catalog(), session_id=alice_session.pk, mode=custom_mode, reason="r", user=alice)
    with pytest.raises(ProtectedError) as refused:
        custom_mode.delete()
    # Both what uses it are named: the session in it, and the audit row that moved the session to it.
    assert refused.value.args[0] == (
        "Cannot delete some instances of model 'AgentMode' because they are referenced through protected foreign "
        "keys: 'AgentSession.mode', 'ModeChange.to_mode'."
    )


# --- selectors --------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_get_owned_session_answers_anothers_session_exactly_like_a_missing_one(alice, alice_session, bob_session):
    assert get_owned_session(session_id=str(alice_session.pk), user=alice) == alice_session
    with pytest.raises(AgentSession.DoesNotExist, match=f"^No session {bob_session.pk} of this user\\.$"):
        get_owned_session(session_id=str(bob_session.pk), user=alice)
    missing = uuid.uuid4()
    with pytest.raises(AgentSession.DoesNotExist, match=f"^No session {missing} of this user\\.$"):
        get_owned_session(session_id=str(missing), user=alice)
    with pytest.raises(InvalidSessionId, match=r"^'12; DROP TABLE x' is not a session id; session ids are UUIDs\.$"):
        get_owned_session(session_id="12; DROP TABLE x", user=alice)


@pytest.mark.usefixtures("modes_restored_after_flush")
class TestLockingOutsideATransaction:
    # Transactional: outside the usual test transaction, in autocommit, where a lock would end with its query.
    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_locking_a_session_outside_a_transaction_is_refused_as_select_for_update_is(self, django_user_model):
        user = django_user_model.objects.create_user(username="locker")
        session = create_session(catalog=published_catalog(), owner=user, org=None)
        with pytest.raises(TransactionManagementError, match=r"^get_owned_session\(for_update=True\) needs a transaction\.$"):
            get_owned_session(session_id=session.pk, user=user, for_update=True)
        assert get_owned_session(session_id=session.pk, user=user).pk == session.pk


@pytest.mark.django_db
def test_sessions_of_returns_only_the_users_sessions(alice, alice_session, bob_session):
    assert list(sessions_of(user=alice)) == [alice_session]


@pytest.mark.django_db
def test_mode_changes_of_lists_a_sessions_changes_oldest_first(alice, alice_session):
    for key in ("ddr_authoring", "workflow_authoring", "general"):
        set_session_mode(catalog=published_catalog(), session_id=alice_session.pk, mode=get_mode(key), reason=key, user=alice)
    assert [change.reason for change in mode_changes_of(session=alice_session)] == [
        "ddr_authoring",
        "workflow_authoring",
        "general",
    ]


# --- Concurrency (PostgreSQL row locks) -------------------------------------------------------------------

THREADS = 8
CHANGES_PER_THREAD = 25


@pytest.mark.postgres(reason="needs PostgreSQL row locks")
@pytest.mark.usefixtures("modes_restored_after_flush")
class TestConcurrentModeChanges:
    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_concurrent_changes_never_lose_an_audit_row_nor_break_the_chain(self, django_user_model, at_once):
        user = django_user_model.objects.create_user(username="racer")
        session = create_session(catalog=published_catalog(), owner=user, org=None)
        modes = list(AgentMode.objects.filter(key__in=["general", "ddr_authoring", "workflow_authoring"]))
        assert len(modes) == 3

        def worker(index):
            for step in range(CHANGES_PER_THREAD):
                set_session_mode(catalog=published_catalog(), 
                    session_id=session.pk,
                    mode=modes[(index + step) % len(modes)],
                    reason=f"thread {index} step {step}",
                    user=user,
                    branch=step % 5 == 0,  # both paths: a branch is the transaction, a switch one statement
                )

        at_once(*(functools.partial(worker, index) for index in range(THREADS)))
        rows = list(ModeChange.objects.filter(session=session).order_by("id").values_list("from_mode_id", "to_mode_id"))
        assert len(rows) == THREADS * CHANGES_PER_THREAD == 200
        assert rows[0][0] == GENERAL_ID
        for previous, current in zip(rows, rows[1:]):
            assert current[0] == previous[1], "an audit row's from_mode is not the previous row's to_mode"
        assert AgentSession.objects.get(pk=session.pk).mode_id == rows[-1][1]
        times = list(ModeChange.objects.filter(session=session).order_by("id").values_list("changed_at", flat=True))
        assert times == sorted(times), "an audit row is dated before the change it waited behind"
        assert AgentSession.objects.get(pk=session.pk).updated_at >= times[-1]
        assert len({reason for reason in ModeChange.objects.values_list("reason", flat=True)}) == 200
