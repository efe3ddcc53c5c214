"""
Staged rollouts under real transactions (PostgreSQL, transactional tests, restored afterwards): an organization
deleted while a rollout is staged to it is refused as unknown (400), not a 500 from the foreign key at commit.
"""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from rest_framework.test import APIClient

from accounts.models import Organization
from modes.models import CatalogHead, CatalogRollout

from ..conftest import CommitOnceWaitedOn


@pytest.mark.usefixtures("modes_restored_after_flush", "fast_password_hashing")
class TestRolloutsUnderRealTransactions:
    @pytest.mark.postgres(reason="needs concurrent transactions (PostgreSQL)")
    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_staging_to_an_organization_being_deleted_waits_for_it_and_refuses_it_as_unknown(
        self, scout_pending, second_connection
    ):
        publisher = get_user_model().objects.create_user(username="publisher", is_staff=True)
        granted = ["view_catalogrevision", "publish_revision", "publish_unreviewed_revision"]
        publisher.user_permissions.set(Permission.objects.filter(content_type__app_label="modes", codename__in=granted))
        client = APIClient()
        client.force_login(publisher)
        acme = Organization.objects.create(name="Acme", slug="acme")
        other = second_connection()  # another admin deleting acme, not committed yet
        other.execute("DELETE FROM accounts_organization WHERE id = %s", [acme.pk])
        committer = CommitOnceWaitedOn(other)
        body = {"share": 0, "organizations": ["acme"]}
        response = client.post(f"/api/catalog/revisions/{scout_pending}/publish/", body, format="json")
        committer.join()

        assert committer.waited
        assert response.status_code == 400, response.content
        assert response.json() == {"organizations": ["No organization has the slug 'acme'."]}
        assert CatalogHead.objects.get(pk=1).rollout_id is None
        assert not CatalogRollout.objects.exists()
