"""Writes to the mode catalog that must keep its invariants: switching the default, importing files."""

from dataclasses import dataclass, field

from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.db import transaction

from .catalog import unresolved_tool_ids
from .models import AgentMode
from .portable import ModeFile, PortableFileError


def set_default_mode(*, mode: AgentMode) -> None:
    """Make mode the one default, atomically, even when two admins do this at once."""
    with transaction.atomic():
        _lock_catalog()
        _switch_default_to(mode.pk)
    mode.is_default = True


def _lock_catalog() -> None:
    # Every row, in one order: concurrent writers queue here instead of each
    # clearing a default the other has just set.
    list(AgentMode.objects.select_for_update().order_by("pk").values_list("pk", flat=True))


def _switch_default_to(pk: str) -> None:
    # Clear before set: the one-default index is checked row by row.
    AgentMode.objects.filter(is_default=True).exclude(pk=pk).update(is_default=False)
    AgentMode.objects.filter(pk=pk).update(is_default=True)


@dataclass
class ImportResult:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    default: str | None = None
    # Per mode key, the tool ids it lists that name no tool (modes.W001): warnings, not problems.
    unresolved_tool_ids: dict[str, list[str]] = field(default_factory=dict)


def import_modes(*, mode_file: ModeFile, update: bool, dry_run: bool) -> ImportResult:
    """
    Validate every entry, then apply all of them or none. Raises PortableFileError listing every
    problem of the file, those read_document found included, each with its entry and field.
    """
    with transaction.atomic():
        _lock_catalog()
        existing = {mode.key: mode for mode in AgentMode.objects.all()}
        result, to_save, new_default_pk = _plan(mode_file, existing, update=update)
        if not dry_run:
            for mode in to_save:
                mode.save()
            if new_default_pk is not None:
                _switch_default_to(new_default_pk)
    return result


def _plan(mode_file: ModeFile, existing, *, update):
    problems = list(mode_file.problems)
    entries = mode_file.entries
    result = ImportResult()
    to_save = []
    new_default_pk = None
    ids_in_use = {mode.pk: mode.key for mode in existing.values()}
    seen_keys, seen_ids = {}, {}
    defaults = [entry for entry in entries if entry.fields and entry.fields.get("is_default") is True]
    current_default = next((mode.key for mode in existing.values() if mode.is_default), None)

    if len(defaults) > 1:
        names = " and ".join(entry.where for entry in defaults)
        problems.append(f"{names} are each marked is_default: true; only one mode can be the default.")

    for index, entry in enumerate(entries):
        where, fields = entry.where, entry.fields
        problems += [f"{where}: {problem}" for problem in entry.problems]
        if fields is None:
            continue
        key = fields.get("key")
        if not key:
            if "key" not in entry.rejected:
                problems.append(f"{where}: key: every mode needs a key.")
            continue
        if key in seen_keys:
            problems.append(f"{where}: key: {key!r} appears again, first at modes[{seen_keys[key]}].")
            continue
        seen_keys[key] = index
        mode = existing.get(key)
        if mode is not None and not update:
            problems.append(f"{where}: key: mode {key!r} already exists; pass --update to update it.")
            continue
        entry_id = fields.get("id")
        if entry_id is not None:
            id_problem = None
            if entry_id in seen_ids:
                id_problem = f"{entry_id!r} appears again, first at modes[{seen_ids[entry_id]}]."
            elif mode is not None and entry_id != mode.pk:
                kind = "built-in " if mode.source == AgentMode.Source.BUILTIN else ""
                id_problem = f"the {kind}mode {key!r} has id {mode.pk}; ids never change."
            elif mode is None and entry_id in ids_in_use:
                id_problem = f"{entry_id} belongs to mode {ids_in_use[entry_id]!r}; import cannot rename a mode."
            seen_ids.setdefault(entry_id, index)
            if id_problem:
                # The rest of the entry would be checked against the wrong row: one clear problem is enough.
                problems.append(f"{where}: id: {id_problem}")
                continue
        if mode is not None and key == current_default and fields.get("is_default") is False and not defaults:
            problems.append(
                f"{where}: is_default: this takes the default away from {key!r} without making another mode "
                "the default."
            )

        if mode is None:
            mode = AgentMode(source=AgentMode.Source.CUSTOM)
            changed = True
        else:
            changed = False
        for name, value in fields.items():
            if name == "is_default":
                continue  # applied after all rows, by switching the default
            if getattr(mode, name) != value:
                setattr(mode, name, value)
                changed = True
        try:
            # A field given with a wrong type is reported already, and was not set: not checked again.
            mode.full_clean(exclude=entry.rejected, validate_unique=False)
        except ValidationError as error:
            problems += [
                f"{where}: {message}" if name == NON_FIELD_ERRORS else f"{where}: {name}: {message}"
                for name, messages in error.message_dict.items()
                for message in messages
            ]
            continue
        unresolved = unresolved_tool_ids(mode.associated_tool_ids)
        if unresolved:
            result.unresolved_tool_ids[key] = unresolved
        if fields.get("is_default") is True and key != current_default:
            result.default, new_default_pk = key, mode.pk
        if mode._state.adding:
            result.created.append(key)
            to_save.append(mode)
        elif changed:
            result.updated.append(key)
            to_save.append(mode)
        else:
            result.unchanged.append(key)

    if problems:
        raise PortableFileError(problems)
    return result, to_save, new_default_pk
