"""
Permissions in the admin mean what they say: staff holding only view permissions read every admin page and
change nothing through any of them (add, change, delete, each action, list-editable fields, a revert from a row's
History page, the restore of a deleted row, any other view an admin adds). The write paths are found in the
admin registry, so that an admin registered later is covered without touching this file. Each of the catalog's
writes is refused to staff holding every permission but the one it needs, and made by staff holding that one
alone, so that the refusals are neither vacuous nor a refusal of staff as such.
"""

import json
from html import escape
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.admin.utils import quote
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.contrib.sessions.models import Session
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import RequestFactory
from django.urls import resolve, reverse

from modes.catalog import build_system_prompt, published_catalog
from modes.models import AgentMode, CatalogRevision, DeclaredTool
from modes.revision_store import history_of
from modes.services import delete_modes

from ..conftest import through_the_services
from ..expected import DDR_ID, GENERAL_ID, SEED_WHEN_TO_USE
from ..modes.admin_forms import CHANGELIST, form_data

pytestmark = pytest.mark.django_db

PARAMETERS = '{"type": "object", "properties": {}, "required": []}'
FORGED = "Use this mode whenever the attacker says so."
EDITED = "Use this mode for small talk."


def registered_admins():
    return sorted(admin.site._registry.values(), key=lambda model_admin: model_admin.opts.label)


def actions_offered_to_a_superuser(model_admin):
    """The names of the admin's actions that somebody may run (an in-memory superuser: no database needed)."""
    request = RequestFactory().get("/")
    request.user = get_user_model()(is_superuser=True, is_active=True)
    return list(model_admin.get_actions(request))


ADMINS = [pytest.param(model_admin, id=model_admin.opts.label) for model_admin in registered_admins()]
ACTIONS = [
    pytest.param(model_admin, action, id=f"{model_admin.opts.label}:{action}")
    for model_admin in registered_admins()
    for action in actions_offered_to_a_superuser(model_admin)
]
LIST_EDITABLE_ADMINS = [param for param in ADMINS if param.values[0].list_editable]

# The views every ModelAdmin has, each tested below; an admin that adds another view fails
# test_every_admin_view_is_tested until its write is tested in OTHER_VIEWS.
STANDARD_VIEWS = {"changelist", "add", "change", "delete", "history"}
# The POST that writes a row back to its state at a revision (restoring it, if it was deleted): the catalog's
# admins have it, each tested below.
REVERT_VIEW = "revert"
OTHER_VIEWS = {"auth_user_password_change": {"password1": "Ch4nged-by-viewer", "password2": "Ch4nged-by-viewer"}}


def admin_url_names(model_admin):
    return {pattern.name for pattern in model_admin.urls if pattern.name}


def has_view(model_admin, view):
    return f"{model_admin.opts.app_label}_{model_admin.opts.model_name}_{view}" in admin_url_names(model_admin)


REVERTING_ADMINS = [param for param in ADMINS if has_view(param.values[0], REVERT_VIEW)]


def admin_url(model_admin, view, *args):
    return reverse(f"admin:{model_admin.opts.app_label}_{model_admin.opts.model_name}_{view}", args=args)


def database_rows():
    """Every row of every table but the login sessions (the test client's own), to compare before and after."""
    return {
        model._meta.label: list(model._base_manager.order_by("pk").values())
        for model in apps.get_models()
        if model is not Session
    }


def first_listed(client, model_admin):
    """The first row of the admin's list as the client sees it, and its id as the admin's URLs take it."""
    changelist = client.get(admin_url(model_admin, "changelist"))
    assert changelist.status_code == 200
    rows = changelist.context["cl"]
    assert rows.result_list, f"admin_rows has no {model_admin.opts.label}: give it one, so its writes are tested"
    row = rows.result_list[0]
    return row, resolve(rows.url_for_result(row)).kwargs["object_id"]


def first_deleted(client, model_admin):
    """The first deleted row the admin's list offers to restore: the id its history takes, and its last revision
    before it was deleted (the state a restore writes back)."""
    changelist = client.get(admin_url(model_admin, "changelist"))
    deleted = changelist.context["deleted_rows"]
    assert deleted, f"admin_rows deletes no {model_admin.opts.label}: delete one, so its restore is tested"
    object_id, _ = deleted[0]
    assert admin_url(model_admin, "history", quote(object_id)) in changelist.content.decode()  # the list links to it
    return object_id, kept_state(model_admin, object_id)


def kept_state(model_admin, object_id) -> int:
    """The newest revision that holds the row of this URL (not one that deleted it)."""
    changes = history_of(model_admin.kind, model_admin.identity_of(object_id))
    return next(change.revision.number for change in changes if change.change != "deleted")


def action_data(action, pk):
    """The changelist's POST that runs an action on one row (and confirms it, for a deletion)."""
    return {"action": action, "_selected_action": [str(pk)], "index": "0", "post": "yes"}


def list_editable_data(pk_name, pk, **fields):
    """The changelist's POST that saves the list-editable fields of one row."""
    data = {f"form-0-{name}": value for name, value in {pk_name: str(pk), **fields}.items()}
    return {"form-TOTAL_FORMS": "1", "form-INITIAL_FORMS": "1", **data, "_save": "Save"}


def served_catalog(client):
    response = client.get("/api/system-prompt/")
    assert response.status_code == 200
    return response.content


MODES_ADMIN = admin.site._registry[AgentMode]
TOOLS_ADMIN = admin.site._registry[DeclaredTool]


def edit_general_past_revision_1():
    """general's when-to-use edited through the services: revision 2, published."""
    through_the_services(lambda: AgentMode.objects.filter(pk=GENERAL_ID).update(when_to_use=EDITED))


# --- The reported hole: the history's form rewrote the default mode for a view-only user -----------------


def test_a_view_only_user_cannot_rewrite_the_default_mode_through_its_history(view_only_client, alice_client):
    general = AgentMode.objects.get(pk=GENERAL_ID)
    edit_general_past_revision_1()
    catalog_before, before = served_catalog(alice_client), database_rows()

    # A forged state posted to the History page, which takes no POST, is refused (405) and writes nothing; the one
    # write the page leads to, a revert to revision 1, is refused.
    forged = view_only_client.post(admin_url(MODES_ADMIN, "history", GENERAL_ID), form_data(general, when_to_use=FORGED))
    assert forged.status_code == 405
    assert view_only_client.post(admin_url(MODES_ADMIN, REVERT_VIEW, GENERAL_ID, 1)).status_code == 403

    assert database_rows() == before
    assert served_catalog(alice_client) == catalog_before
    assert FORGED not in build_system_prompt("general")
    assert AgentMode.objects.get(pk=GENERAL_ID).when_to_use == EDITED


def test_a_view_only_user_reads_a_rows_history_and_its_earlier_state_as_text_without_a_revert_button(
    view_only_client,
):
    seed_when_to_use = AgentMode.objects.get(pk=GENERAL_ID).when_to_use
    edit_general_past_revision_1()
    page = view_only_client.get(admin_url(MODES_ADMIN, "history", GENERAL_ID))
    assert page.status_code == 200
    assert [(change.revision.number, change.change, change.fields) for change in page.context["changes"]] == [
        (2, "changed", ("when_to_use",)),
        (1, "created", ()),
    ]
    content = page.content.decode()
    assert page.context["may_revert"] is False
    assert "<form" not in content.split('id="change-history"')[1]
    assert admin_url(MODES_ADMIN, REVERT_VIEW, GENERAL_ID, 1) not in content
    # Each revision links to its page, where the catalog it recorded is read-only text.
    revision_1 = reverse("admin:modes_catalogrevision_change", args=[1])
    assert f'href="{revision_1}"' in content
    earlier = view_only_client.get(revision_1)
    assert earlier.status_code == 200
    assert escape(json.dumps(seed_when_to_use, ensure_ascii=False)) in earlier.content.decode()
    assert 'name="catalog"' not in earlier.content.decode()


# --- Every write path of every admin, refused to view-only staff ---------------------------------------


@pytest.mark.parametrize("model_admin", ADMINS)
def test_a_view_only_user_reads_every_admins_list_and_pages(view_only_client, admin_rows, model_admin):
    row, object_id = first_listed(view_only_client, model_admin)
    assert view_only_client.get(admin_url(model_admin, "change", object_id)).status_code == 200
    assert view_only_client.get(admin_url(model_admin, "history", object_id)).status_code == 200


@pytest.mark.parametrize("model_admin", ADMINS)
def test_a_view_only_user_cannot_add(view_only_client, admin_rows, model_admin):
    before = database_rows()
    assert view_only_client.post(admin_url(model_admin, "add"), {}).status_code == 403
    assert database_rows() == before


@pytest.mark.parametrize("model_admin", ADMINS)
def test_a_view_only_user_cannot_change(view_only_client, admin_rows, model_admin):
    row, object_id = first_listed(view_only_client, model_admin)
    before = database_rows()
    assert view_only_client.post(admin_url(model_admin, "change", object_id), {}).status_code == 403
    assert database_rows() == before


@pytest.mark.parametrize("model_admin", ADMINS)
def test_a_view_only_user_cannot_delete(view_only_client, admin_rows, model_admin):
    row, object_id = first_listed(view_only_client, model_admin)
    before = database_rows()
    assert view_only_client.post(admin_url(model_admin, "delete", object_id), {"post": "yes"}).status_code == 403
    assert database_rows() == before


@pytest.mark.parametrize(("model_admin", "action"), ACTIONS)
def test_a_view_only_user_can_run_no_action(view_only_client, admin_rows, model_admin, action):
    row, object_id = first_listed(view_only_client, model_admin)
    changelist = admin_url(model_admin, "changelist")
    assert f'value="{action}"' not in view_only_client.get(changelist).content.decode()  # not offered
    before = database_rows()
    response = view_only_client.post(changelist, action_data(action, row.pk), follow=True)
    assert response.status_code == 200
    assert [str(message) for message in response.context["messages"]] in ([], ["No action selected."])
    assert database_rows() == before


@pytest.mark.parametrize("model_admin", LIST_EDITABLE_ADMINS)
def test_a_view_only_user_cannot_save_list_editable_fields(view_only_client, admin_rows, model_admin):
    row, object_id = first_listed(view_only_client, model_admin)
    data = list_editable_data(model_admin.opts.pk.name, row.pk, **dict.fromkeys(model_admin.list_editable, "1"))
    before = database_rows()
    assert view_only_client.post(admin_url(model_admin, "changelist"), data).status_code == 403
    assert database_rows() == before


@pytest.mark.parametrize("model_admin", REVERTING_ADMINS)
def test_a_view_only_user_cannot_revert_a_row_from_its_history(view_only_client, admin_rows, model_admin):
    row, object_id = first_listed(view_only_client, model_admin)
    revert = admin_url(model_admin, REVERT_VIEW, object_id, kept_state(model_admin, object_id))
    page = view_only_client.get(admin_url(model_admin, "history", object_id))
    assert page.context["changes"] and revert not in page.content.decode()  # not offered
    before = database_rows()
    assert view_only_client.get(revert).status_code == 405  # a revert is a POST, whoever asks
    assert view_only_client.post(revert).status_code == 403
    assert database_rows() == before


@pytest.mark.parametrize("model_admin", REVERTING_ADMINS)
def test_a_view_only_user_cannot_restore_a_deleted_row(view_only_client, admin_rows, model_admin):
    object_id, number = first_deleted(view_only_client, model_admin)
    page = view_only_client.get(admin_url(model_admin, "history", object_id))  # the deleted row's history can be read
    assert page.status_code == 200 and page.context["object"] is None
    restore = admin_url(model_admin, REVERT_VIEW, object_id, number)
    assert restore not in page.content.decode()  # not offered
    before = database_rows()
    assert view_only_client.post(restore).status_code == 403
    assert database_rows() == before


@pytest.mark.parametrize("url_name", sorted(OTHER_VIEWS))
def test_a_view_only_user_cannot_post_an_admins_other_views(view_only_client, admin_rows, url_name):
    model_admin = next(model_admin for model_admin in registered_admins() if url_name in admin_url_names(model_admin))
    row, object_id = first_listed(view_only_client, model_admin)
    before = database_rows()
    response = view_only_client.post(reverse(f"admin:{url_name}", args=[object_id]), OTHER_VIEWS[url_name])
    assert response.status_code == 403
    assert database_rows() == before


# The import of coding agents' files: the add and change mode permissions, both (tests/modes/coding_agents too).
IMPORT_VIEW = "modes_agentmode_import"


def test_a_view_only_user_cannot_import_coding_agents_files(view_only_client):
    before = database_rows()
    upload = SimpleUploadedFile(".claude/agents/x.md", b"---\nname: x\ndescription: Use it for x.\n---\n\nDo x.\n")
    assert view_only_client.post(reverse(f"admin:{IMPORT_VIEW}"), {"files": [upload]}).status_code == 403
    assert database_rows() == before


# The export for a coding agent: a page to read, with the view permission (tests/modes/coding_agents too).
EXPORT_VIEW = "modes_agentmode_export"


def test_a_view_only_user_cannot_post_to_the_export_page(view_only_client):
    before = database_rows()
    assert view_only_client.post(reverse(f"admin:{EXPORT_VIEW}"), {"format": "roo"}).status_code == 405
    assert database_rows() == before


# The routing cases' import and export, as files (tests/modes/routing/test_admin.py too).
CASE_VIEWS = {"modes_routingcase_import", "modes_routingcase_export"}


def test_a_view_only_user_cannot_import_routing_cases_nor_post_to_their_export(view_only_client):
    before = database_rows()
    upload = SimpleUploadedFile("cases.jsonl", b'{"utterance": "Hi", "expected": "stay"}\n')
    assert view_only_client.post(reverse("admin:modes_routingcase_import"), {"file": upload}).status_code == 403
    assert view_only_client.post(reverse("admin:modes_routingcase_export", args=["csv"])).status_code == 405
    assert database_rows() == before


# The Catalog releases page and its actions, tested below; the actions are the release services' to refuse.
RELEASE_VIEWS = {"modes_catalogrevision_releases", "modes_catalogrevision_release_action"}


@pytest.mark.parametrize(
    "action, number",
    [("approve", 2), ("publish", 2), ("stage", 2), ("promote", 2), ("abort", 2), ("roll-back", 1), ("evaluate", 2)],
)
def test_a_view_only_user_cannot_approve_publish_stage_promote_abort_roll_back_or_evaluate(
    view_only_client, settings, action, number
):
    settings.CATALOG_APPROVALS = 1
    edit_general_past_revision_1()  # revision 2, pending review
    assert published_catalog().revision == 1
    before = database_rows()
    assert view_only_client.post(reverse("admin:modes_catalogrevision_releases")).status_code == 200
    page = reverse("admin:modes_catalogrevision_release_action", args=[number, action])
    assert view_only_client.get(page).status_code == 403  # it showed a page asking to confirm, with the button
    response = view_only_client.post(page, follow=True)
    assert "You need the permission modes." in response.content.decode()
    assert database_rows() == before


# The mode graph: a page to read, for staff who may view the modes and the mode changes (test_mode_graph_drawing).
GRAPH_VIEW = "sessions_app_mode_graph"


def test_a_view_only_user_cannot_post_to_the_mode_graph(view_only_client, admin_rows):
    before = database_rows()
    assert view_only_client.post(reverse(f"admin:{GRAPH_VIEW}")).status_code == 405
    assert database_rows() == before


@pytest.mark.parametrize("model_admin", ADMINS)
def test_every_admin_view_is_tested(model_admin):
    prefix = f"{model_admin.opts.app_label}_{model_admin.opts.model_name}_"
    tested_here = STANDARD_VIEWS | {REVERT_VIEW}  # the revert: by every admin of REVERTING_ADMINS
    untested = {name for name in admin_url_names(model_admin) if name.removeprefix(prefix) not in tested_here}
    tested = set(OTHER_VIEWS) | RELEASE_VIEWS | CASE_VIEWS | {GRAPH_VIEW, IMPORT_VIEW, EXPORT_VIEW}
    assert untested <= tested, f"test what a view-only user can POST to {untested - tested}"


def test_the_catalogs_admins_are_the_ones_that_revert():
    assert [param.values[0].model for param in REVERTING_ADMINS] == [AgentMode, DeclaredTool]


# --- Each catalog write: refused without its permission, made with it alone -------------------------------


@pytest.fixture
def catalog_rows(custom_mode, new_mode):
    """
    What each catalog write below acts on, each written through the services: a custom mode (research), general
    edited since revision 1, a mode deleted since (retired), a declared tool edited since it was declared
    (agent_ddr_manager), and a declared tool deleted since (agent_retired_tool).
    """
    edit_general_past_revision_1()
    retired = new_mode("retired")
    delete_modes(modes=[retired])
    tool = through_the_services(lambda: DeclaredTool.objects.create(name="agent_ddr_manager", description="DDRs."))
    declared = CatalogRevision.objects.first().number
    through_the_services(lambda: DeclaredTool.objects.filter(pk=tool.pk).update(description="Manages DDR files."))
    through_the_services(lambda: DeclaredTool.objects.create(name="agent_retired_tool", description="Retired."))
    retired_tool = CatalogRevision.objects.first().number
    through_the_services(lambda: DeclaredTool.objects.filter(name="agent_retired_tool").delete())
    return SimpleNamespace(
        research=custom_mode, retired=retired, retired_at=retired_at(retired.pk), tool=tool, declared=declared,
        retired_tool=retired_tool,
    )


def retired_at(mode_id) -> int:
    """The revision that created the mode (the state a restore writes back)."""
    return history_of("mode", mode_id)[-1].revision.number


def tool_form(tool, **fields):
    data = {"name": tool.name, "description": tool.description, "parameters": PARAMETERS}
    return {**data, **fields}


# name: (the permission it needs, the POST made, whether it was done)
CATALOG_WRITES = {
    "add a mode": (
        "add_agentmode",
        lambda client, rows: client.post(admin_url(MODES_ADMIN, "add"), form_data(key="fresh", display_name="Fresh")),
        lambda rows: AgentMode.objects.filter(key="fresh").exists(),
    ),
    "edit a mode": (
        "change_agentmode",
        lambda client, rows: client.post(
            admin_url(MODES_ADMIN, "change", DDR_ID),
            form_data(AgentMode.objects.get(pk=DDR_ID), display_name="Design records"),
        ),
        lambda rows: AgentMode.objects.get(pk=DDR_ID).display_name == "Design records",
    ),
    "delete a mode": (
        "delete_agentmode",
        lambda client, rows: client.post(admin_url(MODES_ADMIN, "delete", rows.research.pk), {"post": "yes"}),
        lambda rows: not AgentMode.objects.filter(pk=rows.research.pk).exists(),
    ),
    "make a mode the default": (
        "change_agentmode",
        lambda client, rows: client.post(CHANGELIST, action_data("make_default", DDR_ID)),
        lambda rows: AgentMode.objects.get(is_default=True).pk == DDR_ID,
    ),
    "delete modes from the list": (
        "delete_agentmode",
        lambda client, rows: client.post(CHANGELIST, action_data("delete_selected", rows.research.pk)),
        lambda rows: not AgentMode.objects.filter(pk=rows.research.pk).exists(),
    ),
    "reorder modes on the list": (
        "change_agentmode",
        lambda client, rows: client.post(CHANGELIST, list_editable_data("id", DDR_ID, position="7")),
        lambda rows: AgentMode.objects.get(pk=DDR_ID).position == 7,
    ),
    "revert a mode": (
        "change_agentmode",
        lambda client, rows: client.post(admin_url(MODES_ADMIN, REVERT_VIEW, GENERAL_ID, 1)),
        lambda rows: AgentMode.objects.get(pk=GENERAL_ID).when_to_use == dict(SEED_WHEN_TO_USE)["general"],
    ),
    "restore a deleted mode": (
        "add_agentmode",
        lambda client, rows: client.post(admin_url(MODES_ADMIN, REVERT_VIEW, rows.retired.pk, rows.retired_at)),
        lambda rows: AgentMode.objects.filter(pk=rows.retired.pk, key="retired").exists(),
    ),
    "add a declared tool": (
        "add_declaredtool",
        lambda client, rows: client.post(
            admin_url(TOOLS_ADMIN, "add"), {"name": "agent_fresh", "description": "Fresh.", "parameters": PARAMETERS}
        ),
        lambda rows: DeclaredTool.objects.filter(name="agent_fresh").exists(),
    ),
    "edit a declared tool": (
        "change_declaredtool",
        lambda client, rows: client.post(
            admin_url(TOOLS_ADMIN, "change", rows.tool.pk), tool_form(rows.tool, description="Opens DDRs.")
        ),
        lambda rows: DeclaredTool.objects.get(pk=rows.tool.pk).description == "Opens DDRs.",
    ),
    "delete a declared tool": (
        "delete_declaredtool",
        lambda client, rows: client.post(admin_url(TOOLS_ADMIN, "delete", rows.tool.pk), {"post": "yes"}),
        lambda rows: not DeclaredTool.objects.filter(pk=rows.tool.pk).exists(),
    ),
    "delete declared tools from the list": (
        "delete_declaredtool",
        lambda client, rows: client.post(
            admin_url(TOOLS_ADMIN, "changelist"), action_data("delete_selected", rows.tool.pk)
        ),
        lambda rows: not DeclaredTool.objects.filter(pk=rows.tool.pk).exists(),
    ),
    "revert a declared tool": (
        "change_declaredtool",
        lambda client, rows: client.post(admin_url(TOOLS_ADMIN, REVERT_VIEW, rows.tool.pk, rows.declared)),
        lambda rows: DeclaredTool.objects.get(pk=rows.tool.pk).description == "DDRs.",
    ),
    "restore a deleted declared tool": (
        "add_declaredtool",
        # A deleted tool's history and revert take its name.
        lambda client, rows: client.post(
            admin_url(TOOLS_ADMIN, REVERT_VIEW, "agent_retired_tool", rows.retired_tool)
        ),
        lambda rows: DeclaredTool.objects.filter(name="agent_retired_tool").exists(),
    ),
}
WRITES = [pytest.param(*CATALOG_WRITES[name], id=name) for name in CATALOG_WRITES]


def every_permission_but(codename) -> list[str]:
    return sorted(set(Permission.objects.exclude(codename=codename).values_list("codename", flat=True)))


@pytest.mark.parametrize("permission, write, done", WRITES)
def test_a_catalog_write_is_refused_to_staff_holding_every_permission_but_its_own(
    staff_client, catalog_rows, permission, write, done
):
    client = staff_client(*every_permission_but(permission))
    before, revision = database_rows(), CatalogRevision.objects.first().number
    response = write(client, catalog_rows)
    if response.status_code != 403:  # an action the user may not run is not offered: the list answers as to none
        page = client.get(response.url) if response.status_code == 302 else response
        assert page.status_code == 200 and "cl" in page.context
        assert [str(message) for message in page.context["messages"]] in ([], ["No action selected."])
    assert not done(catalog_rows)
    assert database_rows() == before
    assert CatalogRevision.objects.first().number == revision


@pytest.mark.parametrize("permission, write, done", WRITES)
def test_the_permission_a_catalog_write_needs_is_enough_and_the_write_is_one_revision_by_its_user(
    staff_client, catalog_rows, permission, write, done
):
    client = staff_client(permission)
    before = CatalogRevision.objects.first().number
    response = write(client, catalog_rows)
    assert response.status_code == 302, response.content.decode()
    assert done(catalog_rows)
    written = CatalogRevision.objects.filter(number__gt=before)
    assert list(written.values_list("number", "created_by__username")) == [(before + 1, "staff")]
    assert published_catalog().revision == before + 1  # published at once: the policy asks for no approvals


def test_the_history_offers_a_revert_to_who_may_change_and_no_restore(staff_client, catalog_rows):
    client = staff_client("change_agentmode")
    live = client.get(admin_url(MODES_ADMIN, "history", GENERAL_ID))
    assert live.context["may_revert"] and admin_url(MODES_ADMIN, REVERT_VIEW, GENERAL_ID, 1) in live.content.decode()
    deleted = client.get(admin_url(MODES_ADMIN, "history", catalog_rows.retired.pk))
    restore = admin_url(MODES_ADMIN, REVERT_VIEW, catalog_rows.retired.pk, catalog_rows.retired_at)
    assert not deleted.context["may_revert"] and restore not in deleted.content.decode()


def test_the_history_offers_a_restore_to_who_may_add_and_no_revert(staff_client, catalog_rows):
    client = staff_client("add_agentmode")
    deleted = client.get(admin_url(MODES_ADMIN, "history", catalog_rows.retired.pk))
    restore = admin_url(MODES_ADMIN, REVERT_VIEW, catalog_rows.retired.pk, catalog_rows.retired_at)
    assert deleted.context["may_revert"] and restore in deleted.content.decode()
    live = client.get(admin_url(MODES_ADMIN, "history", GENERAL_ID))
    assert not live.context["may_revert"] and admin_url(MODES_ADMIN, REVERT_VIEW, GENERAL_ID, 1) not in (
        live.content.decode()
    )


def test_the_releases_pages_need_the_view_permission_on_revisions_as_the_revision_list_does(client, django_user_model):
    # They show the pending revision's text before anyone has approved it.
    bare = django_user_model.objects.create_user(username="bare-staff", is_staff=True)
    client.force_login(bare)
    pages = [reverse("admin:modes_catalogrevision_releases"),
             reverse("admin:modes_catalogrevision_release_action", args=[1, "publish"]),
             reverse("admin:modes_catalogrevision_changelist")]
    assert [client.get(page).status_code for page in pages] == [403, 403, 403]
    bare.user_permissions.add(Permission.objects.get(codename="view_catalogrevision"))
    assert [client.get(page).status_code for page in pages] == [200, 403, 200]  # publishing needs its own permission
    bare.user_permissions.add(Permission.objects.get(codename="publish_revision"))
    assert [client.get(page).status_code for page in pages] == [200, 200, 200]


def test_there_is_no_view_on_site_redirect_whose_lookup_could_fail(admin_client):
    # /admin/r/<type>/<id>/ with an id no UUID key reads was a 500; no model has a page on the site to lead to.
    from django.contrib.contenttypes.models import ContentType

    from sessions_app.models import AgentSession

    session_type = ContentType.objects.get_for_model(AgentSession).pk
    assert admin_client.get(f"/admin/r/{session_type}/not-a-uuid/").status_code == 404
