"""manage.py list_modes: filter, the agent_list_modes JSON payload, the table and the Markdown listing."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from modes.models import AgentMode
from modes.services import record_unrecorded_changes

from ..expected import SEED_MARKDOWN, SEED_MARKDOWN_BUILTIN, SEED_MODE_KEYS, SEED_MODES, listing, seed_listing

pytestmark = pytest.mark.django_db


def list_modes(*args):
    out, err = StringIO(), StringIO()
    call_command("list_modes", *args, stdout=out, stderr=err)
    assert err.getvalue() == ""
    return out.getvalue()


def listed_keys(*args):
    return [mode["key"] for mode in json.loads(list_modes("--format", "json", *args))["modes"]]


def scout_as_listed(zeta_research):
    """The zeta_research fixture in SEED_MODES' shape: the fields a listing shows."""
    return {
        "id": zeta_research.pk,
        "key": "zeta_research",
        "displayName": "Literature Scout",
        "description": "Compares papers about aardvarks.",
        "whenToUse": "Use this mode when the user wants quokka facts.",
        "isDefault": False,
        "humanRoleHints": ["Researcher"],
        "exampleUtterances": ["Find me quokka papers."],
        "source": "custom",
        "status": "experimental",
        "switchTargets": [],
        "llmCanEnter": True,
    }


# --- filter --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, field",
    [("ZETA_RES", "key"), ("literature SCOUT", "display name"), ("Aardvarks", "description"), ("QUOKKA", "when-to-use")],
)
def test_filter_is_case_insensitive_contains_over_each_of_the_four_fields(zeta_research, text, field):
    assert listed_keys("--filter", text) == ["zeta_research"], field


def test_filter_matching_seed_modes_keeps_catalog_order(zeta_research):
    assert listed_keys("--filter", "authoring") == ["ddr_authoring", "workflow_authoring"]
    assert listed_keys("--filter", "sys-001") == ["ddr_authoring"]  # description and when-to-use


def test_filter_matches_nothing(zeta_research):
    assert listed_keys("--filter", "no mode mentions this") == []


def test_filter_does_not_search_other_fields(zeta_research):
    # "agent_web_search" is only in the tools; "Researcher" only in the role hints.
    assert listed_keys("--filter", "agent_web_search") == []
    assert listed_keys("--filter", "Researcher") == []


def test_filter_never_matches_across_two_fields():
    # No single field of 'general' contains a line break, so text spanning its key and name must not match.
    assert listed_keys("--filter", "general\nGeneral") == []
    assert listed_keys("--filter", "authoring\nworkflow") == []


def test_without_filter_every_mode_is_listed(zeta_research):
    assert listed_keys() == ["general", "ddr_authoring", "workflow_authoring", "zeta_research"]


# --- json ----------------------------------------------------------------------------------------------


def test_json_prints_the_agent_list_modes_payload(zeta_research):
    document = json.loads(list_modes("--format", "json"))
    assert list(document) == ["modes", "catalogRevision"]
    # zeta_research is the catalog's first change after the seed: revision 2.
    modes = [*(SEED_MODES[key] for key in SEED_MODE_KEYS), scout_as_listed(zeta_research)]
    assert document == listing(*modes, catalog_revision=2)


def test_json_of_the_seed_catalog_is_the_seed_listing():
    assert json.loads(list_modes("--format", "json")) == seed_listing()


def test_json_with_include_examples_has_the_example_utterances(zeta_research):
    document = json.loads(list_modes("--format", "json", "--include-examples"))
    modes = [*(SEED_MODES[key] for key in SEED_MODE_KEYS), scout_as_listed(zeta_research)]
    assert document == listing(*modes, include_examples=True, catalog_revision=2)


def test_json_description_falls_back_to_when_to_use(zeta_research):
    AgentMode.objects.filter(pk=zeta_research.pk).update(description="")
    record_unrecorded_changes()  # made past the services: served once recorded
    mode = json.loads(list_modes("--format", "json", "--filter", "quokka"))["modes"][0]
    assert mode["description"] == mode["systemPromptSummary"] == "Use this mode when the user wants quokka facts."


# --- table ---------------------------------------------------------------------------------------------


def test_table_is_the_default_format():
    lines = list_modes().splitlines()
    assert lines[0].split() == ["KEY", "NAME", "STATUS", "SOURCE", "DEFAULT", "WHEN", "TO", "USE"]
    assert [line.split()[0] for line in lines[1:]] == ["general", "ddr_authoring", "workflow_authoring"]
    assert lines[1].startswith("general")
    assert "yes" in lines[1].split() and "yes" not in lines[2].split()
    assert lines[2].endswith("Use this mode when the user wants to create, refine, or validate Aptix DDR specifications "
                             "following SYS-001.")


def test_table_honours_the_filter(zeta_research):
    lines = list_modes("--filter", "quokka").splitlines()
    assert len(lines) == 2
    assert lines[1].split()[:6] == ["zeta_research", "Literature", "Scout", "experimental", "custom",
                                    "Use"]


# --- markdown ------------------------------------------------------------------------------------------

def test_markdown_lists_builtin_then_custom_modes_and_ends_with_totals(zeta_research):
    assert list_modes("--format", "markdown") == SEED_MARKDOWN_BUILTIN + """
## Custom Modes

### Literature Scout (zeta_research)
- **When to Use**: Use this mode when the user wants quokka facts.
- **Tools**: agent_list_modes, agent_web_search
- **Status**: experimental

Total: 4 modes (3 built-in, 1 custom)
"""


def test_markdown_without_custom_modes_says_none():
    assert list_modes("--format", "markdown") == SEED_MARKDOWN + "\n"


def test_markdown_groups_custom_modes_after_builtin_ones_whatever_the_position(zeta_research):
    AgentMode.objects.filter(pk=zeta_research.pk).update(position=0)
    record_unrecorded_changes()  # made past the services: served once recorded
    output = list_modes("--format", "markdown")
    assert output.index("## Built-in Modes") < output.index("### General (general)") < output.index(
        "## Custom Modes"
    ) < output.index("### Literature Scout (zeta_research)")


def test_markdown_filtered_shows_matches_total_of_catalog_and_the_filter_line(zeta_research):
    output = list_modes("--format", "markdown", "--filter", "Quokka")
    assert output == """\
# Available Modes

## Built-in Modes

_None._

## Custom Modes

### Literature Scout (zeta_research)
- **When to Use**: Use this mode when the user wants quokka facts.
- **Tools**: agent_list_modes, agent_web_search
- **Status**: experimental

Total: 4 modes (3 built-in, 1 custom)
Showing 1 mode matching filter "Quokka"
"""


def test_markdown_filter_line_counts_several_matches(zeta_research):
    output = list_modes("--format", "markdown", "--filter", "authoring")
    assert output.endswith('Total: 4 modes (3 built-in, 1 custom)\nShowing 2 modes matching filter "authoring"\n')


def test_markdown_mode_without_tools_says_none(new_mode):
    new_mode("bare", display_name="Bare", when_to_use="Use this mode rarely.")
    assert "### Bare (bare)\n- **When to Use**: Use this mode rarely.\n- **Tools**: none\n- **Status**: active\n" in (
        list_modes("--format", "markdown")
    )


# --- bad input -----------------------------------------------------------------------------------------


def test_unknown_format_is_a_command_error():
    with pytest.raises(CommandError, match="invalid choice: 'xml'"):
        call_command("list_modes", "--format", "xml", stdout=StringIO(), stderr=StringIO())


@pytest.mark.parametrize("format", ["table", "markdown"])
def test_include_examples_outside_json_is_refused_not_ignored(format):
    with pytest.raises(CommandError, match=r"^--include-examples is for --format json: the table and Markdown list no"):
        list_modes("--format", format, "--include-examples")
