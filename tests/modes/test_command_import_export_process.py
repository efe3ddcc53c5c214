"""
manage.py import_modes and export_modes run as an operator runs them: each in a process of its own, on a migrated
scratch database of the suite's kind (SQLite or PostgreSQL), with no test transaction around it. Only there do the
commands' own transactions show: on PostgreSQL an import locks the catalog's head row (every write to the catalog
queues on it), which needs the transaction the import opens itself, and a test run inside the test's transaction
would lend it one.
"""

import json
import subprocess
import sys

import pytest
import yaml

from ..servers import ROOT, scratch_database

SCOUT = {
    "id": "5C0D7E1B2A3F4E5D8C9B0A1F2E3D4C5B",
    "key": "scout",
    "display_name": "Scout",
    "description": "Looks things up.",
    "when_to_use": "Use this mode when the user wants something looked up.",
    "associated_tool_ids": ["agent_list_modes"],
}
# Scout as export_modes writes it back: every portable field, in the file's order, the defaults filled in.
SCOUT_EXPORTED = {
    "id": "5C0D7E1B2A3F4E5D8C9B0A1F2E3D4C5B",
    "key": "scout",
    "display_name": "Scout",
    "description": "Looks things up.",
    "when_to_use": "Use this mode when the user wants something looked up.",
    "status": "active",
    "version": "v1",
    "entry_confirmation": "inherit",
    "prompt": "",
    "custom_instructions": "",
    "is_default": False,
    "llm_can_enter": True,
    "position": 4,
    "mode_instructions": [],
    "behavior_hints": [],
    "human_role_hints": [],
    "example_utterances": [],
    "associated_tool_ids": ["agent_list_modes"],
    "tool_group_hints": [],
    "rag_scope_hints": [],
    "strong_signals": [],
    "weak_signals": [],
    "switch_targets": [],
}
SEED_KEYS = ["general", "ddr_authoring", "workflow_authoring"]


@pytest.fixture
def database():
    """The environment of a freshly migrated database of its own: the seed modes, catalog revision 1."""
    with scratch_database() as env:
        yield env


def manage(env, *arguments):
    """A management command in a process of its own: its exit status, standard output and standard error."""
    done = subprocess.run(
        [sys.executable, "manage.py", *arguments], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    return done.returncode, done.stdout, done.stderr


def write_modes(path, *modes):
    path.write_text(yaml.safe_dump({"format": "aptix-modes", "version": 1, "modes": list(modes)}), encoding="utf-8")
    return str(path)


def exported(env, *arguments):
    """The catalog as export_modes prints it in JSON."""
    status, out, err = manage(env, "export_modes", "--format", "json", *arguments)
    assert (status, err) == (0, "")
    return json.loads(out)


def test_an_import_in_its_own_process_creates_the_mode_as_one_revision_that_export_writes_back(database, tmp_path):
    assert manage(database, "import_modes", write_modes(tmp_path / "scout.yaml", SCOUT)) == (
        0,
        "mode scout: created\nCreated 1, updated 0, left 0 unchanged. Catalog revision: 2.\n",
        "",
    )

    assert exported(database, "--custom-only") == {
        "format": "aptix-modes",
        "version": 1,
        "modes": [SCOUT_EXPORTED],
        "declared_tools": [],
    }
    # The revision the import reported is the catalog it left: the seed modes and scout.
    assert [mode["key"] for mode in exported(database, "--revision", "2")["modes"]] == [*SEED_KEYS, "scout"]


def test_an_import_with_update_in_its_own_process_changes_a_mode_and_moves_the_default(database, tmp_path):
    ddr = {"key": "ddr_authoring", "display_name": "DDR (imported)", "is_default": True}
    path = write_modes(tmp_path / "ddr.yaml", ddr)

    assert manage(database, "import_modes", path, "--update") == (
        0,
        "mode ddr_authoring: updated (display_name, is_default)\n"
        "default: ddr_authoring\n"
        "Created 0, updated 1, left 0 unchanged. Catalog revision: 2.\n",
        # The seed DDR mode names tools this service does not have: a warning, as on every import that lists it.
        "Warning (modes.W001): Mode 'ddr_authoring' lists tool ids that name no tool: "
        "'agent_workflow_registry', 'agent_ddr_manager'.\n",
    )

    assert [(mode["key"], mode["display_name"], mode["is_default"]) for mode in exported(database)["modes"]] == [
        ("general", "General", False),
        ("ddr_authoring", "DDR (imported)", True),
        ("workflow_authoring", "Workflow Authoring", False),
    ]


def test_an_import_refused_in_its_own_process_exits_with_every_problem_and_changes_nothing(database, tmp_path):
    before = exported(database)
    path = write_modes(tmp_path / "bad.yaml", SCOUT, {"key": "general", "display_name": "General again"})

    assert manage(database, "import_modes", path) == (
        1,
        "",
        f"CommandError: {path} was not imported; nothing changed:\n"
        "  modes[1] (key 'general'): key: mode 'general' already exists; import with update on "
        '(--update, "update": true) to update it.\n',
    )

    assert exported(database) == before
    assert manage(database, "export_modes", "--revision", "2") == (
        1,
        "",
        "CommandError: There is no catalog revision 2; revisions run from 1 to 1.\n",
    )


def test_an_export_to_a_file_in_its_own_process_writes_what_it_prints(database, tmp_path):
    path = tmp_path / "catalog.yaml"

    assert manage(database, "export_modes", "--output", str(path)) == (
        0,
        "",
        f"Exported 3 modes and 0 declared tools to {path}.\n",
    )

    assert path.read_text(encoding="utf-8") == manage(database, "export_modes")[1]
    assert [mode["key"] for mode in yaml.safe_load(path.read_text(encoding="utf-8"))["modes"]] == SEED_KEYS
