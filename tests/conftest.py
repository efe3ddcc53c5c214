"""Shared fixtures. The database is the real one (SQLite or PostgreSQL), migrated, with the seed modes."""

import pytest
from django.db import connection

from modes.models import AgentMode


@pytest.fixture
def seed_modes(db):
    return list(AgentMode.objects.all())


@pytest.fixture
def custom_mode(db):
    return AgentMode.objects.create(
        key="research",
        display_name="Research",
        description="Finding and comparing sources.",
        when_to_use="Use this mode when the user wants sources found, compared or summarised.",
        associated_tool_ids=["agent_change_mode", "agent_list_modes"],
        example_utterances=["Find papers on retrieval-augmented generation."],
    )


@pytest.fixture
def unconstrained_catalog(db):
    """Lets a test write rows the catalog constraints would refuse, so the system checks can be seen to fire.

    The drops happen inside the test's transaction and are rolled back with it.
    """
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            for name in (
                "modes_agentmode_status_valid",
                "modes_agentmode_id_format",
                "modes_agentmode_key_format",
                "modes_agentmode_when_to_use_present",
            ):
                cursor.execute(f"ALTER TABLE modes_agentmode DROP CONSTRAINT {name}")
        else:
            cursor.execute("PRAGMA ignore_check_constraints = ON")
        cursor.execute("DROP INDEX modes_agentmode_single_default")
    yield
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA ignore_check_constraints = OFF")
