"""
Each admin page makes an exact number of queries, the same with a few related rows and with more: each list and
page is rendered with a few and with more rows it shows or relates to, each made by a user (and in an organization)
of its own, so that a related row fetched one at a time shows as more queries; and the count of each is written
out, with what its queries are, so that a query added to a page is seen. The counts are steady-state: a first
request loads the published revision into the process, the measured one reads only the head row, where a page reads
the published catalog at all.
"""

import itertools
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Callable
from urllib.parse import urlencode

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.db import connection, models
from django.utils import timezone
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.models import Membership, Organization
from modes.catalog import published_release
from modes.models import AgentMode, ArchivedHistory, CatalogRevision, DeclaredTool
from modes.services import catalog_change, delete_modes, revert_row
from sessions_app.models import ModeChange, ModeChangeConfirmation
from sessions_app.services import create_session

from ..conftest import valid_mode
from ..expected import DDR_ID, GENERAL_ID

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]

numbers = itertools.count(1)


def a_member(org=None):
    """A new user, in org or else in a new organization."""
    number = next(numbers)
    user = get_user_model().objects.create_user(username=f"member{number}", email=f"member{number}@example.com")
    org = org or Organization.objects.create(name=f"Org {number}", slug=f"org-{number}")
    Membership.objects.create(user=user, organization=org)
    return user, org


def add_sessions(count, rows):
    for _ in range(count):
        user, org = a_member()
        create_session(release=published_release(), owner=user, org=org, title=f"Session of {user}")


def add_mode_changes(count, rows):
    """Mode changes of one session, each by a user of its own, every other one a branch to a new session and
    confirmed by the user answering a question of its own."""
    for index in range(count):
        user, org = a_member()
        branch = create_session(release=published_release(), owner=rows.session.owner, org=org) if index % 2 else None
        confirmation = ModeChangeConfirmation.objects.create(
            session=rows.session, channel="rest", from_mode_id=GENERAL_ID, to_mode_id=DDR_ID, reason="r",
            branch=True, question="?", expires_at=timezone.now(), choice="branch", answered_at=timezone.now(),
        ) if branch else None
        ModeChange.objects.create(
            session=rows.session, from_mode_id=GENERAL_ID, to_mode_id=DDR_ID, reason=f"Change {index}.",
            branch=branch is not None, branch_session=branch, changed_by=user, org=org, catalog_revision=1,
            confirmed_by="user" if confirmation else "model", confirmation=confirmation,
        )
    rows.first_change = rows.session.mode_changes.earliest("id")


def add_catalog_edits(count, rows):
    """Edits of the custom mode and of a declared tool, each by a user of its own: one revision each, which both
    rows' History pages list."""
    rows.first_revision = CatalogRevision.objects.get(number=1)
    for index in range(count):
        user, _ = a_member()
        with catalog_change(by=user):
            for row in (rows.mode, rows.tool):
                row.description = f"Edit {index}."
                row.save()


def add_modes(count, rows):
    """Custom modes, each a revision by a user of its own, half of them deleted since by another (the list shows
    the deleted ones too, each with the revision that deleted it)."""
    for index in range(count):
        user, _ = a_member()
        mode = valid_mode(f"custom_{next(numbers)}")
        with catalog_change(by=user):
            mode.save(force_insert=True)
        if index % 2:
            delete_modes(modes=[mode], deleted_by=a_member()[0])


def add_tools(count, rows):
    """Declared tools, each enabled by the custom mode: one revision."""
    names = [f"agent_tool_{next(numbers)}" for _ in range(count)]
    rows.mode.associated_tool_ids = [*rows.mode.associated_tool_ids, *names]
    with catalog_change(by=None):
        DeclaredTool.objects.bulk_create(DeclaredTool(name=name, description="A tool.") for name in names)
        rows.mode.save()


def add_edits_of_a_deleted_mode(count, rows):
    """
    Edits of a custom mode (retired), each a revision by a user of its own, before it is deleted by another; the
    next call restores it first (by yet another), as a revert from its History page does.
    """
    if not hasattr(rows, "retired"):
        rows.retired = valid_mode("retired")
        with catalog_change(by=a_member()[0]):
            rows.retired.save(force_insert=True)
        rows.created = CatalogRevision.objects.first().number
    else:
        revert_row(model=AgentMode, identity=rows.retired.pk, number=rows.created, reverted_by=a_member()[0])
    for index in range(count):
        with catalog_change(by=a_member()[0]):
            AgentMode.objects.filter(pk=rows.retired.pk).update(description=f"Edit {next(numbers)}.")
    delete_modes(modes=[AgentMode.objects.get(pk=rows.retired.pk)], deleted_by=a_member()[0])


def add_archived_history(count, rows):
    """Archived states of the per-row history (what migration 0011 carried over), each by a user of its own."""
    for _ in range(count):
        user, _ = a_member()
        ArchivedHistory.objects.create(
            kind="mode", identity=rows.mode.pk, name=rows.mode.key, change="changed", content={"key": rows.mode.key},
            changed_at=timezone.now(), changed_by=user,
        )


def add_members(count, rows):
    """Users, each in a group and an organization of its own."""
    for _ in range(count):
        user, _ = a_member()
        user.groups.add(Group.objects.create(name=f"Group of {user}"))


def add_members_of_the_org(count, rows):
    for _ in range(count):
        a_member(rows.org)


def add_groups_and_permissions(count, rows):
    """Groups and permissions of the one user whose page is shown."""
    for _ in range(count):
        rows.user.groups.add(Group.objects.create(name=f"Group {next(numbers)}"))
    rows.user.user_permissions.add(*Permission.objects.order_by("pk")[: count])


@dataclass(frozen=True)
class Page:
    view: str  # the admin URL's name
    add_related: Callable[[int, SimpleNamespace], None]  # adds that many rows the page shows or relates to
    queries: int  # the queries of one request, whatever the number of rows
    row: Callable[[SimpleNamespace], models.Model] | None = None  # the row whose page it is; None for a list
    query: Callable[[SimpleNamespace], dict] | None = None  # the query string's parameters
    few: int = 2
    more: int = 12
    # On PostgreSQL an unfiltered list of a table that grows without bound (LargeTableAdmin) first reads the
    # table's estimated size, then counts exactly, as the table is small: one query more.
    estimated: bool = False

    def url(self, rows):
        args = [self.row(rows).pk] if self.row else []
        query = f"?{urlencode(self.query(rows))}" if self.query else ""
        return reverse(f"admin:{self.view}", args=args) + query

    def expected_queries(self):
        return self.queries + (self.estimated and connection.vendor == "postgresql")


# Every admin page reads the login session and its user first: the 2 + ... below.
PAGES = {
    # + the modes and the organizations (the list's filters), the count of the page, the page with each session's
    # owner, organization and mode.
    "session list": Page("sessions_app_agentsession_changelist", add_sessions, 2 + 4, estimated=True),
    # More mode changes than the 20 the page shows. + the session, its latest 20 changes (each with its modes, user,
    # organization and confirmation), their count, and the session's owner, organization and mode shown read-only.
    "session page": Page(
        "sessions_app_agentsession_change", add_mode_changes, 2 + 6, lambda rows: rows.session, more=25
    ),
    # + the modes (the list's filters), the count of the page, the page with each change's session, modes and user.
    "mode change list": Page("sessions_app_modechange_changelist", add_mode_changes, 2 + 3, estimated=True),
    # + the session the filter names, the modes (the filters), the count of the page, the page.
    "one session's mode changes": Page(
        "sessions_app_modechange_changelist",
        add_mode_changes,
        2 + 4,
        query=lambda rows: {"session__id__exact": rows.session.pk},
    ),
    # + the change, and its two modes, session, user and organization shown read-only.
    "mode change page": Page(
        "sessions_app_modechange_change", add_mode_changes, 2 + 6, lambda rows: rows.first_change
    ),
    # + the count of the page, the page with each revision's author.
    "revision list": Page("modes_catalogrevision_changelist", add_catalog_edits, 2 + 2, estimated=True),
    # + the revision, and its catalog: the entries in force at it (one query).
    "revision page": Page(
        "modes_catalogrevision_change", add_catalog_edits, 2 + 2, lambda rows: rows.first_revision
    ),
    # + the deleted modes (their removals, with their revisions), the latest revision (what its positions are edited
    # at), the head row (whether a revision is pending, for the banner), the count of the page and of the whole
    # table, the page.
    "mode list": Page("modes_agentmode_changelist", add_modes, 2 + 6),
    # + the head row (the banner), the latest revision (what the form is opened at), the mode, then the rows as saved
    # twice, modes and declared tools, once for each preview (the system prompt, the tools): working_catalog() is
    # read per preview.
    "mode page": Page("modes_agentmode_change", add_tools, 2 + 7, lambda rows: rows.mode),
    # + the revisions that changed it (its entries, each with its revision and author), the live mode.
    "mode history": Page("modes_agentmode_history", add_catalog_edits, 2 + 2, lambda rows: rows.mode),
    # The same for a deleted mode, by its id: the live mode is looked for, and not found.
    "deleted mode's history": Page(
        "modes_agentmode_history", add_edits_of_a_deleted_mode, 2 + 2, lambda rows: rows.retired
    ),
    # + the deleted tools, the head row (the banner), the two counts, the page, then the head row again: the
    # published catalog (request.catalog) for the "enabled by" column, read once for the whole list.
    "declared tool list": Page("modes_declaredtool_changelist", add_tools, 2 + 6),
    # + the head row (the banner), the latest revision (what the form is opened at), the tool, the head row again for
    # the published catalog ("enabled by").
    "declared tool page": Page("modes_declaredtool_change", add_modes, 2 + 4, lambda rows: rows.tool),
    # + the tool's name from its id (revisions name a tool by its name), its entries with their revisions and
    # authors, the live tool.
    "declared tool history": Page("modes_declaredtool_history", add_catalog_edits, 2 + 3, lambda rows: rows.tool),
    # + the two counts, the page with each state's author, the values the "change" filter offers (one DISTINCT
    # query; "kind" has choices).
    "archived history list": Page("modes_archivedhistory_changelist", add_archived_history, 2 + 4),
    # + the two counts, the page.
    "organization list": Page("accounts_organization_changelist", add_members, 2 + 3),
    # + the organization.
    "organization page": Page("accounts_organization_change", add_members_of_the_org, 2 + 1, lambda rows: rows.org),
    # + the two counts, the page with each membership's user and organization.
    "membership list": Page("accounts_membership_changelist", add_members, 2 + 3),
    # + the membership, its user and organization (its title), every user (the user field's choices), the
    # organization the autocomplete field shows.
    "membership page": Page(
        "accounts_membership_change", add_members_of_the_org, 2 + 5, lambda rows: rows.user.membership
    ),
    # + the groups (the list's filter), the two counts, the page.
    "user list": Page("auth_user_changelist", add_members, 2 + 4),
    # + the user, its groups and permissions (the form's initial values), every group and every permission with its
    # content type (the widgets' choices).
    "user page": Page("auth_user_change", add_groups_and_permissions, 2 + 5, lambda rows: rows.user),
}


def queries_to_render(client, url):
    client.get(url)  # loads what is kept between requests (the published revision, where the page reads it)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return [query["sql"] for query in queries.captured_queries]


@pytest.mark.parametrize("page", PAGES.values(), ids=PAGES.keys())
def test_an_admin_pages_query_count_is_exact_and_does_not_grow_with_its_rows(admin_client, admin_page_rows, page):
    rows = admin_page_rows
    page.add_related(page.few, rows)
    few = queries_to_render(admin_client, page.url(rows))
    page.add_related(page.more - page.few, rows)
    more = queries_to_render(admin_client, page.url(rows))
    assert len(few) == page.expected_queries(), "\n".join(few)
    assert len(more) == len(few), "\n".join(more)
