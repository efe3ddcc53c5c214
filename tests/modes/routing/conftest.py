"""Fixtures of the routing evaluations' tests: staff holding chosen permissions, and a catalog with two modes whose
when-to-use lines overlap, with cases that tell them apart."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from rest_framework.test import APIClient

from modes.models import AgentMode, RoutingCase
from modes.services import catalog_change

OVERLAPPING = "Use this mode when the user wants SQL queries, reports, dashboards or charts of sales figures."
SQL_CASES = [
    "Write a SQL query that joins orders to customers.",
    "Why does my SELECT with GROUP BY return duplicate rows?",
    "Help me index this Postgres table so the query runs faster.",
    "Turn this SQL subquery into a join.",
]
REPORT_CASES = [
    "Build me a dashboard of weekly sales figures.",
    "Make a monthly revenue report for the board.",
    "Chart this quarter's sales by region for the report.",
    "Prepare the weekly business report with the sales figures.",
]


@pytest.fixture
def routing_staff(db):
    """routing_staff(username, *codenames): a staff user holding those permissions only, and an API client of theirs."""

    def create(username, *codenames):
        user = get_user_model().objects.create_user(username=username, is_staff=True)
        user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
        client = APIClient()
        client.force_login(user)
        return user, client

    return create


@pytest.fixture
def overlapping_modes(new_mode):
    """sql_help and data_reports, with the same when-to-use line, and four cases each that name what they are for."""
    new_mode("sql_help", display_name="SQL Help", when_to_use=OVERLAPPING)
    new_mode("data_reports", display_name="Data Reports", when_to_use=OVERLAPPING)
    RoutingCase.objects.bulk_create(
        [RoutingCase(utterance=text, expected="sql_help") for text in SQL_CASES]
        + [RoutingCase(utterance=text, expected="data_reports") for text in REPORT_CASES]
    )


def tell_apart(*, by=None):
    """The two modes' lines rewritten to say what each is for: one revision."""
    with catalog_change(by=by):
        AgentMode.objects.filter(key="sql_help").update(
            when_to_use="Use this mode when the user wants a SQL query written, explained, fixed or made faster."
        )
        AgentMode.objects.filter(key="data_reports").update(
            when_to_use="Use this mode when the user wants a business report, dashboard or chart of sales and revenue."
        )
