"""The admin for the mode catalog, driven through real forms with a superuser (pytest-django's admin_client)."""

import functools
import re

import pytest
from django import forms
from django.urls import reverse

from modes.models import AgentMode
from modes.services import delete_modes, set_default_mode

from ..expected import DDR_ID, GENERAL_ID, LIST_FIELDS, WORKFLOW_ID
from .admin_forms import CHANGELIST, change_url, delete_url, form_data, form_errors, loaded_revision, messages_of
from modes.catalog import published_release

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]

ADD = reverse("admin:modes_agentmode_add")


def listed_keys(response):
    return [mode.key for mode in response.context["cl"].result_list]


def run_action(client, action, *pks):
    return client.post(CHANGELIST, {"action": action, "_selected_action": list(pks), "index": 0}, follow=True)


def default_keys():
    return list(AgentMode.objects.filter(is_default=True).values_list("key", flat=True))


# --- what an admin sees --------------------------------------------------------------------------------


def test_changelist_shows_the_three_v1_modes_in_catalog_order(admin_client):
    response = admin_client.get(CHANGELIST)
    assert response.status_code == 200
    assert listed_keys(response) == ["general", "ddr_authoring", "workflow_authoring"]
    html = response.content.decode()
    for text in ("General", "DDR Authoring", "Workflow Authoring"):
        assert text in html


@pytest.mark.parametrize(
    "pk, key, display_name, description, when_to_use, is_default, tools",
    [
        (
            GENERAL_ID,
            "general",
            "General",
            "General-purpose assistance for everyday Q&amp;A, explanation, and lightweight help.",
            "Use this mode for everyday Q&A, explanation, and lightweight assistance.",
            True,
            ["agent_change_mode", "agent_list_modes", "agent_workflow_registry", "agent_hello_world"],
        ),
        (
            DDR_ID,
            "ddr_authoring",
            "DDR Authoring",
            "Structured creation, refinement, and validation of Aptix DDR specifications following SYS-001.",
            "Use this mode when the user wants to create, refine, or validate Aptix DDR specifications following "
            "SYS-001.",
            False,
            ["agent_change_mode", "agent_list_modes", "agent_workflow_registry", "agent_ddr_manager"],
        ),
        (
            WORKFLOW_ID,
            "workflow_authoring",
            "Workflow Authoring",
            "Creation, refinement, and validation of Aptix agent workflows using the Workflow Registry Tool "
            "(TUL-006).",
            "Use this mode when defining, editing, or validating Aptix workflows using TUL-006.",
            False,
            ["agent_change_mode", "agent_list_modes", "agent_workflow_registry", "agent_workflow_authoring"],
        ),
    ],
)
def test_change_page_shows_the_seed_mode_as_section_8_defines_it(
    admin_client, pk, key, display_name, description, when_to_use, is_default, tools
):
    response = admin_client.get(change_url(pk))
    assert response.status_code == 200
    html = response.content.decode()
    form = response.context["adminform"].form
    # id and key of a built-in mode are shown read-only, not as inputs.
    assert "id" not in form.fields and "key" not in form.fields
    assert f'<div class="readonly">{pk}</div>' in html
    assert f'<div class="readonly">{key}</div>' in html
    assert 'name="key"' not in html
    assert form["display_name"].value() == display_name
    assert description in html  # the description textarea
    assert form["when_to_use"].value() == when_to_use
    assert form["status"].value() == "active"
    assert form["version"].value() == "v1"
    assert form["associated_tool_ids"].value() == "\n".join(tools)
    assert form["description"].value() == description.replace("&amp;", "&")
    # is_default, status and the source are shown; the default changes only through the action.
    assert "is_default" not in form.fields
    assert re.search(
        r'<label>Is default:</label>\s*<div class="readonly"><img src="[^"]*" alt="%s"></div>' % is_default, html
    )
    assert '<div class="readonly">Built-in</div>' in html


def test_list_fields_are_textareas_with_one_item_per_line(admin_client):
    response = admin_client.get(change_url(DDR_ID))
    form = response.context["adminform"].form
    for name in LIST_FIELDS:
        assert isinstance(form.fields[name].widget, forms.Textarea), name
    html = response.content.decode()
    assert re.search(
        r'<textarea name="associated_tool_ids"[^>]*>\s*agent_change_mode\nagent_list_modes\n'
        r"agent_workflow_registry\nagent_ddr_manager</textarea>",
        html,
    )
    assert '["agent_change_mode"' not in html  # never raw JSON


# --- search and filters --------------------------------------------------------------------------------


@pytest.mark.parametrize("query", ["zeta_res", "literature scout", "AARDVARKS", "Quokka"])
def test_search_matches_key_name_description_and_when_to_use(admin_client, zeta_research, query):
    response = admin_client.get(CHANGELIST, {"q": query})
    assert listed_keys(response) == ["zeta_research"]


def test_search_without_match_lists_nothing(admin_client, zeta_research):
    assert listed_keys(admin_client.get(CHANGELIST, {"q": "nothing matches this"})) == []


@pytest.mark.parametrize(
    "field, value, keys",
    [
        ("status", "experimental", ["zeta_research"]),
        ("status", "active", ["general", "ddr_authoring", "workflow_authoring"]),
        ("source", "custom", ["zeta_research"]),
        ("source", "builtin", ["general", "ddr_authoring", "workflow_authoring"]),
        ("is_default", "1", ["general"]),
        ("is_default", "0", ["ddr_authoring", "workflow_authoring", "zeta_research"]),
    ],
)
def test_filter_by_status_source_and_default(admin_client, zeta_research, field, value, keys):
    assert listed_keys(admin_client.get(CHANGELIST, {f"{field}__exact": value})) == keys


# --- adding and editing --------------------------------------------------------------------------------


def test_add_custom_mode_gets_a_generated_id_custom_source_and_goes_last(admin_client):
    response = admin_client.post(
        ADD,
        form_data(
            associated_tool_ids="agent_change_mode\n\n  agent_list_modes  \n\n",
            example_utterances="Find papers on RAG.\r\n\r\nCompare these two sources.",
        ),
    )
    assert response.status_code == 302, form_errors(response)
    mode = AgentMode.objects.get(key="research")
    assert re.fullmatch(r"[0-9A-F]{32}", mode.id)
    assert mode.source == "custom"
    assert mode.is_default is False
    assert mode.position == 4
    assert mode.associated_tool_ids == ["agent_change_mode", "agent_list_modes"]
    assert mode.example_utterances == ["Find papers on RAG.", "Compare these two sources."]
    assert mode.mode_instructions == []


def test_add_form_does_not_let_the_admin_choose_id_source_or_default(admin_client):
    response = admin_client.post(
        ADD, form_data(id="FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF", source="builtin", is_default="on")
    )
    assert response.status_code == 302
    mode = AgentMode.objects.get(key="research")
    assert (mode.id != "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF", mode.source, mode.is_default) == (True, "custom", False)
    assert default_keys() == ["general"]


def test_editing_a_builtin_mode_keeps_its_id_and_key(admin_client):
    general = AgentMode.objects.get(pk=GENERAL_ID)
    response = admin_client.post(
        change_url(GENERAL_ID), form_data(general, key="renamed", id="FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF", version="v1.1")
    )
    assert response.status_code == 302, form_errors(response)
    general = AgentMode.objects.get(pk=GENERAL_ID)
    assert (general.key, general.version) == ("general", "v1.1")
    assert AgentMode.objects.count() == 3


def test_custom_mode_key_is_editable(admin_client, custom_mode):
    response = admin_client.get(change_url(custom_mode.pk))
    assert "key" in response.context["adminform"].form.fields
    response = admin_client.post(change_url(custom_mode.pk), form_data(custom_mode, key="deep_research"))
    assert response.status_code == 302, form_errors(response)
    assert AgentMode.objects.get(pk=custom_mode.pk).key == "deep_research"


@pytest.mark.parametrize(
    "overrides, field, message",
    [
        (
            {"key": "Deep-Research"},
            "key",
            "A mode key is snake_case: lower-case letters, digits and underscores only (for example ddr_authoring).",
        ),
        ({"key": "general"}, "key", "A mode with this key already exists."),
        ({"key": ""}, "key", "This field is required."),
        ({"when_to_use": ""}, "when_to_use", "This field is required."),
        ({"when_to_use": "   "}, "when_to_use", "This field is required."),
        (
            {"when_to_use": "First line.\r\nSecond line."},
            "when_to_use",
            "This must be a single line: it is rendered inline in the system prompt.",
        ),
        (
            {"associated_tool_ids": "agent_list_modes\nlist modes!"},
            "associated_tool_ids",
            "These are not valid tool names (letters, digits, '_' and '-', at most 64 characters): 'list modes!'.",
        ),
        ({"status": "retired"}, "status", "Select a valid choice. retired is not one of the available choices."),
        (
            {"entry_confirmation": "always"}, "entry_confirmation",
            "Select a valid choice. always is not one of the available choices.",
        ),
        ({"position": "-1"}, "position", "Ensure this value is greater than or equal to 0."),
        ({"position": "1000001"}, "position", "Ensure this value is less than or equal to 1000000."),
        ({"position": "2147483647"}, "position", "Ensure this value is less than or equal to 1000000."),
        ({"display_name": ""}, "display_name", "This field is required."),
    ],
)
def test_invalid_custom_mode_gets_a_form_error_not_a_500(admin_client, custom_mode, overrides, field, message):
    before = list(AgentMode.objects.values())
    response = admin_client.post(change_url(custom_mode.pk), form_data(custom_mode, **overrides))
    assert response.status_code == 200
    assert message in form_errors(response)[field]
    assert message.replace("'", "&#x27;") in response.content.decode()
    assert list(AgentMode.objects.values()) == before


def test_a_prompt_is_kept_as_written_with_the_browsers_line_breaks_read_as_lf(admin_client, custom_mode):
    prompt = "  # Research\r\n\r\n    indented code\r\n\r\n"
    data = form_data(custom_mode, prompt=prompt, custom_instructions="Cite.\r\nAlways.")
    assert admin_client.post(change_url(custom_mode.pk), data).status_code == 302
    custom_mode.refresh_from_db()
    assert (custom_mode.prompt, custom_mode.custom_instructions) == ("  # Research\n\n    indented code\n\n", "Cite.\nAlways.")


def test_invalid_new_mode_gets_a_form_error_and_is_not_created(admin_client):
    response = admin_client.post(ADD, form_data(key="two words", when_to_use="a\nb"))
    assert response.status_code == 200
    errors = form_errors(response)
    assert set(errors) == {"key", "when_to_use"}
    assert not AgentMode.objects.filter(display_name="Research").exists()


def test_invalid_builtin_edit_gets_a_form_error(admin_client):
    ddr = AgentMode.objects.get(pk=DDR_ID)
    response = admin_client.post(change_url(DDR_ID), form_data(ddr, status="gone", when_to_use=""))
    assert response.status_code == 200
    assert set(form_errors(response)) == {"status", "when_to_use"}
    assert AgentMode.objects.get(pk=DDR_ID).status == "active"


# --- reordering ----------------------------------------------------------------------------------------


def reorder(client, positions, **posted):
    data = {
        **posted,
        "form-TOTAL_FORMS": str(len(positions)),
        "form-INITIAL_FORMS": str(len(positions)),
        "form-MIN_NUM_FORMS": "0",
        "form-MAX_NUM_FORMS": "1000",
        "_save": "Save",
    }
    for index, (pk, position) in enumerate(positions.items()):
        data[f"form-{index}-id"] = pk
        data[f"form-{index}-position"] = str(position)
    return client.post(CHANGELIST, data, follow="_loaded_revision" in posted)


def test_reorder_modes_from_the_changelist(admin_client):
    response = reorder(admin_client, {GENERAL_ID: 3, DDR_ID: 2, WORKFLOW_ID: 1})
    assert response.status_code == 302
    assert list(AgentMode.objects.values_list("key", flat=True)) == ["workflow_authoring", "ddr_authoring", "general"]
    assert listed_keys(admin_client.get(CHANGELIST)) == ["workflow_authoring", "ddr_authoring", "general"]


def test_positions_saved_from_a_list_opened_before_another_change_are_refused_and_that_change_stays(
    admin_client, admin_user, django_user_model, client
):
    opened = loaded_revision(admin_client, CHANGELIST)  # the admin opens the list
    boss = django_user_model.objects.create_superuser(username="boss", password="x")
    client.force_login(boss)
    assert reorder(client, {GENERAL_ID: 1, DDR_ID: 7, WORKFLOW_ID: 3}).status_code == 302  # boss moves ddr last

    # The admin moves workflow_authoring first; the list they opened still shows ddr_authoring at 2.
    response = reorder(admin_client, {GENERAL_ID: 1, DDR_ID: 2, WORKFLOW_ID: 0}, **opened)

    assert messages_of(response) == [
        "Nothing was changed: Mode 'ddr_authoring' was changed in revision 2 by boss after you opened this page. The "
        "page shows that change now: make yours again."
    ]
    assert dict(AgentMode.objects.values_list("key", "position")) == {
        "general": 1, "ddr_authoring": 7, "workflow_authoring": 3
    }
    reopened = loaded_revision(admin_client, CHANGELIST)
    response = reorder(admin_client, {GENERAL_ID: 1, DDR_ID: 7, WORKFLOW_ID: 0}, **reopened)
    assert messages_of(response)[-1] == "1 agent mode was changed successfully."
    assert AgentMode.objects.get(pk=WORKFLOW_ID).position == 0


def test_positions_saved_from_a_list_that_shows_a_mode_deleted_since_are_refused_naming_the_deletion(
    admin_client, custom_mode
):
    opened = loaded_revision(admin_client, CHANGELIST)
    delete_modes(modes=[custom_mode])

    positions = {GENERAL_ID: 1, DDR_ID: 2, WORKFLOW_ID: 0, custom_mode.pk: custom_mode.position}
    response = reorder(admin_client, positions, **opened)

    assert messages_of(response)[0].startswith("Nothing was changed: Mode 'research' was changed in revision 3 ")
    assert AgentMode.objects.get(pk=WORKFLOW_ID).position == 3


def test_reorder_with_a_negative_position_is_a_form_error(admin_client):
    response = reorder(admin_client, {GENERAL_ID: -5, DDR_ID: 2, WORKFLOW_ID: 1})
    assert response.status_code == 200
    assert "Ensure this value is greater than or equal to 0." in response.content.decode()
    assert AgentMode.objects.get(pk=GENERAL_ID).position == 1


# --- the default ---------------------------------------------------------------------------------------


def test_make_default_action_switches_the_default(admin_client):
    response = run_action(admin_client, "make_default", DDR_ID)
    assert response.status_code == 200
    assert messages_of(response) == ["'ddr_authoring' is now the default mode."]
    assert default_keys() == ["ddr_authoring"]


def test_make_default_action_on_a_custom_mode(admin_client, custom_mode):
    response = run_action(admin_client, "make_default", custom_mode.pk)
    assert messages_of(response) == ["'research' is now the default mode."]
    assert default_keys() == ["research"]


def test_make_default_on_the_current_default_keeps_one_default(admin_client):
    response = run_action(admin_client, "make_default", GENERAL_ID)
    assert messages_of(response) == ["'general' is now the default mode."]
    assert default_keys() == ["general"]


def test_make_default_with_two_modes_selected_is_refused(admin_client):
    response = run_action(admin_client, "make_default", DDR_ID, WORKFLOW_ID)
    assert response.status_code == 200
    assert messages_of(response) == ["Select exactly one mode to make the default."]
    assert default_keys() == ["general"]


@pytest.mark.postgres(reason="needs PostgreSQL row locks")
@pytest.mark.usefixtures("modes_restored_after_flush")
class TestConcurrentDefaultSwitches:
    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_concurrent_default_switches_leave_exactly_one_default(self, at_once):
        """The action's switch runs in one locked transaction: racing admins never hit the one-default index."""
        targets = [GENERAL_ID, DDR_ID, WORKFLOW_ID] * 4
        for _ in range(3):
            modes = [AgentMode.objects.get(pk=pk) for pk in targets]
            at_once(*(functools.partial(set_default_mode, mode=mode) for mode in modes))
            assert AgentMode.objects.filter(is_default=True).count() == 1


# --- deleting ------------------------------------------------------------------------------------------


def test_deleting_the_default_mode_is_refused(admin_client):
    for method in (admin_client.get, admin_client.post):
        response = method(delete_url(GENERAL_ID), {"post": "yes"} if method == admin_client.post else None, follow=True)
        assert response.redirect_chain[-1][0] == change_url(GENERAL_ID)
        assert messages_of(response) == [
            "Not deleted: 'general' is the default mode; make another mode the default first."
        ]
    assert AgentMode.objects.filter(pk=GENERAL_ID).exists()


def test_deleting_a_builtin_mode_is_refused(admin_client):
    response = admin_client.post(delete_url(DDR_ID), {"post": "yes"}, follow=True)
    assert messages_of(response) == [
        "Not deleted: 'ddr_authoring' is a built-in mode that AGN-014 requires; set its status to deprecated instead."
    ]
    assert AgentMode.objects.filter(pk=DDR_ID).exists()


def test_deleting_a_custom_default_mode_is_refused(admin_client, custom_mode):
    run_action(admin_client, "make_default", custom_mode.pk)
    response = admin_client.post(delete_url(custom_mode.pk), {"post": "yes"}, follow=True)
    assert messages_of(response) == ["Not deleted: 'research' is the default mode; make another mode the default first."]
    assert AgentMode.objects.filter(pk=custom_mode.pk).exists()


def test_deleting_a_custom_non_default_mode_works(admin_client, custom_mode):
    confirm = admin_client.get(delete_url(custom_mode.pk))
    assert confirm.status_code == 200
    assert "Are you sure" in confirm.content.decode()
    response = admin_client.post(delete_url(custom_mode.pk), {"post": "yes"})
    assert response.status_code == 302
    assert not AgentMode.objects.filter(pk=custom_mode.pk).exists()
    assert AgentMode.objects.count() == 3


@pytest.fixture
def session_in_custom_mode(alice, custom_mode):
    from sessions_app.services import create_session

    return create_session(
        release=published_release(), owner=alice, org=None, mode_key=custom_mode.key, title="Research session"
    )


def test_deleting_a_mode_that_a_session_uses_is_refused_naming_the_session(admin_client, session_in_custom_mode):
    mode_id = session_in_custom_mode.mode_id
    for method in (admin_client.get, admin_client.post):
        response = method(delete_url(mode_id), {"post": "yes"} if method == admin_client.post else None)
        content = response.content.decode()
        assert "Cannot delete agent mode" in content
        assert "Research session" in content
    assert AgentMode.objects.filter(pk=mode_id).exists()


def test_bulk_delete_of_a_mode_that_a_session_uses_deletes_nothing(admin_client, session_in_custom_mode, new_mode):
    other = new_mode("other", when_to_use="Use this mode for other things.")
    selected = [session_in_custom_mode.mode_id, other.pk]
    response = admin_client.post(
        CHANGELIST, {"action": "delete_selected", "_selected_action": selected, "index": 0, "post": "yes"}
    )
    assert "Research session" in response.content.decode()
    assert AgentMode.objects.filter(pk__in=selected).count() == 2


def test_bulk_delete_with_the_default_selected_deletes_nothing(admin_client, custom_mode):
    response = run_action(admin_client, "delete_selected", GENERAL_ID, custom_mode.pk)
    assert messages_of(response) == [
        "Nothing deleted: 'general' is the default mode; make another mode the default first."
    ]
    assert AgentMode.objects.count() == 4


def test_bulk_delete_with_a_builtin_selected_deletes_nothing(admin_client, custom_mode):
    response = run_action(admin_client, "delete_selected", custom_mode.pk, WORKFLOW_ID)
    assert messages_of(response) == [
        "Nothing deleted: 'workflow_authoring' is a built-in mode that AGN-014 requires; "
        "set its status to deprecated instead."
    ]
    assert AgentMode.objects.count() == 4


def test_bulk_delete_of_custom_non_default_modes_works(admin_client, custom_mode, new_mode):
    other = new_mode("other", when_to_use="Use this mode for other things.")
    confirm = admin_client.post(
        CHANGELIST, {"action": "delete_selected", "_selected_action": [custom_mode.pk, other.pk], "index": 0}
    )
    assert confirm.status_code == 200
    assert "Are you sure" in confirm.content.decode()
    response = admin_client.post(
        CHANGELIST,
        {"action": "delete_selected", "_selected_action": [custom_mode.pk, other.pk], "index": 0, "post": "yes"},
    )
    assert response.status_code == 302
    assert list(AgentMode.objects.values_list("key", flat=True)) == ["general", "ddr_authoring", "workflow_authoring"]


@pytest.mark.parametrize("field, junk", [("associated_tool_ids", "5"), ("switch_targets", '{"a": 1}')])
def test_a_list_field_holding_junk_from_sql_is_refused_a_revision_and_shown_so_that_an_admin_repairs_it(
    admin_client, field, junk
):
    from io import StringIO

    from django.core.management import CommandError, call_command
    from django.db import connection

    from modes.revisions import rows_differ_from_latest

    with connection.cursor() as cursor:  # a raw write, past the services
        cursor.execute(f"UPDATE modes_agentmode SET {field} = %s WHERE id = %s", [junk, GENERAL_ID])
    with pytest.raises(CommandError, match=rf"^This would break the catalog's rules: modes.E009: .*'{field}'"):
        call_command("record_revision", stdout=StringIO())
    for page in (change_url(GENERAL_ID), "/admin/modes/catalogrevision/releases/", CHANGELIST):
        assert admin_client.get(page).status_code == 200, page
    assert admin_client.get("/api/catalog/revisions/1/diff/").status_code == 200

    general = AgentMode.objects.get(pk=GENERAL_ID)
    setattr(general, field, [])  # the form as the browser sends it once the admin has emptied the field
    assert admin_client.post(change_url(GENERAL_ID), form_data(general, **{field: ""})).status_code == 302
    assert rows_differ_from_latest() is None  # repaired to what the newest revision holds
    assert isinstance(getattr(AgentMode.objects.get(pk=GENERAL_ID), field), list)
