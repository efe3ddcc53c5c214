"""
Deleting organizations (accounts.services.delete_organizations, which the admin's delete page and "Delete selected"
call): their memberships go, their sessions keep none; one that a rollout or the mode-change audit names is kept.

Also while another worker writes a row naming one (PostgreSQL, real transactions, restored afterwards): a rollout
staged to it, or a mode change recorded in it, that commits during the deletion. The deletion locks the organizations
before it looks for what names them, so it waits for that write, sees it, and shows Django's "Cannot delete
organization" page saying what keeps it; before, it missed the row and failed at commit, a 500 changing nothing. A
membership added to it meanwhile waits for the deletion, then is refused on the admin's form.
"""

from decimal import Decimal

import pytest
from django.utils import timezone

from accounts.models import Membership, Organization
from accounts.services import OrganizationInUse, delete_organizations
from modes.releases import publish_revision
from modes.catalog import published_catalog
from modes.rollouts import Staging
from sessions_app.models import AgentSession
from sessions_app.services import set_session_mode

from ..conftest import CommitOnceWaitedOn

CANNOT = "<h1>Cannot delete organization</h1>"


@pytest.mark.django_db
def test_deleting_organizations_takes_their_memberships_and_leaves_their_sessions_in_none(
    admin_client, alice, bob, alice_session, bob_session
):
    organizations = [alice.membership.organization.pk, bob.membership.organization.pk]
    body = {"action": "delete_selected", "_selected_action": organizations, "post": "yes"}
    response = admin_client.post("/admin/accounts/organization/", body)
    assert response.status_code == 302
    assert not Organization.objects.exists() and not Membership.objects.exists()
    assert list(AgentSession.objects.values_list("org_id", flat=True)) == [None, None]


@pytest.mark.django_db
def test_an_organization_the_audit_names_is_kept_and_its_deletion_refused_in_words(alice_org, bob, bob_session):
    catalog = published_catalog()
    set_session_mode(
        catalog=catalog, session_id=bob_session.pk, mode=catalog.mode("ddr_authoring"), reason="r", user=bob
    )
    with pytest.raises(OrganizationInUse, match="'globex' is named by a catalog rollout or by the mode-change audit"):
        delete_organizations(organizations=[alice_org, bob.membership.organization])  # acme first: deletable
    assert Organization.objects.count() == 2 and Membership.objects.count() == 2


def staged_meanwhile(other, organization, publisher):
    """A rollout widened to organization, as modes.rollouts does it (the organization locked first), not committed."""
    rollout = publish_revision(number=2, user=publisher, staging=Staging(share=Decimal(10))).rollouts.get()
    other.execute("SELECT 1 FROM accounts_organization WHERE id = %s FOR NO KEY UPDATE", [organization.pk])
    other.execute(
        "INSERT INTO modes_catalogrollout_organizations (catalogrollout_id, organization_id) VALUES (%s, %s)",
        [rollout.pk, organization.pk],
    )
    return f"Rollout of revision 2 (in flight), to {organization}"


def mode_changed_meanwhile(other, organization, session):
    """A mode change recorded in organization, as set_session_mode records it (each foreign key checked as written),
    not committed."""
    other.execute("SET CONSTRAINTS ALL IMMEDIATE")
    other.execute(
        "INSERT INTO sessions_app_modechange (session_id, from_mode_id, to_mode_id, reason, branch, changed_by_id, "
        "org_id, catalog_revision, changed_at, confirmed_by) VALUES (%s, %s, %s, 'r', false, %s, %s, 1, %s, 'model')",
        [session.pk, session.mode_id, session.mode_id, session.owner_id, organization.pk, timezone.now()],
    )
    return "<li>mode change</li>"  # a row nobody may delete: the page names its kind


@pytest.mark.postgres(reason="another connection's uncommitted write, and PostgreSQL's row locks")
@pytest.mark.usefixtures("modes_restored_after_flush")
class TestAnOrganizationNamedDuringItsDeletion:
    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    @pytest.mark.parametrize("way, write", [("delete view", "staging"), ("delete selected", "mode change")])
    def test_is_kept_and_the_admin_says_what_keeps_it(
        self, way, write, admin_client, admin_user, alice_org, alice_session, scout_pending, second_connection
    ):
        other = second_connection()
        if write == "staging":
            named_by = staged_meanwhile(other, alice_org, admin_user)
        else:
            named_by = mode_changed_meanwhile(other, alice_org, alice_session)
        committer = CommitOnceWaitedOn(other)
        if way == "delete view":
            response = admin_client.post(f"/admin/accounts/organization/{alice_org.pk}/delete/", {"post": "yes"})
        else:
            body = {"action": "delete_selected", "_selected_action": [alice_org.pk], "post": "yes"}
            response = admin_client.post("/admin/accounts/organization/", body)
        committer.join()

        assert committer.waited  # the race was run: the deletion met the write uncommitted
        assert response.status_code == 200
        assert CANNOT in response.text and named_by in response.text
        assert Organization.objects.filter(pk=alice_org.pk).exists()

    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_a_membership_added_in_its_organization_meanwhile_is_refused_on_the_form(
        self, admin_client, django_user_model, second_connection
    ):
        globex = Organization.objects.create(name="Globex", slug="globex")
        carol = django_user_model.objects.create_user("carol")
        other = second_connection()
        other.execute("DELETE FROM accounts_organization WHERE id = %s", [globex.pk])
        committer = CommitOnceWaitedOn(other)
        response = admin_client.post("/admin/accounts/membership/add/", {"user": carol.pk, "organization": globex.pk})
        committer.join()

        assert committer.waited  # the race was run: the form met the deletion uncommitted
        assert response.status_code == 200  # the form again, where it was a 500 at commit
        assert "This organization was deleted meanwhile; choose another." in response.text
        assert not Membership.objects.exists()
