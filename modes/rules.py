"""
The mode catalog's rules (AGN-014 §7, the mode graph), stated once: every write and publication runs validate_catalog
(modes.revisions, modes.releases); the system checks (modes.checks) report them, same ids, for the published revision.
"""

from collections import defaultdict

from django.core.checks import Error

from aptix_site.service_errors import Conflict

from .graph import GRAPH_HINT, catalog_graph_problems
from .models import AgentMode
from .validators import (
    MODE_KEY_CHARACTERS, one_of, passes, validate_mode_id, validate_mode_key, validate_not_blank, validate_single_line,
    validate_string_list
)


class InvalidCatalog(Conflict):
    """A catalog that breaks a rule: the message names each rule (its check id) and what breaks it."""

    def __init__(self, errors):
        self.errors = list(errors)
        super().__init__(
            "This would break the catalog's rules: " + " ".join(f"{error.id}: {error.msg}" for error in self.errors)
        )


def validate_catalog(modes) -> None:
    """InvalidCatalog if modes break a rule of the catalog."""
    errors = catalog_errors(list(modes))
    if errors:
        raise InvalidCatalog(errors)


# The rules each mode keeps on its own: (check id, whether a mode keeps it, message and hint, formatted with it).
MODE_RULES = (
    (
        "modes.E001",
        lambda mode: passes(validate_mode_id, mode.id),
        "Mode {mode.key!r} has id {mode.id!r}, which is not 32 upper-case hexadecimal characters.",
        "Give the mode a GUID without hyphens in upper case, and update the sessions that refer to it.",
    ),
    (
        "modes.E003",
        lambda mode: passes(validate_mode_key, mode.key),
        f"Mode key {{mode.key!r}} is not snake_case ({MODE_KEY_CHARACTERS}).",
        "Rename the key, for example to 'ddr_authoring'.",
    ),
    (
        "modes.E007",
        lambda mode: passes(validate_not_blank, mode.when_to_use) and passes(validate_single_line, mode.when_to_use),
        "Mode {mode.key!r} has no single-line when-to-use sentence.",
        "Write one sentence saying when the mode should be chosen; it is shown in the system prompt.",
    ),
    (
        "modes.E008",
        lambda mode: mode.status in AgentMode.Status.values,
        f"Mode {{mode.key!r}} has status {{mode.status!r}}, which is not one of {', '.join(AgentMode.Status.values)}.",
        f"Set the status to {one_of(AgentMode.Status.values)}.",
    ),
    (
        "modes.E011",
        lambda mode: mode.entry_confirmation in AgentMode.EntryConfirmation.values,
        "Mode {mode.key!r} has entry confirmation {mode.entry_confirmation!r}, which is not one of "
        f"{', '.join(AgentMode.EntryConfirmation.values)}.",
        f"Set its entry confirmation to {one_of(AgentMode.EntryConfirmation.values)}.",
    ),
)


def catalog_errors(modes):
    """Every rule that modes break, as the system checks report them, in the order of their ids."""
    errors = [
        Error(message.format(mode=mode), hint=hint, obj=mode, id=check_id)
        for check_id, kept_by, message, hint in MODE_RULES
        for mode in modes
        if not kept_by(mode)
    ]
    errors += [
        Error(
            f"Mode {mode.key!r} field {field!r} is not a list of non-empty, single-line strings.",
            hint="Store a JSON list of strings, for example [\"agent_list_modes\"].", obj=mode, id="modes.E009",
        )
        for mode in modes
        for field in AgentMode.list_field_names()
        if not passes(validate_string_list, getattr(mode, field))
    ]
    for field, check_id in (("id", "modes.E002"), ("key", "modes.E004")):
        by_value = defaultdict(list)
        for mode in modes:
            by_value[getattr(mode, field)].append(mode)
        for value, same in by_value.items():
            if len(same) > 1:
                message, hint = f"Modes {_names(same)} share the {field} {value!r}.", f"Give each mode its own {field}."
                errors.append(Error(message, hint=hint, obj=same[0], id=check_id))
    defaults = [mode for mode in modes if mode.is_default]
    if not defaults:
        hint = "Make one mode the default with the admin's 'Make default' action."
        errors.append(Error("No mode is the default mode.", hint=hint, obj=AgentMode, id="modes.E005"))
    elif len(defaults) > 1:
        message = f"Modes {_names(defaults)} are all marked default; exactly one must be."
        hint = "Keep one default and clear the flag on the others."
        errors.append(Error(message, hint=hint, obj=defaults[0], id="modes.E006"))
    if all(isinstance(mode.switch_targets, list) for mode in modes):  # else modes.E009 says so
        problems = catalog_graph_problems(modes)
        errors += [Error(problem, hint=GRAPH_HINT, obj=AgentMode, id="modes.E010") for problem in problems]
    return sorted(errors, key=lambda error: error.id)


def _names(modes):
    return ", ".join(repr(mode.key) for mode in modes)
