"""Fixtures of the catalog's tests."""

import pytest

from modes.models import AgentMode


@pytest.fixture
def zeta_research(db):
    """A custom, experimental mode whose every searchable text holds a word of its own (aardvarks, quokka)."""
    return AgentMode.objects.create(
        key="zeta_research",
        display_name="Literature Scout",
        description="Compares papers about aardvarks.",
        when_to_use="Use this mode when the user wants quokka facts.",
        status="experimental",
        associated_tool_ids=["agent_list_modes", "agent_web_search"],
        human_role_hints=["Researcher"],
        example_utterances=["Find me quokka papers."],
    )
