"""
The sessions admin: a session's page shows its latest mode changes, read-only, and links to all of them on
the mode-change list, filtered to the session; the audit is never edited.
"""

import re

import pytest
from django.urls import reverse

from modes.catalog import get_mode, published_catalog
from sessions_app.models import AgentSession, ModeChange
from sessions_app.services import ask_mode_change, set_session_mode
from sessions_app.tools import answer_mode_change

from ..expected import GENERAL_ID

pytestmark = pytest.mark.django_db


@pytest.fixture
def changed_session(alice, alice_session):
    for key, reason in (("ddr_authoring", "Reason one: write a DDR."), ("workflow_authoring", "Reason two: a workflow.")):
        set_session_mode(
            catalog=published_catalog(), session_id=alice_session.pk, mode=get_mode(key), reason=reason, user=alice
        )
    return alice_session


def change_url(session):
    return reverse("admin:sessions_app_agentsession_change", args=[session.pk])


def test_the_session_list_shows_every_users_sessions(admin_client, alice_session, bob_session):
    response = admin_client.get(reverse("admin:sessions_app_agentsession_changelist"))
    assert response.status_code == 200
    content = response.content.decode()
    assert "Alice&#x27;s session" in content  # the title, HTML-escaped as every admin page writes it
    assert "Bob&#x27;s session" in content


def test_a_sessions_change_page_shows_its_mode_changes_newest_first(admin_client, changed_session):
    response = admin_client.get(change_url(changed_session))
    assert response.status_code == 200
    content = response.content.decode()
    assert "Reason one: write a DDR." in content
    assert "Reason two: a workflow." in content
    assert content.index("Reason two") < content.index("Reason one")
    assert "All 2 mode changes of this session" in content


def test_a_session_page_shows_how_each_mode_change_was_confirmed(settings, admin_client, alice, alice_session, new_mode):
    new_mode("scratch", entry_confirmation="none")
    settings.MODE_CHANGE_CONFIRMATION = "user"
    catalog = published_catalog()
    question = ask_mode_change(
        catalog=catalog, session_id=alice_session.pk, mode=catalog.mode("ddr_authoring"), reason="Asked.", user=alice,
        branch=False, channel="mcp",
    )
    assert answer_mode_change(
        catalog=catalog, session_id=alice_session.pk, confirmation_id=question.pk, user=alice, choice="switch",
        channel=question.channel,
    ).successful
    for key, confirmed_by in (("scratch", "none"), ("general", "model")):
        set_session_mode(
            catalog=catalog, session_id=alice_session.pk, mode=catalog.mode(key), reason="r", user=alice,
            confirmed_by=confirmed_by,
        )
    content = admin_client.get(change_url(alice_session)).content.decode()
    shown = re.findall(r'<td class="confirmation">(.*?)</td>', content)
    assert shown == ["by model", "by none", f"by user, over mcp, question <code>{question.pk}</code>"]  # newest first


def test_a_session_page_shows_the_latest_20_mode_changes_and_links_to_all(admin_client, alice, alice_session):
    for number in range(1, 26):
        set_session_mode(
            catalog=published_catalog(),
            session_id=alice_session.pk,
            mode=get_mode("general"),
            reason=f"Change {number}.",
            user=alice,
        )
    content = admin_client.get(change_url(alice_session)).content.decode()
    shown = [int(number) for number in re.findall(r"<td>Change (\d+)\.</td>", content)]
    assert shown == list(range(25, 5, -1))
    link = re.search(r'<a href="([^"]+)">All 25 mode changes of this session</a>', content).group(1)
    assert link == f"{reverse('admin:sessions_app_modechange_changelist')}?session__id__exact={alice_session.pk}"


def test_the_link_lists_that_sessions_mode_changes_newest_first_naming_it(admin_client, changed_session, bob_session):
    set_session_mode(
        catalog=published_catalog(),
        session_id=bob_session.pk,
        mode=get_mode("ddr_authoring"),
        reason="Bob's change.",
        user=bob_session.owner,
    )
    changelist = reverse("admin:sessions_app_modechange_changelist")
    response = admin_client.get(changelist, {"session__id__exact": str(changed_session.pk)})
    assert response.status_code == 200
    assert [change.reason for change in response.context["cl"].result_list] == [
        "Reason two: a workflow.",
        "Reason one: write a DDR.",
    ]
    content = response.content.decode()
    assert 'class="selected"' in content and "Alice&#x27;s session</a>" in content  # the filter, chosen
    assert "Clear all filters" in content


def test_a_mode_change_list_for_a_malformed_session_id_is_the_admins_error_page(admin_client, changed_session):
    changelist = reverse("admin:sessions_app_modechange_changelist")
    response = admin_client.get(changelist, {"session__id__exact": "x"})
    assert (response.status_code, response["Location"]) == (302, f"{changelist}?e=1")


def test_the_session_page_shows_no_form_for_the_mode_changes(admin_client, changed_session):
    content = admin_client.get(change_url(changed_session)).content.decode()
    assert "mode_changes-TOTAL_FORMS" not in content
    assert 'name="reason"' not in content


def test_saving_a_session_in_the_admin_cannot_alter_its_mode_or_history(admin_client, changed_session):
    mode_before = AgentSession.objects.get(pk=changed_session.pk).mode_id
    response = admin_client.post(
        change_url(changed_session),
        {
            "title": "Renamed by staff",
            "mode": GENERAL_ID,
            "mode_changes-TOTAL_FORMS": "1",
            "mode_changes-INITIAL_FORMS": "0",
            "mode_changes-0-reason": "Forged",
            "mode_changes-0-from_mode": GENERAL_ID,
            "mode_changes-0-to_mode": GENERAL_ID,
        },
    )
    # Saved (the title is the one field staff may edit), and back to the list.
    assert (response.status_code, response["Location"]) == (302, reverse("admin:sessions_app_agentsession_changelist"))
    session = AgentSession.objects.get(pk=changed_session.pk)
    assert (session.title, session.mode_id) == ("Renamed by staff", mode_before)
    assert list(ModeChange.objects.order_by("id").values_list("reason", flat=True)) == [
        "Reason one: write a DDR.",
        "Reason two: a workflow.",
    ]


def test_sessions_cannot_be_added_in_the_admin(admin_client):
    response = admin_client.get(reverse("admin:sessions_app_agentsession_add"))
    assert response.status_code == 403


def test_mode_change_add_page_is_forbidden(admin_client):
    assert admin_client.get(reverse("admin:sessions_app_modechange_add")).status_code == 403
    assert admin_client.post(reverse("admin:sessions_app_modechange_add"), {"reason": "Forged"}).status_code == 403
    assert ModeChange.objects.count() == 0


def test_mode_change_delete_is_refused_and_the_row_stays(admin_client, changed_session):
    change = ModeChange.objects.order_by("id").first()
    url = reverse("admin:sessions_app_modechange_delete", args=[change.pk])
    response = admin_client.post(url, {"post": "yes"})
    assert response.status_code == 403
    assert ModeChange.objects.filter(pk=change.pk).exists()
    assert ModeChange.objects.count() == 2


def test_mode_change_bulk_delete_action_is_not_offered(admin_client, changed_session):
    changelist = reverse("admin:sessions_app_modechange_changelist")
    response = admin_client.get(changelist)
    assert response.status_code == 200
    assert "delete_selected" not in response.content.decode()
    admin_client.post(
        changelist,
        {"action": "delete_selected", "_selected_action": list(ModeChange.objects.values_list("pk", flat=True)), "post": "yes"},
    )
    assert ModeChange.objects.count() == 2


def test_mode_change_change_page_is_view_only_and_a_post_changes_nothing(admin_client, changed_session):
    change = ModeChange.objects.order_by("id").first()
    url = reverse("admin:sessions_app_modechange_change", args=[change.pk])
    page = admin_client.get(url)
    assert page.status_code == 200
    assert "Reason one: write a DDR." in page.content.decode()
    assert 'name="reason"' not in page.content.decode()

    response = admin_client.post(url, {"reason": "Forged", "from_mode": GENERAL_ID, "to_mode": GENERAL_ID})
    assert response.status_code == 403
    change.refresh_from_db()
    assert change.reason == "Reason one: write a DDR."


# --- Nothing the audit names can be deleted: its rows would be erased or blanked -------------------------


def delete_url(model, pk):
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_delete", args=[pk])


def audit_rows():
    return list(ModeChange.objects.order_by("id").values())


def refusal_page(response):
    """The status, heading and listed objects of the admin's page for a delete it refuses."""
    content = response.content.decode()
    listed = re.search(r'<ul id="deleted-objects">(.*?)</ul>', content, re.S)
    return (
        response.status_code,
        re.search(r"<h1>(.*?)</h1>", content).group(1),
        re.findall(r"<li>(.*?)</li>", listed.group(1)) if listed else [],
    )


def assert_delete_refused(client, model, pk, heading):
    """
    The admin refuses the delete with a page (200, as Django answers a delete it will not do) naming the mode
    change that stands in the way; the row and the audit stay as they were.
    """
    before = audit_rows()
    response = client.post(delete_url(model, pk), {"post": "yes"})
    assert refusal_page(response) == (200, heading, ["mode change"])
    assert model.objects.filter(pk=pk).exists()
    assert audit_rows() == before


def test_deleting_a_session_with_mode_changes_is_refused_and_its_audit_stays(admin_client, changed_session):
    assert_delete_refused(admin_client, AgentSession, changed_session.pk, "Cannot delete agent session")


def test_deleting_a_branch_session_is_refused_and_the_parents_audit_keeps_it(admin_client, alice, alice_session):
    change = set_session_mode(
        catalog=published_catalog(),
        session_id=alice_session.pk, mode=get_mode("ddr_authoring"), reason="Branch.", user=alice, branch=True
    )
    assert_delete_refused(admin_client, AgentSession, change.branch_session_id, "Cannot delete agent session")


def test_deleting_an_organization_named_by_the_audit_is_refused(admin_client, alice, alice_org, alice_session):
    set_session_mode(
        catalog=published_catalog(),
        session_id=alice_session.pk,
        mode=get_mode("ddr_authoring"),
        reason="R.",
        user=alice,
    )
    assert_delete_refused(admin_client, type(alice_org), alice_org.pk, "Cannot delete organization")


def test_deleting_a_user_who_changed_modes_is_refused(admin_client, alice, changed_session):
    assert_delete_refused(admin_client, type(alice), alice.pk, "Cannot delete user")


def test_deleting_a_user_named_as_changed_by_on_someone_elses_session_is_refused(admin_client, bob, changed_session):
    # Today only owners change their sessions' modes; the audit must keep who did it even if that changes.
    ModeChange.objects.filter(session=changed_session).update(changed_by=bob)
    assert_delete_refused(admin_client, type(bob), bob.pk, "Cannot delete user")


def test_a_session_without_mode_changes_can_still_be_deleted(admin_client, alice_session):
    response = admin_client.post(delete_url(AgentSession, alice_session.pk), {"post": "yes"})
    assert response.status_code == 302
    assert not AgentSession.objects.filter(pk=alice_session.pk).exists()
