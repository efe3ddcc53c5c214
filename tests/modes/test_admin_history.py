"""
History in the admin, through the real forms: the catalog revisions are the one history. Each edit is one revision
by its user, listed on the History page of each mode or declared tool it changed, with the fields it changed; an admin
reverts a row to its state at an earlier revision, or restores a deleted one, by a POST that writes that state back
as a new revision, checked as an edit is; a write the catalog's rules refuse answers their words and changes nothing.
"""

import re
from html import escape, unescape

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from modes.catalog import build_system_prompt, published_catalog
from modes.models import AgentMode, ArchivedHistory, CatalogHead, CatalogRevision, DeclaredTool
from modes.releases import publish_revision

from ..conftest import through_the_services
from ..expected import DDR_ID, GENERAL_ID, WORKFLOW_ID
from .admin_forms import CHANGELIST, change_url, delete_url, form_data, loaded_revision, messages_of

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]

SEED_WHEN_TO_USE = "Use this mode for everyday Q&A, explanation, and lightweight assistance."
EDITED = "Use this mode for small talk only."
TOOL_CHANGELIST = reverse("admin:modes_declaredtool_changelist")
NO_SCHEMA = '{"type": "object", "properties": {}, "required": []}'


def history_url(object_id, model="agentmode"):
    return reverse(f"admin:modes_{model}_history", args=[object_id])


def revert_url(object_id, number, model="agentmode"):
    return reverse(f"admin:modes_{model}_revert", args=[object_id, number])


def revisions():
    """(number, summary, author) of every revision, newest first."""
    return [(revision.number, revision.summary, revision.created_by) for revision in CatalogRevision.objects.all()]


def latest() -> int:
    return CatalogHead.objects.get(pk=1).latest


def history(client, object_id, model="agentmode"):
    """The History page's rows: (revision, who, what it did, the fields it changed), newest first."""
    page = client.get(history_url(object_id, model))
    assert page.status_code == 200
    return [
        (change.revision.number, change.revision.created_by, change.change, change.fields)
        for change in page.context["changes"]
    ]


def deleted_rows_links(changelist_html) -> dict[str, str]:
    """The changelist's deleted rows: the history link of each, by the name it shows."""
    if 'id="deleted-rows"' not in changelist_html:
        return {}
    listed = changelist_html[changelist_html.index('id="deleted-rows"') :]
    return {name: unescape(url) for url, name in re.findall(r'<li><a href="([^"]+)">([^<]+)</a>', listed)}


def revert_buttons(history_html) -> dict[str, str]:
    """The History page's revert (or restore) forms: the URL each posts to, by revision number."""
    return {
        number: unescape(action)
        for number, action in re.findall(
            r'<th scope="row"><a [^>]*>(\d+)</a></th>.*?(?:<form method="post" action="([^"]+)">|</tr>)',
            history_html,
            re.S,
        )
        if action
    }


def edit_general(admin_client, **changes):
    general = AgentMode.objects.get(pk=GENERAL_ID)
    return admin_client.post(change_url(GENERAL_ID), form_data(general, **changes))


def seed_general():
    """general's portable fields as the seed (revision 1) has them."""
    [general] = [mode for mode in CatalogRevision.objects.get(number=1).catalog["modes"] if mode["id"] == GENERAL_ID]
    return general


def fields_of(mode):
    """The fields a revision records of a mode (its portable fields), as the mode has them."""
    return {name: getattr(mode, name) for name in seed_general()}


# --- Every change is one revision, listed on the History page of what it changed ---------------------------------


def test_an_edit_is_one_revision_by_its_user_listed_on_the_modes_history_with_the_fields_it_changed(
    admin_client, admin_user
):
    assert edit_general(admin_client, when_to_use=EDITED).status_code == 302

    assert revisions()[0] == (2, "mode general: when_to_use", admin_user)
    assert len(revisions()) == 2
    assert history(admin_client, GENERAL_ID) == [
        (2, admin_user, "changed", ("when_to_use",)),
        (1, None, "created", ()),  # the seed, written by the migrations
    ]
    text = admin_client.get(history_url(GENERAL_ID)).content.decode()
    assert "general changed: when_to_use" in text
    assert f"<td>{admin_user.username}</td>" in text
    assert escape(revert_url(GENERAL_ID, 1)) in text  # the newest revision is its state now: nothing to revert to
    assert escape(revert_url(GENERAL_ID, 2)) not in text and "its state now" in text
    assert history(admin_client, DDR_ID) == [(1, None, "created", ())]  # not changed by it


def test_saving_the_form_unchanged_adds_no_revision(admin_client):
    assert edit_general(admin_client).status_code == 302
    assert [number for number, *_ in revisions()] == [1]
    assert [number for number, *_ in history(admin_client, GENERAL_ID)] == [1]


def test_reordering_on_the_list_is_one_revision(admin_client, admin_user):
    response = admin_client.post(
        CHANGELIST,
        {
            "form-TOTAL_FORMS": "3",
            "form-INITIAL_FORMS": "3",
            "form-0-id": GENERAL_ID,
            "form-0-position": "1",
            "form-1-id": DDR_ID,
            "form-1-position": "3",
            "form-2-id": WORKFLOW_ID,
            "form-2-position": "2",
            "_save": "Save",
        },
    )
    assert response.status_code == 302
    assert revisions()[0] == (2, "mode workflow_authoring: position; mode ddr_authoring: position", admin_user)
    assert len(revisions()) == 2
    for pk in (DDR_ID, WORKFLOW_ID):
        assert history(admin_client, pk)[0] == (2, admin_user, "changed", ("position",))
    assert len(history(admin_client, GENERAL_ID)) == 1


def test_making_a_mode_the_default_is_one_revision_in_both_histories(admin_client, admin_user):
    admin_client.post(CHANGELIST, {"action": "make_default", "_selected_action": [DDR_ID], "index": 0})

    assert revisions()[0] == (2, "mode general: is_default; mode ddr_authoring: is_default", admin_user)
    assert len(revisions()) == 2
    for pk in (GENERAL_ID, DDR_ID):
        assert history(admin_client, pk)[0] == (2, admin_user, "changed", ("is_default",))
    assert published_catalog().default.key == "ddr_authoring"


# --- Revert ------------------------------------------------------------------------------------------------------


def test_a_revert_writes_the_old_values_back_as_a_new_revision_and_the_prompt_follows(admin_client, admin_user):
    edit_general(admin_client, when_to_use=EDITED, mode_instructions="Be brief.")
    assert f"- general: {EDITED}" in build_system_prompt("general")

    response = admin_client.post(revert_url(GENERAL_ID, 1), follow=True)

    assert response.redirect_chain == [(history_url(GENERAL_ID), 302)]
    assert messages_of(response)[-1] == "Reverted to its state at revision 1: revision 3."
    assert fields_of(AgentMode.objects.get(pk=GENERAL_ID)) == seed_general()
    assert f"- general: {SEED_WHEN_TO_USE}" in build_system_prompt("general")  # published at once: no review asked
    assert revisions()[0] == (3, "mode general: when_to_use, mode_instructions", admin_user)
    assert CatalogRevision.objects.get(number=3).catalog == CatalogRevision.objects.get(number=1).catalog
    assert history(admin_client, GENERAL_ID)[0] == (3, admin_user, "changed", ("when_to_use", "mode_instructions"))


def test_a_revert_writes_back_only_that_mode(admin_client, admin_user, custom_mode):
    edit_general(admin_client, when_to_use=EDITED)
    edited = latest()
    admin_client.post(change_url(custom_mode.pk), form_data(custom_mode, display_name="Research, renamed"))

    assert admin_client.post(revert_url(GENERAL_ID, edited - 1)).status_code == 302

    assert revisions()[0] == (edited + 2, "mode general: when_to_use", admin_user)
    catalog = published_catalog()
    assert (catalog.by_key["general"].when_to_use, catalog.by_key["research"].display_name) == (
        SEED_WHEN_TO_USE, "Research, renamed"
    )


def test_under_review_a_revert_is_pending_and_the_prompt_follows_once_it_is_published(
    admin_client, admin_user, settings
):
    edit_general(admin_client, when_to_use=EDITED)
    settings.CATALOG_APPROVALS = 1

    assert admin_client.post(revert_url(GENERAL_ID, 1)).status_code == 302

    assert AgentMode.objects.get(pk=GENERAL_ID).when_to_use == SEED_WHEN_TO_USE
    assert CatalogHead.objects.get(pk=1).published == 2
    assert f"- general: {EDITED}" in build_system_prompt("general")  # agents keep the published revision
    publish_revision(number=3, user=admin_user)  # a superuser may publish unreviewed
    assert f"- general: {SEED_WHEN_TO_USE}" in build_system_prompt("general")


def test_reverting_to_the_state_the_mode_is_in_adds_no_revision(admin_client):
    response = admin_client.post(revert_url(GENERAL_ID, 1), follow=True)
    assert messages_of(response) == [
        "Reverted to its state at revision 1: no new revision: it was in that state already."
    ]
    assert len(revisions()) == 1


def test_a_revert_to_when_a_mode_was_the_default_says_that_the_default_stays_where_it_is(admin_client):
    for mode in (DDR_ID, GENERAL_ID):  # revision 2: ddr_authoring is the default; revision 3: general again
        admin_client.post(CHANGELIST, {"action": "make_default", "_selected_action": [mode], "index": 0})
    assert history(admin_client, DDR_ID)[1][2:] == ("changed", ("is_default",))

    response = admin_client.post(revert_url(DDR_ID, 2), follow=True)

    assert messages_of(response) == [
        "Reverted to its state at revision 2: no new revision: it was in that state already.",
        "The default mode is not reverted with it: 'ddr_authoring' was the default mode at revision 2 and is not "
        "now. The action 'Make the selected mode the default' moves the default.",
    ]
    assert published_catalog().default.key == "general"

    response = admin_client.post(revert_url(GENERAL_ID, 2), follow=True)

    assert messages_of(response)[1:] == [
        "The default mode is not reverted with it: 'general' was not the default mode at revision 2 and is now. "
        "The action 'Make the selected mode the default' moves the default."
    ]
    assert len(revisions()) == 3


def test_a_revert_is_a_post(admin_client):
    edit_general(admin_client, when_to_use=EDITED)
    assert admin_client.get(revert_url(GENERAL_ID, 1)).status_code == 405
    assert AgentMode.objects.get(pk=GENERAL_ID).when_to_use == EDITED
    assert len(revisions()) == 2


def test_a_revert_to_a_revision_the_mode_was_not_in_changes_nothing_and_says_so(admin_client, custom_mode):
    response = admin_client.post(revert_url(custom_mode.pk, 1), follow=True)
    assert messages_of(response) == [f"Not reverted: Revision 1 has no agent mode {custom_mode.pk!r}."]
    assert len(revisions()) == 2


@pytest.mark.parametrize("number", [3, 2**31, 2**63])  # the next one, past an integer column, past a 64-bit one
def test_a_revert_to_a_revision_that_does_not_exist_changes_nothing_and_says_so(admin_client, custom_mode, number):
    response = admin_client.post(revert_url(custom_mode.pk, number), follow=True)
    assert messages_of(response) == [f"Not reverted: There is no catalog revision {number}; revisions run from 1 to 2."]
    assert AgentMode.objects.get(pk=custom_mode.pk).when_to_use == custom_mode.when_to_use
    assert len(revisions()) == 2


@pytest.fixture
def review_and_notes(new_mode):
    """review, which may switch to general and notes; notes. Then review drops notes: one revision each."""
    notes = new_mode("notes")
    review = new_mode("review", switch_targets=["general", "notes"])
    review.switch_targets = ["general"]
    through_the_services(review.save)
    return review, notes


def test_a_revert_that_the_catalogs_rules_now_refuse_changes_nothing_and_says_why(
    admin_client, admin_user, review_and_notes
):
    review, notes = review_and_notes
    old_state = latest() - 1  # review's switch targets named notes
    admin_client.post(delete_url(notes.pk), {"post": "yes"})
    assert revisions()[0][:2] == (old_state + 2, "mode notes deleted")

    response = admin_client.post(revert_url(review.pk, old_state), follow=True)

    assert response.status_code == 200
    assert messages_of(response)[-1] == (
        "Not reverted: This would break the catalog's rules: modes.E010: Mode 'review' lists "
        "switch targets that name no mode: 'notes'."
    )
    assert AgentMode.objects.get(pk=review.pk).switch_targets == ["general"]
    assert latest() == old_state + 2


def test_a_revert_that_the_fields_rules_now_refuse_changes_nothing_and_says_why(admin_client, new_mode):
    research = new_mode("research")
    old_state = latest()
    research.key = "research_old"
    through_the_services(research.save)
    new_mode("research", when_to_use="Use this mode for newer research.")  # the key is taken again

    response = admin_client.post(revert_url(research.pk, old_state), follow=True)

    assert messages_of(response) == [
        f"Not reverted: Revision {old_state}'s state cannot be written back now: key: A mode with this key already "
        "exists."
    ]
    assert AgentMode.objects.get(pk=research.pk).key == "research_old"
    assert latest() == old_state + 2


# --- Deleted rows: listed, and restored from their history ---------------------------------------------------


def test_a_deleted_mode_is_listed_and_restored_from_its_history_as_a_new_revision(admin_client, admin_user):
    admin_client.post(reverse("admin:modes_agentmode_add"), form_data())
    research = AgentMode.objects.get(key="research")
    response = admin_client.post(delete_url(research.pk), {"post": "yes"})
    assert response.status_code == 302
    assert not AgentMode.objects.filter(key="research").exists()
    assert revisions()[0] == (3, "mode research deleted", admin_user)
    assert "research" not in published_catalog().by_key

    changelist = admin_client.get(CHANGELIST).content.decode()
    assert "Deleted agent modes" in changelist
    assert deleted_rows_links(changelist) == {"research": history_url(research.pk)}  # a deleted mode's URL: its id
    assert history(admin_client, research.pk) == [
        (3, admin_user, "deleted", ()),
        (2, admin_user, "created", ()),
    ]
    page = admin_client.get(history_url(research.pk)).content.decode()
    assert 'value="Restore this"' in page
    assert revert_buttons(page) == {"2": revert_url(research.pk, 2)}  # a deletion is not a state to go back to

    response = admin_client.post(revert_buttons(page)["2"], follow=True)

    assert messages_of(response)[-1] == "Reverted to its state at revision 2: revision 4."
    restored = AgentMode.objects.get(pk=research.pk)
    assert fields_of(restored) == fields_of(research)
    assert (restored.key, restored.when_to_use, restored.is_default) == ("research", research.when_to_use, False)
    assert revisions()[0] == (4, "mode research created", admin_user)
    assert published_catalog().by_key["research"].pk == research.pk
    assert deleted_rows_links(admin_client.get(CHANGELIST).content.decode()) == {}
    assert history(admin_client, research.pk)[0] == (4, admin_user, "created", ())


def test_a_row_no_revision_ever_held_has_no_history(admin_client):
    assert admin_client.get(history_url("0" * 32)).status_code == 404
    assert admin_client.get(history_url("agent_never_declared", "declaredtool")).status_code == 404


@pytest.mark.parametrize("object_id", ["\N{SUPERSCRIPT TWO}", "9" * 30])  # a digit no pk lookup takes; past bigint
def test_a_tool_url_of_digits_no_pk_can_be_is_a_404_and_reverts_nothing(admin_client, object_id):
    # '²' passed str.isdigit() into a pk lookup: a 500.
    assert admin_client.get(history_url(object_id, "declaredtool")).status_code == 404
    before = revisions()

    refused = admin_client.post(revert_url(object_id, 1, "declaredtool"))

    assert refused.status_code == 302
    assert [str(message) for message in get_messages(refused.wsgi_request)][-1].startswith("Not reverted: ")
    assert revisions() == before


def test_reverting_a_mode_needs_change_permission_and_restoring_one_needs_add_permission(
    staff_client, django_user_model, new_mode
):
    from django.contrib.auth.models import Permission

    research = new_mode("research")
    research_id, created = research.pk, latest()
    edited = new_mode("edited")
    edited.display_name = "Edited, renamed"
    through_the_services(edited.save)
    through_the_services(research.delete)

    client = staff_client("change_agentmode")
    assert client.post(revert_url(research_id, created)).status_code == 403  # restoring creates: add permission
    assert 'value="Restore this"' not in client.get(history_url(research_id)).content.decode()
    assert client.post(revert_url(edited.pk, latest() - 2)).status_code == 302
    assert AgentMode.objects.get(pk=edited.pk).display_name == "Edited"
    assert not AgentMode.objects.filter(pk=research_id).exists()

    user = django_user_model.objects.get(username="staff")
    user.user_permissions.remove(*user.user_permissions.filter(codename="change_agentmode"))
    assert client.post(revert_url(edited.pk, latest())).status_code == 403
    assert 'value="Revert to this"' not in client.get(history_url(edited.pk)).content.decode()
    user.user_permissions.add(*Permission.objects.filter(codename="add_agentmode"))
    assert client.post(revert_url(research_id, created)).status_code == 302
    assert AgentMode.objects.filter(pk=research_id).exists()


# --- Declared tools ----------------------------------------------------------------------------------------------


@pytest.fixture
def ddr_manager(db):
    return through_the_services(
        lambda: DeclaredTool.objects.create(name="agent_ddr_manager", description="Manages DDRs.")
    )


def test_a_declared_tools_edit_is_one_revision_on_its_history_page(admin_client, admin_user, ddr_manager):
    response = admin_client.post(
        reverse("admin:modes_declaredtool_change", args=[ddr_manager.pk]),
        {"name": ddr_manager.name, "description": "Manages DDR files.", "parameters": NO_SCHEMA},
    )

    assert response.status_code == 302
    assert revisions()[0] == (3, "tool agent_ddr_manager: description", admin_user)
    assert len(revisions()) == 3
    assert history(admin_client, ddr_manager.pk, "declaredtool") == [
        (3, admin_user, "changed", ("description",)),
        (2, None, "created", ()),
    ]
    assert published_catalog().tool("agent_ddr_manager").description == "Manages DDR files."


def test_a_deleted_tool_is_listed_and_restored_from_its_history_by_name(admin_client, admin_user, ddr_manager):
    response = admin_client.post(reverse("admin:modes_declaredtool_delete", args=[ddr_manager.pk]), {"post": "yes"})
    assert response.status_code == 302
    assert revisions()[0] == (3, "tool agent_ddr_manager deleted", admin_user)
    assert "agent_ddr_manager" not in published_catalog().client_tools

    # As a browser goes: the changelist's link, then the History page's Restore button.
    changelist = admin_client.get(TOOL_CHANGELIST).content.decode()
    assert "Deleted declared tools" in changelist
    link = deleted_rows_links(changelist)["agent_ddr_manager"]
    page = admin_client.get(link)
    assert page.status_code == 200, f"the deleted tool's history link {link} answers {page.status_code}"
    assert [(change.revision.number, change.change) for change in page.context["changes"]] == [
        (3, "deleted"), (2, "created")
    ]
    assert admin_client.get(history_url("agent_ddr_manager", "declaredtool")).context["changes"] == page.context[
        "changes"
    ]  # a deleted tool's history URL takes its name
    [restore] = revert_buttons(page.content.decode()).values()

    response = admin_client.post(restore, follow=True)

    assert response.status_code == 200, (restore, response.redirect_chain)
    assert messages_of(response)[-1] == "Reverted to its state at revision 2: revision 4."
    tool = DeclaredTool.objects.get(name="agent_ddr_manager")
    assert (tool.description, tool.parameters, tool.read_only) == (
        ddr_manager.description, ddr_manager.parameters, ddr_manager.read_only
    )
    assert revisions()[0] == (4, "tool agent_ddr_manager created", admin_user)
    assert published_catalog().tool("agent_ddr_manager").description == "Manages DDRs."
    assert deleted_rows_links(admin_client.get(TOOL_CHANGELIST).content.decode()) == {}
    assert history(admin_client, tool.pk, "declaredtool")[0] == (4, admin_user, "created", ())


def test_a_deleted_tool_is_restored_by_a_post_to_the_revert_url_that_names_it(admin_client, admin_user, ddr_manager):
    through_the_services(ddr_manager.delete)

    response = admin_client.post(revert_url("agent_ddr_manager", 2, "declaredtool"))

    assert response.status_code == 302
    assert DeclaredTool.objects.get(name="agent_ddr_manager").description == "Manages DDRs."
    assert revisions()[0] == (4, "tool agent_ddr_manager created", admin_user)



def test_a_deleted_tool_named_in_digits_is_restored_from_its_own_history_not_from_the_tool_with_that_pk(
    admin_client, admin_user, ddr_manager
):
    named_in_digits = through_the_services(
        lambda: DeclaredTool.objects.create(name=str(ddr_manager.pk), description="Named in digits.")
    )
    through_the_services(named_in_digits.delete)

    link = deleted_rows_links(admin_client.get(TOOL_CHANGELIST).content.decode())[str(ddr_manager.pk)]
    page = admin_client.get(link)
    assert [(change.revision.number, change.change) for change in page.context["changes"]] == [
        (4, "deleted"), (3, "created")
    ]
    [restore] = revert_buttons(page.content.decode()).values()

    response = admin_client.post(restore, follow=True)

    assert messages_of(response)[-1] == "Reverted to its state at revision 3: revision 5."
    assert DeclaredTool.objects.get(name=str(ddr_manager.pk)).description == "Named in digits."
    assert DeclaredTool.objects.get(pk=ddr_manager.pk).description == "Manages DDRs."


def test_a_form_opened_before_another_admins_save_is_refused_and_their_change_stays(
    admin_client, admin_user, django_user_model, client
):
    general = AgentMode.objects.get(pk=GENERAL_ID)
    opened = loaded_revision(admin_client, change_url(GENERAL_ID))  # admin opens the form, then boss saves first
    boss = django_user_model.objects.create_superuser(username="boss", password="x")
    client.force_login(boss)
    bosses = {**form_data(general, description="By boss."), **loaded_revision(client, change_url(GENERAL_ID))}
    assert client.post(change_url(GENERAL_ID), bosses).status_code == 302

    mine = {**form_data(general, when_to_use="Use it now."), **opened}
    response = admin_client.post(change_url(GENERAL_ID), mine, follow=True)

    assert messages_of(response) == [
        "Nothing was changed: Mode 'general' was changed in revision 2 by boss after you opened this page. The page "
        "shows that change now: make yours again."
    ]
    general.refresh_from_db()
    assert (general.description, general.when_to_use) == ("By boss.", seed_general()["when_to_use"])
    assert latest() == 2
    reloaded = loaded_revision(admin_client, change_url(GENERAL_ID))
    again = {**form_data(general, when_to_use="Use this mode for anything."), **reloaded}
    assert admin_client.post(change_url(GENERAL_ID), again).status_code == 302  # reloaded: saved
    assert revisions()[0] == (3, "mode general: when_to_use", admin_user)


def test_a_tools_form_opened_before_another_save_is_refused_too(admin_client, ddr_manager):
    url = reverse("admin:modes_declaredtool_change", args=[ddr_manager.pk])
    opened = loaded_revision(admin_client, url)
    through_the_services(lambda: DeclaredTool.objects.filter(pk=ddr_manager.pk).update(description="Elsewhere."))

    response = admin_client.post(
        url, {"name": ddr_manager.name, "description": "Here.", "parameters": NO_SCHEMA, **opened}, follow=True
    )

    assert "Declared tool 'agent_ddr_manager' was changed in revision 3" in messages_of(response)[0]
    assert DeclaredTool.objects.get(pk=ddr_manager.pk).description == "Elsewhere."


@pytest.mark.parametrize("loaded", ["", "abc", "0", "99"])  # 99: no revision yet, which would judge nothing
def test_a_form_that_says_no_revision_it_was_opened_at_is_refused(admin_client, loaded):
    general = AgentMode.objects.get(pk=GENERAL_ID)
    mine = {**form_data(general, when_to_use="Use it now."), "_loaded_revision": loaded}
    response = admin_client.post(change_url(GENERAL_ID), mine, follow=True)
    assert messages_of(response) == ["Nothing was changed: The page says no revision it was opened at; reload it."]
    assert latest() == 1

# --- A write the catalog's rules refuse, past what the form checks ------------------------------------------


@pytest.fixture
def notes_is_a_target(new_mode):
    """notes, and review, which may switch only to general and notes: deleting notes would leave review a target
    that names no mode (modes.E010), which no form checks."""
    return new_mode("notes"), new_mode("review", switch_targets=["general", "notes"])


E010_NOTES = (
    "Nothing was changed: This would break the catalog's rules: modes.E010: Mode 'review' "
    "lists switch targets that name no mode: 'notes'."
)


def test_deleting_a_mode_another_one_switches_to_is_refused_in_the_rules_words_and_changes_nothing(
    admin_client, notes_is_a_target
):
    notes, review = notes_is_a_target
    before = latest()

    response = admin_client.post(delete_url(notes.pk), {"post": "yes"}, follow=True)

    assert response.status_code == 200
    assert messages_of(response) == [E010_NOTES]
    assert AgentMode.objects.filter(pk=notes.pk).exists()
    assert latest() == before
    assert "notes" in published_catalog().by_key
    assert "Deleted agent modes" not in admin_client.get(CHANGELIST).content.decode()


def test_bulk_deleting_a_mode_another_one_switches_to_is_refused_in_the_rules_words(admin_client, notes_is_a_target):
    notes, review = notes_is_a_target
    before = latest()

    response = admin_client.post(
        CHANGELIST, {"action": "delete_selected", "_selected_action": [notes.pk], "index": 0, "post": "yes"},
        follow=True,
    )

    assert response.status_code == 200
    assert messages_of(response) == [E010_NOTES]
    assert AgentMode.objects.filter(pk=notes.pk).exists()
    assert latest() == before


def test_making_a_mode_the_model_may_not_enter_the_default_is_refused_in_the_rules_words(admin_client, new_mode):
    deploy = new_mode("deploy", llm_can_enter=False)
    before = latest()

    response = admin_client.post(
        CHANGELIST, {"action": "make_default", "_selected_action": [deploy.pk], "index": 0}, follow=True
    )

    assert response.status_code == 200
    assert messages_of(response) == [
        "Nothing was changed: This would break the catalog's rules: modes.E010: The default "
        "mode 'deploy' cannot be entered by the model (llm_can_enter is off). modes.E010: From 'general', "
        "'ddr_authoring', 'workflow_authoring' the model cannot reach the default mode 'deploy' through switches it "
        "may make."
    ]
    assert list(AgentMode.objects.filter(is_default=True).values_list("key", flat=True)) == ["general"]
    assert latest() == before


# --- Revisions and archived history are read-only ------------------------------------------------------------


def test_revisions_are_listed_in_the_admin_and_cannot_be_changed(admin_client):
    edit_general(admin_client, when_to_use=EDITED)
    page = admin_client.get(reverse("admin:modes_catalogrevision_changelist"))
    assert page.status_code == 200
    assert "mode general: when_to_use" in page.content.decode()
    assert admin_client.get(reverse("admin:modes_catalogrevision_add")).status_code == 403
    detail = admin_client.post(reverse("admin:modes_catalogrevision_change", args=[2]), {"summary": "Changed."})
    assert detail.status_code == 403
    assert CatalogRevision.objects.get(number=2).summary == "mode general: when_to_use"


def test_a_catalog_revision_is_shown_but_cannot_be_added_changed_or_deleted(admin_client):
    seed = CatalogRevision.objects.get(number=1)
    page = admin_client.get(reverse("admin:modes_catalogrevision_change", args=[1]))
    assert page.status_code == 200
    assert 'name="summary"' not in page.content.decode()

    answers = [
        admin_client.get(reverse("admin:modes_catalogrevision_add")).status_code,
        admin_client.post(reverse("admin:modes_catalogrevision_change", args=[1]), {"summary": "Forged"}).status_code,
        admin_client.post(reverse("admin:modes_catalogrevision_delete", args=[1]), {"post": "yes"}).status_code,
    ]
    assert answers == [403, 403, 403]
    assert [(revision.number, revision.summary, revision.catalog) for revision in CatalogRevision.objects.all()] == [
        (1, seed.summary, seed.catalog)
    ]


def test_archived_history_is_shown_but_cannot_be_added_changed_or_deleted(admin_client):
    from django.utils import timezone

    record = ArchivedHistory.objects.create(
        kind="mode", identity=GENERAL_ID, name="general", change="changed", content={"key": "general"},
        changed_at=timezone.now(),
    )
    assert admin_client.get(reverse("admin:modes_archivedhistory_changelist")).status_code == 200
    assert admin_client.get(reverse("admin:modes_archivedhistory_change", args=[record.pk])).status_code == 200
    answers = [
        admin_client.get(reverse("admin:modes_archivedhistory_add")).status_code,
        admin_client.post(
            reverse("admin:modes_archivedhistory_change", args=[record.pk]), {"name": "forged"}
        ).status_code,
        admin_client.post(reverse("admin:modes_archivedhistory_delete", args=[record.pk]), {"post": "yes"}).status_code,
    ]
    assert answers == [403, 403, 403]
    assert ArchivedHistory.objects.get().name == "general"
