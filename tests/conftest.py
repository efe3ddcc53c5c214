"""
Shared fixtures (tests/README.md says which test goes where). The database is the real one (SQLite or
PostgreSQL), migrated, with the seed modes.
"""

import threading
import time

import pytest
from django.core.signals import request_finished
from django.db import close_old_connections, connection, connections
from random_order.config import Config as RandomOrder

from modes.catalog import published_catalog, published_release
from modes.models import AgentMode


def valid_mode(key="research", **fields):
    """An unsaved custom mode with what a valid one needs: unless given, its name and when_to_use come from its key."""
    return AgentMode(**{"key": key, "display_name": key.title(), "when_to_use": f"Use this mode for {key}.", **fields})


def through_the_services(write):
    """write() done as the admin and the commands do it: one catalog revision, published (no approvals needed)."""
    from modes.services import catalog_change

    with catalog_change(by=None):
        return write()


@pytest.fixture
def new_mode(db):
    """new_mode(key, **fields): valid_mode(key, **fields), saved through the services (one revision each)."""

    def create(key, **fields):
        mode = valid_mode(key, **fields)
        through_the_services(lambda: mode.save(force_insert=True))  # as objects.create() saves
        return mode

    return create


@pytest.fixture
def custom_mode(new_mode):
    return new_mode(
        "research",
        description="Finding and comparing sources.",
        when_to_use="Use this mode when the user wants sources found, compared or summarised.",
        associated_tool_ids=["agent_change_mode", "agent_list_modes"],
        example_utterances=["Find papers on retrieval-augmented generation."],
    )


@pytest.fixture
def unconstrained_catalog(db):
    """Lets a test write rows the catalog constraints would refuse, so the system checks can be seen to fire.

    The drops happen inside the test's transaction and are rolled back with it.
    """
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            for name in (
                "modes_agentmode_status_valid",
                "modes_agentmode_id_format",
                "modes_agentmode_key_format",
                "modes_agentmode_when_to_use_one_line",
                "modes_agentmode_entry_confirmation_valid",
            ):
                cursor.execute(f"ALTER TABLE modes_agentmode DROP CONSTRAINT {name}")
        else:
            cursor.execute("PRAGMA ignore_check_constraints = ON")
        cursor.execute("DROP INDEX modes_agentmode_single_default")
    yield
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA ignore_check_constraints = OFF")


@pytest.fixture
def recorded_past_the_rules(monkeypatch):
    """
    recorded_past_the_rules(check_id=None): the rows recorded as a revision, and published unless the policy asks for
    review, although they break a rule: as a release without that rule would have recorded them. That is the one way
    left for a revision to break a rule (recorded before the rule existed or was tightened, or restored from a backup),
    and what the checks, start-up and releases guard against. Given check_id, it first shows that record_revision
    refuses the rows, naming the rule, and records nothing. Returns the revision.
    """
    from modes.models import CatalogRevision
    from modes.rules import InvalidCatalog
    from modes.services import record_unrecorded_changes

    def record(check_id=None):
        if check_id:
            latest = CatalogRevision.objects.count()
            with pytest.raises(InvalidCatalog, match=check_id):
                record_unrecorded_changes()
            assert CatalogRevision.objects.count() == latest
        with monkeypatch.context() as without_rules:
            without_rules.setattr("modes.revisions.validate_catalog", lambda modes: None)
            revision = record_unrecorded_changes()
        assert revision is not None
        return revision

    return record


@pytest.fixture
def fast_password_hashing(settings):
    """For tests that log in through the admin: admin_client creates a superuser per test, and the production
    hasher takes most of a second."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def no_request_left_open():
    """
    The test client sends request_finished only once a streaming response (a static file) is read to its end;
    a test that does not read one leaves its request open, and the catalog would go on serving that request's
    snapshot to the next tests. Each test ends what it left open, as a WSGI server closes every response.
    (Without close_old_connections, as the test client sends it: the test's transaction must stay open.)
    """
    yield
    request_finished.disconnect(close_old_connections)
    try:
        request_finished.send(sender=None)
    finally:
        request_finished.connect(close_old_connections)


@pytest.fixture(autouse=True)
def fresh_throttle_counters():
    """Throttle counters live in the cache; each test starts with none."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def at_once():
    """
    at_once(*calls, watch=None): runs each call in a thread of its own, all released together from one barrier
    (real concurrent transactions: for transactional PostgreSQL tests), and returns when all have finished; the
    test fails if one is stuck or raised. watch, if given, is called over and over from one more thread, released
    with the others, until they have all finished, and once more after: a reader looking on during the race.
    Each thread closes its database connection at its end.
    """

    def run(*calls, watch=None, timeout=120):
        start = threading.Barrier(len(calls) + (watch is not None))
        finished = threading.Event()
        errors = []

        def in_thread(call):
            try:
                start.wait(timeout=30)
                call()
            except Exception as error:  # noqa: BLE001 - collected and asserted below
                errors.append(error)
            finally:
                connections.close_all()

        def looking_on():
            while not finished.is_set():
                watch()
            watch()

        racers = [threading.Thread(target=in_thread, args=(call,)) for call in calls]
        watcher = [threading.Thread(target=in_thread, args=(looking_on,))] if watch else []
        for thread in [*watcher, *racers]:
            thread.start()
        for thread in racers:
            thread.join(timeout=timeout)
        finished.set()
        for thread in watcher:
            thread.join(timeout=timeout)
        assert not any(thread.is_alive() for thread in [*watcher, *racers]), "a thread is stuck"
        assert errors == []

    return run


# --- Agent tools, sessions and the REST API ------------------------------------------------------------
# Users alice and bob, each in their own organization and with an API token; clients authenticated as
# each of them and an anonymous one; a session owned by each.


_PASSWORD_HASHES = {}


def _password_hash(password):
    """Hashing a password takes a good fraction of a second; do it once per password and hasher per run
    (some test modules switch to a fast hasher, whose hashes the default settings would not accept)."""
    from django.conf import settings
    from django.contrib.auth.hashers import make_password

    key = (password, settings.PASSWORD_HASHERS[0])
    if key not in _PASSWORD_HASHES:
        _PASSWORD_HASHES[key] = make_password(password)
    return _PASSWORD_HASHES[key]


def _member(username, org_name, org_slug):
    """
    A user (password '<username>-password-123') in a new organization, with an API token whose key is
    user.api_key (only its digest is stored: the key cannot be read back from the database).
    """
    from django.contrib.auth import get_user_model

    from accounts.models import Membership, Organization
    from accounts.tokens import create_token

    user = get_user_model().objects.create_user(username=username)
    user.password = _password_hash(f"{username}-password-123")
    user.save(update_fields=["password"])
    org = Organization.objects.create(name=org_name, slug=org_slug)
    Membership.objects.create(user=user, organization=org)
    _, user.api_key = create_token(user=user, name="tests")
    return user


@pytest.fixture
def alice(db):
    """A user in the organization 'acme', with an API token (its key: alice.api_key)."""
    return _member("alice", "Acme", "acme")


@pytest.fixture
def bob(db):
    """A user in the organization 'globex', with an API token."""
    return _member("bob", "Globex", "globex")


@pytest.fixture
def graph(db):
    """general (the default, any target); review, which may go to general and review_notes; review_notes, which
    may go back to review only; deploy, which the model may never enter. One revision: review and review_notes name
    each other, so a catalog holding either alone breaks modes.E010, and the services would refuse it."""
    policies = {
        "review": dict(switch_targets=["general", "review_notes"]),
        "review_notes": dict(switch_targets=["review"]),
        "deploy": dict(llm_can_enter=False),
    }

    def write():
        modes = {key: valid_mode(key, **policy) for key, policy in policies.items()}
        for mode in modes.values():
            mode.save(force_insert=True)
        return modes

    return through_the_services(write)


@pytest.fixture
def clock(monkeypatch):
    """Moves the service's clock (django.utils.timezone.now) forward: clock.advance(seconds=61)."""
    from datetime import timedelta

    from django.utils import timezone

    real_now = timezone.now

    class Clock:
        offset = timedelta()

        def advance(self, **delta):
            self.offset += timedelta(**delta)

    moved = Clock()
    monkeypatch.setattr(timezone, "now", lambda: real_now() + moved.offset)
    return moved


@pytest.fixture
def alice_org(alice):
    return alice.membership.organization


@pytest.fixture
def anon_client():
    from rest_framework.test import APIClient

    return APIClient()


def _token_client(user):
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {user.api_key}")
    return client


@pytest.fixture
def alice_client(alice):
    """An API client sending alice's token."""
    return _token_client(alice)


@pytest.fixture
def staff_token_client(alice):
    """An API client sending the token of alice, made staff (with no permission of any model)."""
    alice.is_staff = True
    alice.save(update_fields=["is_staff"])
    return _token_client(alice)


@pytest.fixture
def bob_client(bob):
    return _token_client(bob)


def _session_of(user, title):
    from sessions_app.services import create_session

    return create_session(release=published_release(), owner=user, org=user.membership.organization, title=title)


@pytest.fixture
def alice_session(alice):
    """A session of alice's in the default mode (general)."""
    return _session_of(alice, "Alice's session")


@pytest.fixture
def bob_session(bob):
    return _session_of(bob, "Bob's session")


# --- Staff in the admin, with only the permissions a test gives them ------------------------------------


@pytest.fixture
def staff_client(db, fast_password_hashing, client):
    """
    staff_client(*codenames): the test client logged in as a staff user (not a superuser) who holds every
    ``view_*`` permission, so can read the whole admin, and the permissions named, nothing else.
    """
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    def logged_in(*codenames):
        user = get_user_model().objects.create_user(username="staff", password="staff-password-123", is_staff=True)
        granted = Permission.objects.filter(codename__startswith="view_") | Permission.objects.filter(
            codename__in=codenames
        )
        user.user_permissions.set(granted)
        assert set(codenames) <= set(granted.values_list("codename", flat=True)), "no such permission"
        client.force_login(user)
        return client

    return logged_in


@pytest.fixture
def view_only_client(staff_client):
    """The test client logged in as staff holding every view_* permission and nothing else."""
    return staff_client()


@pytest.fixture
def admin_rows(alice, alice_session, custom_mode):
    """
    A row in every table the admin shows (a session with a mode change, a group, a declared tool, login
    attempts and logs, a row of the archived history, which no service writes, a routing case), and in each catalog table a row
    deleted since, to be restored from its history. The access attempt is older than the lockout, so axes' "Clean
    up expired attempts" would delete it.
    """
    from datetime import timedelta

    from axes.models import AccessAttempt, AccessFailureLog, AccessLog
    from django.contrib.auth.models import Group
    from django.utils import timezone

    from modes.models import ArchivedHistory, DeclaredTool, RoutingCase
    from sessions_app.services import set_session_mode

    catalog = published_catalog()
    set_session_mode(
        catalog=catalog, session_id=alice_session.pk, mode=catalog.mode("ddr_authoring"), reason="A DDR.", user=alice
    )
    Group.objects.create(name="Editors")
    through_the_services(lambda: DeclaredTool.objects.create(name="agent_ddr_manager", description="Manages DDRs."))
    through_the_services(lambda: DeclaredTool.objects.create(name="agent_retired_tool", description="Retired."))
    through_the_services(lambda: DeclaredTool.objects.get(name="agent_retired_tool").delete())
    through_the_services(custom_mode.delete)
    attempt = {"username": "alice", "ip_address": "203.0.113.7", "user_agent": "curl", "path_info": "/admin/login/"}
    AccessAttempt.objects.create(**attempt, get_data="", post_data="", failures_since_start=1)
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(days=1))
    AccessFailureLog.objects.create(**attempt)
    AccessLog.objects.create(**attempt)
    ArchivedHistory.objects.create(
        kind="mode", identity="5A4D3C2B1A0F4E9D8C7B6A5F4E3D2C1B", name="retired_research", change="changed",
        content={"key": "retired_research", "when_to_use": "Use this mode for research."},
        changed_at=timezone.now(), changed_by=alice,
    )
    RoutingCase.objects.create(utterance="Write a DDR about caching.", expected="ddr_authoring")


@pytest.fixture
def admin_page_rows(alice, alice_session, custom_mode):
    """The rows whose admin pages a test shows: alice, her organization and session, a custom mode, a declared tool."""
    from types import SimpleNamespace

    from modes.models import DeclaredTool

    tool = through_the_services(lambda: DeclaredTool.objects.create(name="agent_ddr_manager", description="Manages DDRs."))
    org = alice.membership.organization
    return SimpleNamespace(session=alice_session, mode=custom_mode, tool=tool, user=alice, org=org)


def _ensure_migrated_catalog():
    """Writes what the migrations put in the catalog if it is missing: the seed modes and revision 1, published.

    Idempotent: the seed migration's add_seed_modes leaves existing modes alone, and revision 1 is written only
    where there is no revision.
    """
    import importlib
    from types import SimpleNamespace

    from django.apps import apps as django_apps

    editor = SimpleNamespace(connection=connection)
    importlib.import_module("modes.migrations.0002_seed_v1_modes").add_seed_modes(django_apps, editor)
    revision_1 = importlib.import_module("modes.migrations.0011_revisions_are_the_one_history")
    revision_1.record_the_seed_as_revision_1(django_apps, editor)


def _modes_app_snapshot():
    """Every row of every model of the modes app (the catalog first), all fields included."""
    from django.apps import apps

    models = sorted(apps.get_app_config("modes").get_models(), key=lambda model: model is not AgentMode)
    return {model: list(model.objects.order_by("pk").values()) for model in models}


@pytest.fixture(scope="class")
def modes_restored_after_flush(django_db_setup, django_db_blocker):
    """For a class of transactional tests: the catalog is there before them and put back after the flush.

    Use it with ``@pytest.mark.django_db(transaction=True, serialized_rollback=True)``. A transactional
    test ends by flushing every table. This fixture is class-scoped so that its teardown runs after
    that flush (a function-scoped fixture is torn down before the django_db marker's flush). Then it
    writes back what the migrations put in the test database (content types, permissions, seed modes)
    with their original primary keys, so that a later serialized-rollback test can load them again.
    Django's serialized copy keeps only milliseconds of timestamps, so the rows of the modes app are
    then put back exactly as they were before the class, and checked. Before the class it makes sure
    the migrated catalog is present: an earlier transactional test may have left the tables empty.
    """
    with django_db_blocker.unblock():
        _ensure_migrated_catalog()
        before = _modes_app_snapshot()
    yield
    with django_db_blocker.unblock():
        for alias in connections:
            contents = getattr(connections[alias], "_test_serialized_contents", None)
            if contents:
                connections[alias].creation.deserialize_db_from_string(contents)
        for model, rows in before.items():
            pk_name = model._meta.pk.attname
            model.objects.exclude(pk__in=[row[pk_name] for row in rows]).delete()
            present = set(model.objects.values_list("pk", flat=True))
            model.objects.bulk_create([model(**row) for row in rows if row[pk_name] not in present])
            for row in rows:
                model.objects.filter(pk=row[pk_name]).update(**row)  # update() keeps the given timestamps
        assert _modes_app_snapshot() == before, "the modes tables were not restored"


def pytest_collection_modifyitems(items):
    """
    A test marked postgres(reason=...) is skipped, for that reason, on any other database. One marked
    either_database(reason=...) runs once, on SQLite: `make test` pays for it once.
    """
    for item in items:
        if connection.vendor != "postgresql" and (marker := item.get_closest_marker("postgres")):
            item.add_marker(pytest.mark.skip(reason=marker.kwargs["reason"]))
        if connection.vendor != "sqlite" and (marker := item.get_closest_marker("either_database")):
            item.add_marker(pytest.mark.skip(reason=f"{marker.kwargs['reason']}: run once, on SQLite"))


def pytest_sessionstart(session):
    from .servers import let_serve_user_reach_the_project, stop_servers_when_terminated

    let_serve_user_reach_the_project()
    stop_servers_when_terminated()


def pytest_terminal_summary(terminalreporter, config):
    """
    Say how to replay this run's test order, and name the folders the browser test kept its screenshots in,
    so that CI's output says both at its end, where a failure is read.
    """
    from .browser import SCREENSHOTS_KEY

    order = RandomOrder(config)
    if order.is_enabled:
        terminalreporter.write_line(f"Test order: replay it with PYTEST_ARGS=--random-order-seed={order.seed}")
    for folder in config.stash.get(SCREENSHOTS_KEY, []):
        shots = sorted(path.name for path in folder.glob("*.png"))
        terminalreporter.write_line(f"Browser screenshots ({len(shots)}): {folder}/")


@pytest.fixture
def staff_user(db):
    """A staff member who may read the catalog's revisions (modes.view_catalogrevision) and nothing more."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    user = get_user_model().objects.create_user(username="sam", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_catalogrevision"))
    return user


@pytest.fixture
def staff_api_client(staff_user):
    """An API client logged in (session cookie) as staff_user."""
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_login(staff_user)
    return client


# --- Catalog releases: a pending revision, and staff who may publish it --------------------------------------------


@pytest.fixture
def scout_pending(settings):
    """Revision 2, pending under review (CATALOG_APPROVALS = 1): it adds the mode scout, which revision 1 lacks."""
    from modes.models import CatalogHead

    settings.CATALOG_APPROVALS = 1
    through_the_services(lambda: valid_mode("scout", when_to_use=SCOUT_WHEN_TO_USE).save(force_insert=True))
    assert CatalogHead.objects.get(pk=1).latest == 2
    return 2


SCOUT_WHEN_TO_USE = "Use this mode when the user wants a quick look around first."


@pytest.fixture
def publisher(db):
    """A staff user who may publish catalog revisions (unreviewed too) and read them, and an API client logged in."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission
    from rest_framework.test import APIClient

    user = get_user_model().objects.create_user(username="publisher", is_staff=True)
    granted = ["view_catalogrevision", "publish_revision", "publish_unreviewed_revision"]
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="modes", codename__in=granted))
    client = APIClient()
    client.force_login(user)
    return user, client


@pytest.fixture
def second_connection():
    """second_connection(): a psycopg connection of its own to the test database (PostgreSQL), as another worker or
    a script has, to hold locks and uncommitted writes while the code under test runs; closed after the test."""
    import psycopg

    opened = []

    def open_one():
        params = connection.get_connection_params()
        own = {name: params[name] for name in ("dbname", "user", "host", "port") if params.get(name)}
        opened.append(psycopg.connect(**own))
        return opened[-1]

    yield open_one
    for other in opened:
        other.close()


class CommitOnceWaitedOn(threading.Thread):
    """
    Commits other's transaction, from a thread, once another connection waits on one of its locks: the code under test
    then meets the transaction uncommitted, however slow the machine. After timeout it commits anyway, and `waited`
    says that nothing waited (a test of a race asserts it did).
    """

    def __init__(self, other, timeout=10):
        super().__init__(daemon=True)
        self.other, self.timeout, self.waited = other, timeout, False
        self.start()

    def run(self):
        deadline = time.monotonic() + self.timeout
        blocked = "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pg_backend_pid() = ANY(pg_blocking_pids(pid)))"
        while not self.waited and time.monotonic() < deadline:
            self.waited = self.other.execute(blocked).fetchone()[0]
            time.sleep(0.01)
        self.other.commit()
