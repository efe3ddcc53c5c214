"""Exact SQL query counts per request: they must not grow with the catalog (issue 5 budgets).

A request that reads the catalog costs its token (one query, with its user) and one small query for the head row
(the published revision, modes.catalog), and one for the session when it reads one. Counts are steady-state: the
first request after a publication also loads the published revision (one more query, whatever the catalog size).
Inside the test transaction, an atomic block shows as a SAVEPOINT/RELEASE pair, which outside a transaction
are BEGIN/COMMIT.
"""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from modes.models import AgentMode
from modes.portable import ModeFile, read_document
from modes.services import import_modes, record_unrecorded_changes, set_default_mode

SAVEPOINT_PAIR = 2
# On PostgreSQL, the change's foreign keys are checked as its rows are written (a deletion of the target under way is
# waited for): one statement; SQLite lets one writer in at a time.
IMMEDIATE_CHECKS = 1 if connection.vendor == "postgresql" else 0
# The token with its user, the session (is it the user's?), the head row, then the change, one ORM transaction on
# every database: the session row read under its lock (with whether the target's row is there and the user's
# organization; the mode graph is judged on it in Python), the audit row written, the session moved.
CHANGE_MODE_STATEMENTS = 6 + SAVEPOINT_PAIR + IMMEDIATE_CHECKS
# A branch creates a session as well, in the transaction, on every database.
BRANCH_STATEMENTS = 7 + SAVEPOINT_PAIR + IMMEDIATE_CHECKS


def grow_catalog_to(total):
    start = AgentMode.objects.count()
    AgentMode.objects.bulk_create(
        AgentMode(
            key=f"generated_{number}",
            display_name=f"Generated {number}",
            when_to_use=f"Use this mode for generated case {number}.",
            associated_tool_ids=["agent_change_mode", "agent_list_modes"],
            position=100 + number,
        )
        for number in range(total - start)
    )
    assert AgentMode.objects.count() == total
    record_unrecorded_changes()  # bulk_create is past the services: recorded as record_revision would, and published


@pytest.fixture(params=[3, 1000], ids=["3-modes", "1000-modes"])
def catalog_size(request, db):
    grow_catalog_to(request.param)
    return request.param


def test_listing_modes_costs_two_queries_whatever_the_catalog_size(
    alice_client, catalog_size, django_assert_num_queries
):
    alice_client.get("/api/modes/")  # loads the published revision
    with django_assert_num_queries(2):  # the token with its user, the head row
        response = alice_client.get("/api/modes/")
    assert response.status_code == 200
    assert len(response.json()["modes"]) == catalog_size


def test_filtered_listing_costs_two_queries_whatever_the_catalog_size(
    alice_client, catalog_size, django_assert_num_queries
):
    alice_client.get("/api/modes/")
    with django_assert_num_queries(2):
        response = alice_client.get("/api/modes/", {"filter": "GENERAL", "includeExamples": "true"})
    assert [mode["key"] for mode in response.json()["modes"]][0] == "general"


def test_agent_list_modes_costs_two_queries_whatever_the_catalog_size(
    alice_client, catalog_size, django_assert_num_queries
):
    alice_client.post("/api/tools/agent_list_modes/invoke/", {}, format="json")
    with django_assert_num_queries(2):
        response = alice_client.post(
            "/api/tools/agent_list_modes/invoke/", {"arguments": {"includeExamples": True}}, format="json"
        )
    assert response.status_code == 200


def test_first_request_after_a_publication_loads_the_published_revision_with_one_more_query(
    alice_client, catalog_size, django_assert_num_queries
):
    alice_client.get("/api/modes/")
    set_default_mode(mode=AgentMode.objects.get(key="ddr_authoring"))  # recorded as a revision, and published
    # The token with its user, the head row; then the published revision's entries (one query).
    with django_assert_num_queries(3):
        alice_client.get("/api/modes/")
    with django_assert_num_queries(2):
        alice_client.get("/api/modes/")


def test_a_change_made_around_the_service_costs_reads_nothing_and_is_not_served(
    alice_client, catalog_size, django_assert_num_queries
):
    revision = alice_client.get("/api/modes/").json()["catalogRevision"]
    AgentMode.objects.filter(key="general").update(version="v2")
    with django_assert_num_queries(2):  # reads never write the catalog: the token with its user, the head row
        assert alice_client.get("/api/modes/").json()["catalogRevision"] == revision


def test_session_context_costs_three_queries(alice_client, alice_session, catalog_size, django_assert_num_queries):
    alice_client.get("/api/modes/")
    with django_assert_num_queries(3):  # the token with its user, the session, the head row (the mode from the catalog)
        response = alice_client.get(f"/api/sessions/{alice_session.pk}/context/")
    assert response.status_code == 200


def test_agent_change_mode_costs_a_constant_number_of_queries(
    alice_client, alice_session, catalog_size, django_assert_num_queries
):
    alice_client.get("/api/modes/")
    for target in ("ddr_authoring", "general"):
        with django_assert_num_queries(CHANGE_MODE_STATEMENTS):
            response = alice_client.post(
                "/api/tools/agent_change_mode/invoke/",
                {"sessionId": str(alice_session.pk), "arguments": {"mode": target, "branch": False, "reason": "r"}},
                format="json",
            )
        assert response.status_code == 200


def test_agent_change_mode_with_branch_adds_only_the_new_session(
    alice_client, alice_session, django_assert_num_queries
):
    alice_client.get("/api/modes/")
    with django_assert_num_queries(BRANCH_STATEMENTS):
        response = alice_client.post(
            "/api/tools/agent_change_mode/invoke/",
            {"sessionId": str(alice_session.pk), "arguments": {"mode": "ddr_authoring", "branch": True, "reason": "r"}},
            format="json",
        )
    assert response.status_code == 200


def portable_file(count):
    return read_document(json.dumps({"modes": [
        {"key": f"imported_{number}", "display_name": f"Imported {number}", "when_to_use": f"Use it for {number}."}
        for number in range(count)
    ]}))


def test_an_import_costs_the_same_queries_to_plan_whatever_its_number_of_modes(db):
    # A large import (tens of thousands of modes, a REST upload answered within the proxy's timeout) must not cost
    # a query per mode to judge: each mode's rows are checked in Python, as its fields' validators check them.
    counts = []
    for count in (2, 20):
        with CaptureQueriesContext(connection) as queries:
            import_modes(mode_file=portable_file(count), update=False, dry_run=True)
        counts.append(len(queries))
    assert counts[0] == counts[1]


def test_an_import_writes_each_new_mode_with_one_statement(db):
    # Each new mode goes last: asking the database for the last position once per mode scanned the growing table
    # once per mode, where the import knows every row already.
    counts = []
    for first, count in ((0, 2), (2, 20)):
        modes = portable_file(count).entries[first:]
        with CaptureQueriesContext(connection) as queries:
            import_modes(mode_file=ModeFile(entries=modes), update=False, dry_run=False)
        counts.append((len(modes), len(queries)))
    (few, few_queries), (many, many_queries) = counts
    assert many_queries - few_queries == many - few
    assert list(AgentMode.objects.filter(key__startswith="imported_").values_list("key", flat=True)) == [
        f"imported_{number}" for number in range(20)
    ]
