"""
The bound on stored routing cases under real transactions (PostgreSQL, transactional tests, restored afterwards): a
case added by another request, not committed yet, is waited for and counted, whichever way either is added.
"""

import pytest

from modes.models import RoutingCase
from modes.routing import cases, files
from modes.routing.cases import InvalidRoutingCase
from modes.routing.files import import_cases

from ...conftest import CommitOnceWaitedOn


@pytest.fixture
def one_case_at_most(monkeypatch):
    monkeypatch.setattr(cases, "MAX_STORED", 1)
    monkeypatch.setattr(files, "MAX_STORED", 1)


def adding_the_last_case(other):
    """Another request adding a case, as save_case and import_cases write one (under the catalog's lock)."""
    other.execute("SELECT id FROM modes_cataloghead WHERE id = 1 FOR UPDATE")
    other.execute(
        "INSERT INTO modes_routingcase (utterance, current_mode, expected, created_at, updated_at) "
        "VALUES ('Hi', '', 'stay', now(), now())"
    )


@pytest.mark.postgres(reason="needs concurrent transactions (PostgreSQL)")
@pytest.mark.usefixtures("modes_restored_after_flush", "fast_password_hashing", "one_case_at_most")
class TestTheCasesBoundUnderRealTransactions:
    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_a_case_added_over_the_api_while_another_takes_the_last_place_is_refused(
        self, routing_staff, second_connection
    ):
        _, client = routing_staff("adder", "add_routingcase")
        other = second_connection()
        adding_the_last_case(other)
        committer = CommitOnceWaitedOn(other)
        response = client.post("/api/catalog/routing-cases/", {"utterance": "Hello", "expected": "stay"}, format="json")
        committer.join()

        assert committer.waited
        assert response.status_code == 400, response.content
        assert "There are 1 cases, as many as an evaluation takes" in response.content.decode()
        assert list(RoutingCase.objects.values_list("utterance", flat=True)) == ["Hi"]

    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_a_file_imported_while_another_request_takes_the_last_place_is_refused_whole(self, second_connection):
        other = second_connection()
        adding_the_last_case(other)
        committer = CommitOnceWaitedOn(other)
        with pytest.raises(InvalidRoutingCase, match="With the 1 cases stored, the file's 1 new ones would pass the 1"):
            import_cases(text='{"utterance": "Hello", "expected": "stay"}\n', file_format="jsonl")
        committer.join()

        assert committer.waited
        assert list(RoutingCase.objects.values_list("utterance", flat=True)) == ["Hi"]

    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_a_case_edited_in_the_admin_does_not_wait_for_catalog_writes(self, routing_staff, second_connection):
        # Only adding a case can pass the bound: an edit takes no catalog lock, so it never queues behind a release.
        case = RoutingCase.objects.create(utterance="Hi", expected="stay")
        _, client = routing_staff("editor", "change_routingcase", "view_routingcase")
        other = second_connection()
        other.execute("SELECT id FROM modes_cataloghead WHERE id = 1 FOR UPDATE")  # a catalog write under way
        committer = CommitOnceWaitedOn(other, timeout=1)
        response = client.post(
            f"/admin/modes/routingcase/{case.pk}/change/", {"utterance": "Hello", "current_mode": "", "expected": "stay"}
        )
        committer.join()

        assert response.status_code == 302, response.content
        assert not committer.waited
        assert RoutingCase.objects.get().utterance == "Hello"
