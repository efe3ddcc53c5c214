"""
sessions_app.services and selectors: creating sessions and changing their mode, with its audit trail.

A mode change is one transaction of the ORM, the same on PostgreSQL and SQLite: the session's row locked (with, in
the same query, whether the target mode's row is there and the caller's organization), the mode graph judged once on
the mode the locked row has, a branch session if asked for, the audit row, then the move. A switch the graph refuses
writes its refusal record and nothing else.
"""

import functools
import re
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.services import OrganizationRemoved
from modes.catalog import Release, UnknownModeError, get_mode, published_catalog, published_release
from modes.graph import ModeSwitchRefused
from modes.models import AgentMode
from sessions_app.models import AgentSession, ModeChange, ModeChangeRefusal
from sessions_app.selectors import InvalidSessionId, get_owned_session, mode_changes_of, sessions_of
from sessions_app.services import ask_mode_change, create_session, set_session_mode
from sessions_app.tools import answer_mode_change, change_mode

from ..conftest import CommitOnceWaitedOn
from ..expected import DDR_ID, GENERAL_ID, WORKFLOW_ID


SWITCH_AND_BRANCH = pytest.mark.parametrize("branch", [False, True], ids=["switch", "branch"])


# --- create_session ---------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_create_session_defaults_to_the_default_mode(alice, alice_org):
    session = create_session(release=published_release(), owner=alice, org=alice_org)
    assert session.mode_id == GENERAL_ID
    assert (session.owner, session.org, session.title, session.parent) == (alice, alice_org, "", None)


@pytest.mark.django_db
def test_create_session_follows_the_current_default_mode(alice, alice_org):
    from modes.services import set_default_mode

    set_default_mode(mode=AgentMode.objects.get(key="workflow_authoring"))
    assert create_session(release=published_release(), owner=alice, org=alice_org).mode_id == WORKFLOW_ID


@pytest.mark.django_db
def test_create_session_in_a_named_mode_stores_that_modes_id(alice, alice_org):
    session = create_session(
        release=published_release(), owner=alice, org=alice_org, mode_key="ddr_authoring", title="Specs"
    )
    session.refresh_from_db()
    assert session.mode_id == DDR_ID
    assert session.title == "Specs"


@pytest.mark.django_db
def test_create_session_with_an_unknown_mode_creates_nothing(alice, alice_org):
    with pytest.raises(UnknownModeError, match="'poetry'"):
        create_session(release=published_release(), owner=alice, org=alice_org, mode_key="poetry")
    assert AgentSession.objects.count() == 0


# --- set_session_mode -------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_set_session_mode_moves_the_session_and_records_who_when_from_what_to_what_and_why(alice, alice_session):
    change = set_session_mode(
        catalog=published_catalog(),
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


def statements(queries) -> list[str]:
    """Each statement's first words (a savepoint's name left out), and FOR UPDATE where a SELECT locks its rows."""
    heads = []
    for query in queries:
        sql = query["sql"]
        head = " ".join(sql.split()[:3]).split(' "')[0]
        if head.startswith(("INSERT INTO", "UPDATE")):
            head = " ".join(sql.split()[:3]).replace('"', "")
        heads.append(f"{head} ... FOR UPDATE" if sql.endswith("FOR UPDATE") else head)
    return heads


# SELECT ... FOR UPDATE on PostgreSQL; SQLite has no row locks (a writer there holds the whole database).
LOCK = "SELECT ... FOR UPDATE" if connection.features.has_select_for_update else "SELECT"
# PostgreSQL then checks the writes' foreign keys as they are made (a deletion of the target under way is waited for).
IMMEDIATE = ["SET CONSTRAINTS ALL"] if connection.vendor == "postgresql" else []


@pytest.mark.django_db
@SWITCH_AND_BRANCH
def test_each_change_is_one_orm_transaction_that_locks_then_audits_then_moves(alice, alice_session, branch):
    catalog = published_catalog()
    mode = catalog.mode("ddr_authoring")
    with CaptureQueriesContext(connection) as queries:
        set_session_mode(catalog=catalog, session_id=alice_session.pk, mode=mode, reason="r", user=alice, branch=branch)
    # One transaction (a savepoint inside the test's): the locked read, the branch session if any, the audit row,
    # the move. The locked read also says whether the target's row is there and the caller's organization.
    assert statements(queries) == [
        "SAVEPOINT",
        LOCK,
        *IMMEDIATE,
        *(["INSERT INTO sessions_app_agentsession"] if branch else []),
        "INSERT INTO sessions_app_modechange",
        "UPDATE sessions_app_agentsession SET",
        "RELEASE SAVEPOINT",
    ]
    locked = queries[1]["sql"]
    assert "EXISTS" in locked and "accounts_membership" in locked


@pytest.mark.django_db
@SWITCH_AND_BRANCH
def test_a_refused_switch_writes_its_refusal_and_nothing_else(alice, graph, branch, django_capture_on_commit_callbacks):
    catalog = published_catalog()
    session = create_session(release=Release(catalog), owner=alice, org=None, mode_key="review")
    before = AgentSession.objects.get(pk=session.pk)
    with (
        CaptureQueriesContext(connection) as queries, django_capture_on_commit_callbacks() as after_commit,
        pytest.raises(ModeSwitchRefused),
    ):
        set_session_mode(
            catalog=catalog, session_id=session.pk, mode=catalog.mode("deploy"), reason="r", user=alice, branch=branch
        )
    # The locked read, judged and let go; then the refusal's record, after the transaction, so that it stays; and,
    # once that is committed, a rollout's guard judged if it is due.
    assert statements(queries) == [
        "SAVEPOINT", LOCK, "RELEASE SAVEPOINT", "INSERT INTO sessions_app_modechangerefusal"
    ]
    assert [callback.__name__ for callback in after_commit] == ["judge_guard_if_due"]
    assert list(ModeChangeRefusal.objects.values_list("session_id", "from_mode_id", "to_mode_id")) == [
        (session.pk, graph["review"].pk, graph["deploy"].pk)
    ]
    after = AgentSession.objects.get(pk=session.pk)
    assert (after.mode_id, after.updated_at) == (before.mode_id, before.updated_at)
    assert (ModeChange.objects.count(), AgentSession.objects.count()) == (0, 1)


@pytest.mark.django_db
def test_set_session_mode_accepts_the_session_id_as_text(alice, alice_session):
    set_session_mode(
        catalog=published_catalog(),
        session_id=str(alice_session.pk), mode=get_mode("ddr_authoring"), reason="r", user=alice
    )
    assert AgentSession.objects.get(pk=alice_session.pk).mode_id == DDR_ID


@pytest.mark.django_db
@SWITCH_AND_BRANCH
def test_set_session_mode_moves_updated_at_to_the_time_of_the_change(alice, alice_session, branch):
    # A day back, so that a coarse clock cannot make "moved on" look like "unchanged".
    a_day_ago = timezone.now() - timedelta(days=1)
    AgentSession.objects.filter(pk=alice_session.pk).update(updated_at=a_day_ago)
    change = set_session_mode(
        catalog=published_catalog(),
        session_id=alice_session.pk, mode=get_mode("ddr_authoring"), reason="r", user=alice, branch=branch
    )
    after = AgentSession.objects.get(pk=alice_session.pk).updated_at
    assert after == change.changed_at
    assert after > a_day_ago


@pytest.mark.django_db
def test_set_session_mode_with_branch_creates_a_child_session(alice, alice_session):
    change = set_session_mode(
        catalog=published_catalog(),
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


def not_found(call) -> AgentSession.DoesNotExist:
    """The AgentSession.DoesNotExist that call() raises."""
    with pytest.raises(AgentSession.DoesNotExist) as raised:
        call()
    return raised.value


@pytest.mark.django_db
@SWITCH_AND_BRANCH
@pytest.mark.parametrize("which", ["another-users", "nonexistent"])
def test_set_session_mode_on_a_session_the_user_does_not_own_raises_and_changes_nothing(
    alice, bob_session, which, branch
):
    def change(session_id):
        return lambda: set_session_mode(
            catalog=published_catalog(),
            session_id=session_id, mode=get_mode("ddr_authoring"), reason="r", user=alice, branch=branch
        )

    session_id = bob_session.pk if which == "another-users" else uuid.uuid4()
    error = not_found(change(session_id))
    # Another user's session is refused exactly as a missing one is: nothing in the error tells them apart.
    assert (type(error), error.args) == (type(missing := not_found(change(uuid.uuid4()))), missing.args)
    assert AgentSession.objects.get(pk=bob_session.pk).mode_id == GENERAL_ID
    assert (ModeChange.objects.count(), ModeChangeRefusal.objects.count()) == (0, 0)
    assert AgentSession.objects.count() == 1


@pytest.mark.django_db
@SWITCH_AND_BRANCH
def test_the_audit_row_records_the_callers_organization_not_the_sessions(alice, bob, branch):
    # A session that still names another organization (alice's, before she moved to globex, say).
    acme = alice.membership.organization
    session = create_session(release=published_release(), owner=alice, org=acme)
    alice.membership.organization = bob.membership.organization
    alice.membership.save()
    change = set_session_mode(
        catalog=published_catalog(),
        session_id=session.pk, mode=get_mode("ddr_authoring"), reason="r", user=alice, branch=branch
    )
    assert ModeChange.objects.get(pk=change.pk).org.slug == "globex"
    assert change.org_id == ModeChange.objects.get(pk=change.pk).org_id


@pytest.mark.django_db
@SWITCH_AND_BRANCH
def test_the_audit_row_of_a_caller_outside_any_organization_names_none(alice, alice_session, branch):
    alice.membership.delete()
    change = set_session_mode(
        catalog=published_catalog(),
        session_id=alice_session.pk, mode=get_mode("ddr_authoring"), reason="r", user=alice, branch=branch
    )
    assert (change.org_id, ModeChange.objects.get(pk=change.pk).org_id) == (None, None)


@pytest.mark.django_db
@SWITCH_AND_BRANCH
def test_set_session_mode_refuses_a_session_id_that_is_not_a_uuid(alice, alice_session, branch):
    with pytest.raises(InvalidSessionId, match=r"^'12; DROP TABLE x' is not a session id; session ids are UUIDs\.$"):
        set_session_mode(
            catalog=published_catalog(),
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
    anothers = not_found(lambda: get_owned_session(session_id=str(bob_session.pk), user=alice))
    missing = not_found(lambda: get_owned_session(session_id=str(uuid.uuid4()), user=alice))
    assert (type(anothers), anothers.args) == (type(missing), missing.args)
    with pytest.raises(InvalidSessionId, match=r"^'12; DROP TABLE x' is not a session id; session ids are UUIDs\.$"):
        get_owned_session(session_id="12; DROP TABLE x", user=alice)


@pytest.mark.django_db
def test_get_owned_session_reads_the_session_alone_or_with_its_mode_and_organization(alice, alice_session):
    # A plain ORM read: the session's row, its mode_id as stored (never replaced from a catalog); with_mode joins
    # the mode and organization rows in the same query, for the answers that show them.
    with CaptureQueriesContext(connection) as queries:
        plain = get_owned_session(session_id=alice_session.pk, user=alice)
        joined = get_owned_session(session_id=alice_session.pk, user=alice, with_mode=True)
        assert (joined.mode.key, joined.org.slug) == ("general", "acme")
    assert len(queries) == 2
    assert "JOIN" not in queries[0]["sql"] and queries[1]["sql"].count("JOIN") == 2
    assert plain.mode_id == GENERAL_ID and "mode" not in plain._state.fields_cache


@pytest.mark.usefixtures("modes_restored_after_flush")
class TestOutsideATransaction:
    # Transactional: in autocommit, where a row lock taken outside a transaction would end with its query (and
    # Django refuses select_for_update there): the change must open its own transaction around the lock.
    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_a_change_made_in_autocommit_locks_and_writes_in_a_transaction_of_its_own(self, django_user_model):
        user = django_user_model.objects.create_user(username="locker")
        catalog = published_catalog()
        session = create_session(release=Release(catalog), owner=user, org=None)
        assert connection.get_autocommit()
        change = set_session_mode(
            catalog=catalog, session_id=session.pk, mode=catalog.mode("ddr_authoring"), reason="r", user=user
        )
        assert connection.get_autocommit()
        assert AgentSession.objects.get(pk=session.pk).mode_id == DDR_ID
        assert list(ModeChange.objects.values_list("pk", "from_mode_id", "to_mode_id")) == [
            (change.pk, GENERAL_ID, DDR_ID)
        ]


@pytest.mark.django_db
def test_sessions_of_returns_only_the_users_sessions(alice, alice_session, bob_session):
    assert list(sessions_of(user=alice)) == [alice_session]


@pytest.mark.django_db
def test_a_page_of_sessions_reads_of_each_mode_only_its_key_and_of_each_organization_only_its_slug(
    alice, alice_session, alice_client
):
    # A page of 50 sessions would otherwise load and parse 50 whole modes, their JSON lists included.
    with CaptureQueriesContext(connection) as queries:
        assert alice_client.get("/api/sessions/").json()["results"][0]["mode"] == "general"
    page = next(query["sql"] for query in queries if "sessions_app_agentsession" in query["sql"])
    read = re.findall(r'"(modes_agentmode|accounts_organization)"\."(\w+)"', page.split(" FROM ")[0])
    assert sorted(read) == [("accounts_organization", "id"), ("accounts_organization", "slug"),
                            ("modes_agentmode", "id"), ("modes_agentmode", "key")]


@pytest.mark.django_db
def test_mode_changes_of_lists_a_sessions_changes_oldest_first(alice, alice_session):
    for key in ("ddr_authoring", "workflow_authoring", "general"):
        set_session_mode(
            catalog=published_catalog(), session_id=alice_session.pk, mode=get_mode(key), reason=key, user=alice
        )
    assert [change.reason for change in mode_changes_of(session=alice_session)] == [
        "ddr_authoring",
        "workflow_authoring",
        "general",
    ]


# --- Concurrency (PostgreSQL row locks) -------------------------------------------------------------------

THREADS = 8
CHANGES_PER_THREAD = 25
AT_ONCE = 40  # concurrent changes of one session, each in a thread of its own
REFUSED_AT_ONCE = 8  # switches the graph refuses, racing with them


def assert_the_audit_chain_is_unbroken(session, *, starting_in) -> list[ModeChange]:
    """The session's audit rows, in order, each from the mode the previous one moved it to, in time order, and the
    session in the mode of the last one, dated no earlier; returns them."""
    rows = list(ModeChange.objects.filter(session=session).order_by("id"))
    assert rows and rows[0].from_mode_id == starting_in
    for previous, current in zip(rows, rows[1:]):
        assert current.from_mode_id == previous.to_mode_id, "an audit row's from_mode is not the previous row's to_mode"
    times = [row.changed_at for row in rows]
    assert times == sorted(times), "an audit row is dated before the change it waited behind"
    stored = AgentSession.objects.get(pk=session.pk)
    assert (stored.mode_id, stored.updated_at) == (rows[-1].to_mode_id, times[-1])
    return rows


@pytest.mark.postgres(reason="needs PostgreSQL row locks")
@pytest.mark.usefixtures("modes_restored_after_flush")
class TestConcurrentModeChanges:
    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_concurrent_changes_never_lose_an_audit_row_nor_break_the_chain(self, django_user_model, at_once):
        user = django_user_model.objects.create_user(username="racer")
        session = create_session(release=published_release(), owner=user, org=None)
        modes = list(AgentMode.objects.filter(key__in=["general", "ddr_authoring", "workflow_authoring"]))
        assert len(modes) == 3

        def worker(index):
            for step in range(CHANGES_PER_THREAD):
                set_session_mode(
                    catalog=published_catalog(),
                    session_id=session.pk,
                    mode=modes[(index + step) % len(modes)],
                    reason=f"thread {index} step {step}",
                    user=user,
                    branch=step % 5 == 0,  # switches and branches queue on the same lock
                )

        at_once(*(functools.partial(worker, index) for index in range(THREADS)))
        rows = assert_the_audit_chain_is_unbroken(session, starting_in=GENERAL_ID)
        assert len(rows) == THREADS * CHANGES_PER_THREAD == 200
        assert len({row.reason for row in rows}) == 200
        assert AgentSession.objects.filter(parent=session).count() == THREADS * len(range(0, CHANGES_PER_THREAD, 5))

    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_forty_changes_of_one_session_at_once_are_each_acknowledged_and_audited_and_refusals_write_only_theirs(
        self, django_user_model, new_mode, at_once
    ):
        user = django_user_model.objects.create_user(username="racer")
        locked_out = new_mode("locked_out", llm_can_enter=False)  # no switch may enter it, from any mode
        catalog = published_catalog()
        session = create_session(release=Release(catalog), owner=user, org=None)
        targets = [catalog.mode(key) for key in ("general", "ddr_authoring", "workflow_authoring")]
        acknowledged, refused = {}, []

        def change(index):
            acknowledged[index] = set_session_mode(
                catalog=published_catalog(), session_id=session.pk, mode=targets[index % len(targets)],
                reason=f"change {index}", user=user, branch=index % 4 == 0,
            )

        def refused_change(index):
            with pytest.raises(ModeSwitchRefused) as refusal:
                set_session_mode(
                    catalog=published_catalog(), session_id=session.pk, mode=catalog.mode("locked_out"),
                    reason=f"refused {index}", user=user, branch=index % 2 == 0,
                )
            refused.append(refusal.value)

        at_once(
            *(functools.partial(change, index) for index in range(AT_ONCE)),
            *(functools.partial(refused_change, index) for index in range(REFUSED_AT_ONCE)),
        )
        # Every change was acknowledged with its own audit row, and the audit holds those and no other.
        assert sorted(acknowledged) == list(range(AT_ONCE))
        rows = assert_the_audit_chain_is_unbroken(session, starting_in=GENERAL_ID)
        assert {row.pk: row.reason for row in rows} == {
            change.pk: f"change {index}" for index, change in acknowledged.items()
        }
        assert {row.pk: row.to_mode_id for row in rows} == {
            change.pk: targets[index % len(targets)].pk for index, change in acknowledged.items()
        }
        branches = {change.branch_session_id for change in acknowledged.values() if change.branch}
        assert set(AgentSession.objects.filter(parent=session).values_list("pk", flat=True)) == branches
        assert len(branches) == len(range(0, AT_ONCE, 4))
        # Each refusal wrote its record and nothing else: no audit row, no branch, the session never in the mode.
        assert len(refused) == REFUSED_AT_ONCE
        refusals = list(ModeChangeRefusal.objects.values_list("session_id", "from_mode_id", "to_mode_id"))
        assert len(refusals) == REFUSED_AT_ONCE
        assert {(session_id, to_mode_id) for session_id, _, to_mode_id in refusals} == {(session.pk, locked_out.pk)}
        assert {from_mode_id for _, from_mode_id, _ in refusals} <= {mode.pk for mode in targets}
        assert not ModeChange.objects.filter(to_mode=locked_out).exists()
        assert not AgentSession.objects.filter(mode=locked_out).exists()
        assert AgentSession.objects.count() == 1 + len(branches)


# --- A target deleted while a session moves into it (PostgreSQL: another transaction deletes it meanwhile) -----


@pytest.mark.postgres(reason="another connection's uncommitted deletion, and PostgreSQL's row locks")
@pytest.mark.usefixtures("modes_restored_after_flush")
class TestAModeDeletedMeanwhile:
    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    @pytest.mark.parametrize("write", ["move", "create"])
    def test_a_session_is_refused_as_being_removed_and_nothing_changes(self, new_mode, alice, second_connection, write):
        new_mode("scratch")
        catalog = published_catalog()
        session = create_session(release=Release(catalog), owner=alice, org=None)
        other = second_connection()
        other.execute("DELETE FROM modes_agentmode WHERE key = 'scratch'")  # as a rollback that drops it, uncommitted
        committer = CommitOnceWaitedOn(other)
        with pytest.raises(UnknownModeError, match="'scratch' is being removed from the catalog"):
            if write == "move":
                set_session_mode(
                    catalog=catalog, session_id=session.pk, mode=catalog.mode("scratch"), reason="r", user=alice
                )
            else:
                create_session(release=Release(catalog), owner=alice, org=None, mode_key="scratch")
        committer.join()
        assert committer.waited  # the race was run: the write met the deletion uncommitted
        assert list(AgentSession.objects.values_list("mode_id", flat=True)) == [GENERAL_ID]
        assert not ModeChange.objects.exists()

    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_a_users_switch_answered_meanwhile_is_the_tools_refusal(self, new_mode, alice, second_connection):
        # The change runs inside the answer's transaction (the answer is taken once): its commit comes later.
        new_mode("scratch")
        catalog = published_catalog()
        session = create_session(release=Release(catalog), owner=alice, org=None)
        question = ask_mode_change(
            catalog=catalog, session_id=session.pk, mode=catalog.mode("scratch"), reason="r", user=alice, branch=False,
            channel="rest",
        )
        other = second_connection()
        other.execute("DELETE FROM modes_agentmode WHERE key = 'scratch'")
        committer = CommitOnceWaitedOn(other)
        result = answer_mode_change(
            catalog=catalog, session_id=session.pk, confirmation_id=question.pk, user=alice, choice="switch",
            channel="rest",
        )
        committer.join()
        assert committer.waited
        assert not result.successful and "'scratch' is being removed from the catalog" in result.error_message
        assert list(AgentSession.objects.values_list("mode_id", flat=True)) == [GENERAL_ID]
        assert not ModeChange.objects.exists()


# --- The user's organization deleted while a session is written (PostgreSQL: another transaction deletes it) -------


def organization_deleted_meanwhile(other, organization):
    """organization deleted as the admin deletes it (its row locked first), not committed."""
    other.execute("SELECT 1 FROM accounts_organization WHERE id = %s FOR UPDATE", [organization.pk])
    other.execute("DELETE FROM accounts_membership WHERE organization_id = %s", [organization.pk])
    other.execute("UPDATE sessions_app_agentsession SET org_id = NULL WHERE org_id = %s", [organization.pk])
    other.execute("DELETE FROM accounts_organization WHERE id = %s", [organization.pk])


@pytest.mark.postgres(reason="another connection's uncommitted deletion, and PostgreSQL's row locks")
@pytest.mark.usefixtures("modes_restored_after_flush")
class TestAnOrganizationDeletedMeanwhile:
    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    @pytest.mark.parametrize("write", ["mode change", "new session"])
    def test_a_write_in_it_waits_for_the_deletion_and_is_refused_in_words_and_nothing_changes(
        self, alice, alice_org, alice_session, alice_client, second_connection, write
    ):
        catalog = published_catalog()
        other = second_connection()
        organization_deleted_meanwhile(other, alice_org)
        committer = CommitOnceWaitedOn(other)
        if write == "mode change":  # as agent_change_mode and an answer to its question make it
            result = change_mode(
                catalog=catalog, session_id=alice_session.pk, mode=catalog.mode("ddr_authoring"), reason="r",
                user=alice, branch=False, confirmed_by="model",
            )
            refusal = (result.successful, result.server_fault, result.error_message)
        else:
            response = alice_client.post("/api/sessions/", {}, format="json")
            refusal = (response.status_code, response.json()["detail"])
        committer.join()
        assert committer.waited  # the race was run: the write met the deletion uncommitted
        assert refusal[:-1] == ((False, False) if write == "mode change" else (409,))
        assert refusal[-1] == OrganizationRemoved.message
        assert list(AgentSession.objects.values_list("mode_id", "org_id")) == [(GENERAL_ID, None)]
        assert not ModeChange.objects.exists()
