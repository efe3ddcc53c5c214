"""
System checks for the mode catalog invariants of AGN-014 §7, and warnings about tool ids that name no tool
(servers start anyway).

The invariants are errors (no server starts) for the published revision, the catalog agents are served;
the working copy (the rows admins edit) breaking them while it is not what agents are served (a pending
revision, or a change made past the services that no revision records yet) is a warning, and so is such
an unrecorded change itself: it waits for a revision.

They read the catalog from the database, so Django runs them only when asked for a database (``check --database
default``, ``migrate``); servers run them through ``modes.startup`` before serving. Until the modes migrations are
applied there is no catalog to check, which keeps ``migrate`` working on an empty database.
"""

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from django.core.checks import Error, Warning
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.loader import MigrationLoader

from agent_tools.registry import registry

from .catalog import current_catalog, read_state, working_catalog
from .graph import GRAPH_HINT, graph_problems
from .models import AgentMode, CatalogVersion
from .validators import (
    MODE_KEY_CHARACTERS, one_of, passes, tool_parameters_problem, validate_mode_id, validate_mode_key,
    validate_not_blank, validate_single_line, validate_string_list
)


def check_mode_catalog(app_configs=None, databases=None, **kwargs):
    if not databases or DEFAULT_DB_ALIAS not in databases or not catalog_is_migrated(DEFAULT_DB_ALIAS):
        return []
    working = working_catalog()
    published = published_catalog_errors()
    return [
        *published,
        *working_copy_warnings(list(working.modes), published),
        *_check_tool_ids(working),
        *_check_shadowed_declarations(working.declared_tools),
        *_check_declared_parameters(working.declared_tools),
    ]


def catalog_is_migrated(using):
    loader = MigrationLoader(connections[using], ignore_no_migrations=True)
    modes_migrations = {node for node in loader.graph.nodes if node[0] == "modes"}
    return modes_migrations <= set(loader.applied_migrations)


def published_catalog_errors():
    """Every invariant the published revision breaks (the rows, until a revision is published)."""
    return catalog_errors(list(current_catalog().modes))


def working_copy_warnings(modes, published_errors):
    """
    An unrecorded change (modes.W004), and the invariants the rows break that the published revision does
    not (modes.W005), while the rows are not what agents are served.
    """
    state = read_state()
    if state is None or (state.revision == state.published and not state.unrecorded):
        return []
    unrecorded = [
        Warning(
            "The catalog was changed past the services (QuerySet.update() or raw SQL) and no revision records "
            "the change, so agents are not served it.",
            hint="Run 'python manage.py record_revision' to record it (the next save in the admin does too).",
            obj=CatalogVersion,
            id="modes.W004",
        )
    ] if state.unrecorded else []
    served = {(error.id, error.msg) for error in published_errors}
    return unrecorded + [
        Warning(
            f"The working copy, which agents are not served, breaks {error.id}: {error.msg}",
            hint=f"Correct it before it is published: {error.hint}",
            obj=error.obj,
            id="modes.W005",
        )
        for error in catalog_errors(modes)
        if (error.id, error.msg) not in served
    ]


def catalog_errors(modes):
    return [
        *_check_each_mode(modes, ID_FORMAT),
        *_check_duplicates(modes, "id", "modes.E002"),
        *_check_each_mode(modes, KEY_FORMAT),
        *_check_duplicates(modes, "key", "modes.E004"),
        *_check_single_default(modes),
        *_check_each_mode(modes, WHEN_TO_USE),
        *_check_each_mode(modes, STATUS),
        *_check_list_fields(modes),
        *_check_graph(modes),
    ]


def catalog_graph_problems(modes) -> list[str]:
    """
    The mode graph's invariants, judged against the one default of modes (what the check and the admin say);
    none while there is not exactly one default, which modes.E005 and E006 say.
    """
    defaults = [mode for mode in modes if mode.is_default]
    return graph_problems(modes, defaults[0]) if len(defaults) == 1 else []


def _check_graph(modes):
    if any(not isinstance(mode.switch_targets, list) for mode in modes):
        return []  # modes.E009 says so
    problems = catalog_graph_problems(modes)
    return [Error(problem, hint=GRAPH_HINT, obj=AgentMode, id="modes.E010") for problem in problems]


def _names(modes):
    return ", ".join(repr(mode.key) for mode in modes)


@dataclass(frozen=True)
class ModeRule:
    """An invariant each mode keeps on its own: whether a mode keeps it (by its validators), and the check's words."""

    id: str
    kept_by: Callable[[AgentMode], bool]
    message: str  # formatted with the mode
    hint: str


ID_FORMAT = ModeRule(
    "modes.E001",
    lambda mode: passes(validate_mode_id, mode.id),
    "Mode {mode.key!r} has id {mode.id!r}, which is not 32 upper-case hexadecimal characters.",
    "Give the mode a GUID without hyphens in upper case, and update the sessions that refer to it.",
)
KEY_FORMAT = ModeRule(
    "modes.E003",
    lambda mode: passes(validate_mode_key, mode.key),
    f"Mode key {{mode.key!r}} is not snake_case ({MODE_KEY_CHARACTERS}).",
    "Rename the key, for example to 'ddr_authoring'.",
)
WHEN_TO_USE = ModeRule(
    "modes.E007",
    lambda mode: passes(validate_not_blank, mode.when_to_use) and passes(validate_single_line, mode.when_to_use),
    "Mode {mode.key!r} has no single-line when-to-use sentence.",
    "Write one sentence saying when the mode should be chosen; it is shown in the system prompt.",
)
STATUS = ModeRule(
    "modes.E008",
    lambda mode: mode.status in AgentMode.Status.values,
    f"Mode {{mode.key!r}} has status {{mode.status!r}}, which is not one of {', '.join(AgentMode.Status.values)}.",
    f"Set the status to {one_of(AgentMode.Status.values)}.",
)


def _check_each_mode(modes, rule: ModeRule):
    return [
        Error(rule.message.format(mode=mode), hint=rule.hint, obj=mode, id=rule.id)
        for mode in modes
        if not rule.kept_by(mode)
    ]


def _check_duplicates(modes, field, check_id):
    by_value = defaultdict(list)
    for mode in modes:
        by_value[getattr(mode, field)].append(mode)
    return [
        Error(
            f"Modes {_names(same)} share the {field} {value!r}.",
            hint=f"Give each mode its own {field}.",
            obj=same[0],
            id=check_id,
        )
        for value, same in by_value.items()
        if len(same) > 1
    ]


def _check_single_default(modes):
    defaults = [mode for mode in modes if mode.is_default]
    if not defaults:
        hint = "Make one mode the default with the admin's 'Make default' action."
        return [Error("No mode is the default mode.", hint=hint, obj=AgentMode, id="modes.E005")]
    if len(defaults) > 1:
        message = f"Modes {_names(defaults)} are all marked default; exactly one must be."
        hint = "Keep one default and clear the flag on the others."
        return [Error(message, hint=hint, obj=defaults[0], id="modes.E006")]
    return []


def _check_list_fields(modes):
    return [
        Error(
            f"Mode {mode.key!r} field {field!r} is not a list of non-empty, single-line strings.",
            hint="Store a JSON list of strings, for example [\"agent_list_modes\"].",
            obj=mode,
            id="modes.E009",
        )
        for mode in modes
        for field in AgentMode.list_field_names()
        if not passes(validate_string_list, getattr(mode, field))
    ]


def unresolved_tools_message(key: str, unresolved: list[str]) -> str:
    """modes.W001's words, wherever the warning is shown: check, admin, import."""
    return f"Mode {key!r} lists tool ids that name no tool: {', '.join(map(repr, unresolved))}."


UNRESOLVED_TOOLS_HINT = (
    "The model is not told of these. Declare each tool the agent's client executes in the admin "
    "(Declared tools), or correct or remove the id."
)


def _check_tool_ids(catalog):
    return [
        Warning(unresolved_tools_message(mode.key, unresolved), hint=UNRESOLVED_TOOLS_HINT, obj=mode, id="modes.W001")
        for mode in catalog.modes
        if isinstance(mode.associated_tool_ids, list)  # anything else is modes.E009's
        for unresolved in [catalog.unresolved_tool_ids(mode.associated_tool_ids)]
        if unresolved
    ]


def _check_shadowed_declarations(declared):
    return [
        Warning(
            f"Declared tool {tool.name!r} has the name of a server tool registered in code, which is used instead.",
            hint="Rename the declaration, or delete it.",
            obj=tool,
            id="modes.W002",
        )
        for tool in declared
        if registry.has(tool.name)
    ]


def _check_declared_parameters(declared):
    return [
        Warning(
            f"Declared tool {tool.name!r} has parameters no vendor would take, so the model is not told of it: "
            f"{problem}",
            hint="Correct its parameters in the admin (Declared tools); the form says what is wrong.",
            obj=tool,
            id="modes.W003",
        )
        for tool in declared
        for problem in [tool_parameters_problem(tool.parameters)]
        if problem
    ]
