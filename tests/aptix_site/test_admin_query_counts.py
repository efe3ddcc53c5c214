"""
No admin page's query count grows with the number of rows it shows or relates to: each list and page is
rendered with a few related rows and with more, each made by a user (and in an organization) of its own,
so that a related row fetched one at a time shows as more queries. The counts are steady-state: a first
request loads the catalog snapshot, the measured one repeats it.
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
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.models import Membership, Organization
from modes.models import AgentMode, CatalogRevision, DeclaredTool
from modes.services import catalog_change
from sessions_app.models import ModeChange
from sessions_app.services import create_session

from ..expected import DDR_ID, GENERAL_ID
from modes.catalog import published_catalog

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
        create_session(catalog=published_catalog(), owner=user, org=org, title=f"Session of {user}")


def add_mode_changes(count, rows):
    """Mode changes of one session, each by a user of its own, every other one a branch to a new session."""
    for index in range(count):
        user, org = a_member()
        branch = create_session(catalog=published_catalog(), owner=rows.session.owner, org=org) if index % 2 else None
        ModeChange.objects.create(
            session=rows.session, from_mode_id=GENERAL_ID, to_mode_id=DDR_ID, reason=f"Change {index}.",
            branch=branch is not None, branch_session=branch, changed_by=user, org=org, catalog_revision=1,
        )
    rows.first_change = rows.session.mode_changes.earliest("id")


def add_catalog_edits(count, rows):
    """Edits of the custom mode and of a declared tool, each by a user of its own: a revision and history each."""
    rows.first_revision = CatalogRevision.objects.get(number=1)
    for index in range(count):
        user, _ = a_member()
        with catalog_change(by=user):
            for row in (rows.mode, rows.tool):
                row.description = f"Edit {index}."
                row._history_user = user
                row.save()


def add_modes(count, rows):
    """Custom modes, half of them deleted since by users of their own (the list shows the deleted ones too)."""
    for index in range(count):
        mode = AgentMode.objects.create(
            key=f"custom_{next(numbers)}", display_name="Custom", when_to_use="Use this mode for a test."
        )
        if index % 2:
            mode._history_user, _ = a_member()
            mode.delete()


def add_tools(count, rows):
    """Declared tools, each enabled by the custom mode."""
    names = [f"agent_tool_{next(numbers)}" for _ in range(count)]
    DeclaredTool.objects.bulk_create(DeclaredTool(name=name, description="A tool.") for name in names)
    rows.mode.associated_tool_ids = [*rows.mode.associated_tool_ids, *names]
    rows.mode.save()


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
    row: Callable[[SimpleNamespace], models.Model] | None = None  # the row whose page it is; None for a list
    query: Callable[[SimpleNamespace], dict] | None = None  # the query string's parameters
    few: int = 2
    more: int = 12

    def url(self, rows):
        args = [self.row(rows).pk] if self.row else []
        query = f"?{urlencode(self.query(rows))}" if self.query else ""
        return reverse(f"admin:{self.view}", args=args) + query


PAGES = {
    "session list": Page("sessions_app_agentsession_changelist", add_sessions),
    # More mode changes than the 20 the page shows.
    "session page": Page("sessions_app_agentsession_change", add_mode_changes, lambda rows: rows.session, more=25),
    "mode change list": Page("sessions_app_modechange_changelist", add_mode_changes),
    "one session's mode changes": Page(
        "sessions_app_modechange_changelist",
        add_mode_changes,
        query=lambda rows: {"session__id__exact": rows.session.pk},
    ),
    "mode change page": Page("sessions_app_modechange_change", add_mode_changes, lambda rows: rows.first_change),
    "revision list": Page("modes_catalogrevision_changelist", add_catalog_edits),
    "revision page": Page("modes_catalogrevision_change", add_catalog_edits, lambda rows: rows.first_revision),
    "mode list": Page("modes_agentmode_changelist", add_modes),
    "mode page": Page("modes_agentmode_change", add_tools, lambda rows: rows.mode),
    "mode history": Page("modes_agentmode_history", add_catalog_edits, lambda rows: rows.mode),
    "declared tool list": Page("modes_declaredtool_changelist", add_tools),
    "declared tool page": Page("modes_declaredtool_change", add_modes, lambda rows: rows.tool),
    "declared tool history": Page("modes_declaredtool_history", add_catalog_edits, lambda rows: rows.tool),
    "organization list": Page("accounts_organization_changelist", add_members),
    "organization page": Page("accounts_organization_change", add_members_of_the_org, lambda rows: rows.org),
    "membership list": Page("accounts_membership_changelist", add_members),
    "membership page": Page("accounts_membership_change", add_members_of_the_org, lambda rows: rows.user.membership),
    "user list": Page("auth_user_changelist", add_members),
    "user page": Page("auth_user_change", add_groups_and_permissions, lambda rows: rows.user),
}


def queries_to_render(client, url):
    client.get(url)  # loads what is cached between requests (the catalog snapshot)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return [query["sql"] for query in queries.captured_queries]


@pytest.mark.parametrize("page", PAGES.values(), ids=PAGES.keys())
def test_an_admin_pages_query_count_does_not_grow_with_its_rows(admin_client, admin_page_rows, page):
    rows = admin_page_rows
    page.add_related(page.few, rows)
    few = queries_to_render(admin_client, page.url(rows))
    page.add_related(page.more - page.few, rows)
    more = queries_to_render(admin_client, page.url(rows))
    assert len(more) == len(few), "\n".join(more)
