"""manage.py mode_prompt: prints the Mode Catalog block of AGN-014 §6.2."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from modes.models import AgentMode
from modes.services import record_unrecorded_changes

from ..expected import SEED_WHEN_TO_USE, prompt_with, seed_prompt

pytestmark = pytest.mark.django_db


def block(current_mode_key):
    """What the command prints for the seed catalog: the block of AGN-014 §6.2 and a line break."""
    return seed_prompt(current_mode_key) + "\n"


def mode_prompt(*args):
    out, err = StringIO(), StringIO()
    call_command("mode_prompt", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_current_mode_block_is_printed_exactly():
    assert mode_prompt("--current", "ddr_authoring") == (block("ddr_authoring"), "")


def test_without_current_the_default_mode_is_current():
    assert mode_prompt() == (block("general"), "")


def test_unknown_current_key_falls_back_to_the_default_with_a_warning():
    out, err = mode_prompt("--current", "ddr_writing")
    assert out == block("general")
    assert err == "No mode has the key 'ddr_writing'; showing the default mode instead.\n"


def test_fallback_follows_the_catalog_default():
    AgentMode.objects.filter(key="general").update(is_default=False)
    AgentMode.objects.filter(key="workflow_authoring").update(is_default=True)
    record_unrecorded_changes()  # made past the services: served once recorded
    out, err = mode_prompt("--current", "nope")
    assert out == block("workflow_authoring")
    assert "'nope'" in err


def test_custom_mode_appears_in_the_block(custom_mode):
    out, _ = mode_prompt("--current", "research")
    research = ("research", "Use this mode when the user wants sources found, compared or summarised.")
    assert out == prompt_with("research", *SEED_WHEN_TO_USE, research) + "\n"


def test_a_catalog_without_a_default_is_a_command_error_not_a_traceback(recorded_past_the_rules):
    AgentMode.objects.filter(is_default=True).update(is_default=False)
    recorded_past_the_rules("modes.E005")  # only so can the published catalog lack a default now
    with pytest.raises(CommandError) as caught:
        mode_prompt()
    assert str(caught.value) == (
        "The mode catalog has no default mode (modes.E005). Run 'manage.py check --database default' for details."
    )
