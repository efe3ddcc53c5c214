"""Fixtures of the catalog's tests."""

import pytest


@pytest.fixture
def zeta_research(new_mode):
    """A custom, experimental mode whose every searchable text holds a word of its own (aardvarks, quokka)."""
    return new_mode(
        "zeta_research",
        display_name="Literature Scout",
        description="Compares papers about aardvarks.",
        when_to_use="Use this mode when the user wants quokka facts.",
        status="experimental",
        associated_tool_ids=["agent_list_modes", "agent_web_search"],
        human_role_hints=["Researcher"],
        example_utterances=["Find me quokka papers."],
    )
