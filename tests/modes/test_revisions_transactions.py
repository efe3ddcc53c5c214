"""
Revisions under real transactions (transactional tests, restored afterwards): admins saving at the same moment
get consecutive revisions, none lost (PostgreSQL, concurrent transactions); an import that fails while writing
leaves neither modes nor a revision, and the head row as it was (both databases, the command run as an operator runs it).
"""

from io import StringIO

import pytest
import yaml
from django.core.management import call_command
from django.db import connection
from django.test import Client

from modes.models import AgentMode, CatalogHead, CatalogRevision, CatalogRevisionEntry

from .admin_forms import change_url, form_data

ROUNDS = 5
REFUSE_SECOND_ROW = {
    "postgresql": [
        """CREATE FUNCTION test_refuse_mode() RETURNS trigger AS $$
           BEGIN RAISE EXCEPTION 'refused by a test trigger'; END; $$ LANGUAGE plpgsql""",
        """CREATE TRIGGER test_refuse_mode BEFORE INSERT ON modes_agentmode
           FOR EACH ROW WHEN (NEW.key = 'second') EXECUTE FUNCTION test_refuse_mode()""",
    ],
    "sqlite": [
        """CREATE TRIGGER test_refuse_mode BEFORE INSERT ON modes_agentmode WHEN NEW.key = 'second'
           BEGIN SELECT RAISE(ABORT, 'refused by a test trigger'); END""",
    ],
}
DROP_REFUSAL = {
    "postgresql": ["DROP TRIGGER test_refuse_mode ON modes_agentmode", "DROP FUNCTION test_refuse_mode()"],
    "sqlite": ["DROP TRIGGER test_refuse_mode"],
}


def execute(statements):
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


@pytest.mark.usefixtures("modes_restored_after_flush", "fast_password_hashing")
class TestRevisionsUnderRealTransactions:
    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_an_import_that_fails_while_writing_leaves_no_mode_and_no_revision(self, tmp_path):
        def mode(key):
            return {"key": key, "display_name": key.title(), "when_to_use": f"Use this mode for {key} things."}

        path = tmp_path / "modes.yaml"
        path.write_text(yaml.safe_dump({"modes": [mode("first"), mode("second")]}), encoding="utf-8")
        revisions = list(CatalogRevision.objects.values_list("number", flat=True))
        entries, head = CatalogRevisionEntry.objects.count(), list(CatalogHead.objects.values())
        execute(REFUSE_SECOND_ROW[connection.vendor])
        try:
            with pytest.raises(Exception, match="refused by a test trigger"):
                call_command("import_modes", str(path), stdout=StringIO(), stderr=StringIO())
        finally:
            execute(DROP_REFUSAL[connection.vendor])

        assert not AgentMode.objects.filter(key__in=["first", "second"]).exists()
        assert list(CatalogRevision.objects.values_list("number", flat=True)) == revisions
        assert (CatalogRevisionEntry.objects.count(), list(CatalogHead.objects.values())) == (entries, head)

    @pytest.mark.postgres(reason="needs concurrent transactions (PostgreSQL)")
    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_admins_saving_at_once_get_consecutive_revisions_none_lost(self, django_user_model, at_once):
        admins = [django_user_model.objects.create_superuser(f"admin{n}", password="pw") for n in (1, 2)]
        keys = ["ddr_authoring", "workflow_authoring"]
        first = CatalogRevision.objects.order_by("-number").first().number

        def saving(admin, key, round_number):
            client = Client()
            client.force_login(admin)
            mode = AgentMode.objects.get(key=key)
            data = form_data(mode, display_name=f"{key} {round_number}")

            def save():
                response = client.post(change_url(mode.pk), data)
                assert response.status_code == 302, response.content[:500]

            return save

        for round_number in range(ROUNDS):
            at_once(*(saving(admin, key, round_number) for admin, key in zip(admins, keys)))

        made = list(CatalogRevision.objects.filter(number__gt=first).order_by("number"))
        assert [revision.number for revision in made] == list(range(first + 1, first + 1 + 2 * ROUNDS))
        assert sorted(revision.summary for revision in made) == sorted(
            [f"mode {key}: display_name" for key in keys] * ROUNDS
        )
        assert {revision.created_by.username for revision in made} == {"admin1", "admin2"}
        last = made[-1].catalog["modes"]
        assert [mode["display_name"] for mode in last if mode["key"] in keys] == [f"{key} {ROUNDS - 1}" for key in keys]
