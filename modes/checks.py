"""
The mode catalog's system checks: the published revision, which agents are served, by the catalog's rules (modes.rules:
errors, so no server starts); warnings (servers start anyway) about rows no revision holds (modes.W004: a change made
past the services) and declared tools and tool ids the model is not told of. They read the database, so Django runs them
only when asked for one (``check --database default``, ``migrate``), servers through ``modes.startup``; until the modes
migrations are applied there is no catalog to check, so ``migrate`` works on an empty database.
"""

from django.core.checks import Warning
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.loader import MigrationLoader

from agent_tools.registry import registry

from .catalog import published_catalog
from .models import CatalogHead
from .revisions import rows_differ_from_latest
from .rules import catalog_errors
from .validators import tool_parameters_problem


def check_mode_catalog(app_configs=None, databases=None, **kwargs):
    if not databases or DEFAULT_DB_ALIAS not in databases or not catalog_is_migrated(DEFAULT_DB_ALIAS):
        return []
    published = published_catalog()
    unresolved_tool_ids = [
        Warning(unresolved_tools_message(mode.key, unresolved), hint=UNRESOLVED_TOOLS_HINT, obj=mode, id="modes.W001")
        for mode in published.modes
        if isinstance(mode.associated_tool_ids, list)  # anything else is modes.E009's
        for unresolved in [published.unresolved_tool_ids(mode.associated_tool_ids)]
        if unresolved
    ]
    return [
        *catalog_errors(list(published.modes)),
        *unrecorded_change_warnings(),
        *unresolved_tool_ids,
        *_check_declared_tools(published.declared_tools),
    ]


def catalog_is_migrated(using):
    loader = MigrationLoader(connections[using], ignore_no_migrations=True)
    modes_migrations = {node for node in loader.graph.nodes if node[0] == "modes"}
    return modes_migrations <= set(loader.applied_migrations)


def unrecorded_change_warnings():
    """modes.W004, while the rows differ from the newest revision: a change made past the services."""
    change = rows_differ_from_latest()
    if change is None:
        return []
    return [
        Warning(
            f"The catalog's rows differ from its newest revision ({change}): a change made past the services "
            "(QuerySet.update() or raw SQL) that no revision holds, so agents are not served it.",
            hint="Run 'python manage.py record_revision' to record it, through the catalog's rules.",
            obj=CatalogHead, id="modes.W004",
        )
    ]


def unresolved_tools_message(key: str, unresolved: list[str]) -> str:
    """modes.W001's words, wherever the warning is shown: check, admin, import."""
    return f"Mode {key!r} lists tool ids that name no tool: {', '.join(map(repr, unresolved))}."


UNRESOLVED_TOOLS_HINT = (
    "The model is not told of these. Declare each tool the agent's client executes in the admin "
    "(Declared tools), or correct or remove the id."
)


def _check_declared_tools(declared):
    """modes.W002 and W003: declared tools the model is not told of, and why."""
    for tool in declared:
        if registry.has(tool.name):
            yield Warning(
                f"Declared tool {tool.name!r} has the name of a server tool registered in code, which is used instead.",
                hint="Rename the declaration, or delete it.", obj=tool, id="modes.W002",
            )
        problem = tool_parameters_problem(tool.parameters)
        if problem:
            yield Warning(
                f"Declared tool {tool.name!r} has parameters no vendor would take, so the model is not told of it: "
                f"{problem}",
                hint="Correct its parameters in the admin (Declared tools); the form says what is wrong.",
                obj=tool, id="modes.W003",
            )
