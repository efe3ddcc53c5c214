"""
Every write to the mode catalog goes through catalog_change, which makes it one revision (modes.revisions) judged by the
catalog's rules; and the writes with rules of their own: the default, deletions, imports, writing back revisions.
"""

from contextlib import contextmanager
from dataclasses import dataclass, field
from types import SimpleNamespace

from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.db import transaction
from django.db.models import ProtectedError

from aptix_site.service_errors import Conflict

from .catalog import Catalog, no_such_revision
from .models import AgentMode, CatalogHead, CatalogRevision, DeclaredTool
from .portable import MODE_SECTION, TOOL_SECTION, ModeFile, PortableFileError, Section, document_rows
from .revision_store import MODE, TOOL, entries_at, rows_of, state_at
from .revisions import record_revision
from .rules import catalog_errors

# How an import is told to update what exists, in every way in: the command, the API (the admin's box says it).
UPDATE = 'update on (--update, "update": true)'


@contextmanager
def catalog_change(*, by, restores: int | None = None):
    """
    One transaction whose writes become one revision by `by`, recorded as the block ends (restores: the revision a
    rollback writes back); writers queue on the head row. InvalidCatalog, nothing changed, if a rule would break.
    A block inside another records its own revision, and the outer one then finds nothing more to record.
    """
    change = SimpleNamespace(revision=None)  # once the block has ended: the revision recorded, if any
    with transaction.atomic():
        CatalogHead.locked()
        yield change
        change.revision = record_revision(created_by=by, restores=restores)


def record_unrecorded_changes(*, by=None) -> CatalogRevision | None:
    """The rows that a change made past the services left as a new revision, judged also by the deletion rules."""
    with catalog_change(by=by) as change:
        latest = CatalogHead.objects.get(pk=1).latest
        kept = set(AgentMode.objects.values_list("pk", flat=True))
        check_deletable(modes=[mode for mode in rows_of(entries_at(latest))[0] if mode.pk not in kept])
    return change.revision


class ModeDeletionRefused(Conflict):
    """Modes that must stay; nothing was deleted. The message says why, one sentence a mode."""


class ModeInUse(ModeDeletionRefused):
    """A mode that sessions use cannot be deleted (they store its id, and their audit trail names it)."""


def deletion_refusal(mode: AgentMode) -> str | None:
    """Why this mode must stay, or None if nothing about the mode itself keeps it (sessions using it: ModeInUse)."""
    if mode.is_default:
        return f"'{mode.key}' is the default mode; make another mode the default first."
    if mode.source == AgentMode.Source.BUILTIN:
        return f"'{mode.key}' is a built-in mode that AGN-014 requires; set its status to deprecated instead."
    return None


def check_deletable(*, modes) -> None:
    """Raise ModeDeletionRefused naming every one of modes that must stay, so that none of them is deleted."""
    refusals = [reason for reason in map(deletion_refusal, modes) if reason]
    if refusals:
        raise ModeDeletionRefused(" ".join(refusals))


def delete_modes(*, modes, deleted_by=None) -> None:
    """All of modes or none, as one revision, judged as the rows are once the catalog is locked."""
    with catalog_change(by=deleted_by):
        # Locked before sessions using them are looked for (_delete_rows): a session moving into one meanwhile waits
        # for this deletion, or has moved and is seen (ModeInUse).
        rows = list(AgentMode.objects.select_for_update().filter(pk__in=[mode.pk for mode in modes]))
        check_deletable(modes=rows)
        _delete_rows(rows)


def _delete_rows(rows) -> None:
    for row in rows:
        try:
            row.delete()
        except ProtectedError:
            raise ModeInUse(
                f"'{row.key}' is a mode that sessions use (or their audit trail names); a mode cannot be deleted "
                "while sessions use it. Move those sessions to another mode first."
            ) from None


def set_default_mode(*, mode: AgentMode, changed_by=None) -> None:
    """Atomically, even when two admins do this at once."""
    with catalog_change(by=changed_by):
        _switch_default_to(mode.pk)
    mode.is_default = True


def _switch_default_to(pk: str) -> None:
    # Clear before set: the one-default index is checked row by row.
    AgentMode.objects.filter(is_default=True).exclude(pk=pk).update(is_default=False)
    AgentMode.objects.filter(pk=pk, is_default=False).update(is_default=True)


def restore_revision_rows(*, number: int, document: dict, restored_by) -> CatalogRevision | None:
    """
    The rows written back to revision number's catalog document, as one revision (None if they were that catalog
    already). ModeDeletionRefused, changing nothing, if that deletes a mode that must stay.
    """
    modes, tools = document_rows(document)
    default = next(mode.pk for mode in modes if mode.is_default)
    with catalog_change(by=restored_by, restores=number) as change:
        # The revision's default first: a default the revision has not is then a mode like any other, deleted by the
        # same rules; one that is no row yet is created the default, below.
        _switch_default_to(default)
        for section, rows, name in ((MODE_SECTION, modes, "pk"), (TOOL_SECTION, tools, "name")):
            gone = section.model.objects.exclude(**{f"{name}__in": [getattr(row, name) for row in rows]})
            if section is MODE_SECTION:
                gone = gone.select_for_update()  # locked first, as in delete_modes
                check_deletable(modes=gone)
            _delete_rows(gone)
            existing = {getattr(row, name): row for row in section.model.objects.all()}
            for wanted in rows:
                if section is MODE_SECTION and wanted.pk in existing and existing[wanted.pk].key != wanted.key:
                    # A placeholder first, so that keys swapped since the revision can swap back: the key's unique
                    # index is checked row by row. The row is then saved with its revision's key, below.
                    AgentMode.objects.filter(pk=wanted.pk).update(key=f"restoring_{wanted.pk.lower()}")
            for wanted in rows:
                row = existing.get(getattr(wanted, name), wanted)
                if _apply(row, {field: getattr(wanted, field) for field in section.fields}) or row is wanted:
                    row.save()
    return change.revision


class RevertRefused(Conflict):
    """A state not in that revision, or that the fields' rules now refuse."""


def revert_row(*, model, identity: str, number: int, reverted_by) -> CatalogRevision | None:
    """
    One mode (by id) or declared tool (by name) written back to its state at revision number (created again if it
    was deleted since), as one revision checked as an edit is; RevertRefused or InvalidCatalog say why not.
    """
    if not CatalogRevision.objects.filter(number=number).exists():  # past an integer column too: none
        raise no_such_revision(number)
    kind, naming = (MODE, "pk") if model is AgentMode else (TOOL, "name")
    state = state_at(kind, identity, number)
    if state is None:
        raise RevertRefused(f"Revision {number} has no {model._meta.verbose_name} {identity!r}.")
    with catalog_change(by=reverted_by) as change:
        row = model.objects.filter(**{naming: identity}).first() or model()
        state.pop("is_default", None)  # the default moves only by set_default_mode
        _apply(row, state)
        try:
            row.full_clean()
        except ValidationError as error:
            problems = [f"{name}: {' '.join(messages)}" for name, messages in error.message_dict.items()]
            raise RevertRefused(f"Revision {number}'s state cannot be written back now: {' '.join(problems)}") from None
        row.save()
    return change.revision


def default_not_reverted(*, mode: AgentMode, number: int) -> str | None:
    """
    What a revert of mode to revision number left as it is, since the default moves only by set_default_mode (revert_row
    leaves it): None when the mode is the default now if and only if it was then.
    """
    was_default = bool((state_at(MODE, mode.pk, number) or {}).get("is_default"))
    if was_default == mode.is_default:
        return None
    then, now = ("the default", "is not now") if was_default else ("not the default", "is now")
    return (
        f"The default mode is not reverted with it: '{mode.key}' was {then} mode at revision {number} and {now}. "
        "The action 'Make the selected mode the default' moves the default."
    )


@dataclass(frozen=True)
class PlannedEntry:
    """What an import does, or would do, with one entry of the file."""

    kind: str  # "mode" or "declared tool"
    name: str
    action: str  # "created", "updated" or "unchanged"
    fields: tuple[str, ...] = ()  # for "updated", the fields that change


@dataclass
class ImportResult:
    entries: list[PlannedEntry] = field(default_factory=list)
    default: str | None = None
    # Per mode key, the tool ids it lists that name no tool (modes.W001): warnings, not problems.
    unresolved_tool_ids: dict[str, list[str]] = field(default_factory=dict)
    revision: int | None = None  # the catalog revision after the import; None for a dry run


def import_modes(
    *, mode_file: ModeFile, update: bool, dry_run: bool, imported_by=None, ids_follow_keys: bool = False
) -> ImportResult:
    """
    Every entry, or none, as one revision. PortableFileError lists every problem: of the file (read_document's
    too), each with its entry and field, or else each rule (modes.rules) that the catalog it would leave breaks.
    With ids_follow_keys, an entry's id yields to the id of the mode of its key, as the rows are once the catalog is
    locked (a coding agent's file, whose id only says where it came from, updates a mode of the same key from
    elsewhere).
    """
    if dry_run:
        return _plan(mode_file, update=update, ids_follow_keys=ids_follow_keys)[0]
    with catalog_change(by=imported_by):
        result, to_save = _plan(mode_file, update=update, ids_follow_keys=ids_follow_keys)
        if result.default:
            # Cleared before the new default's row is saved: the one-default index is checked row by row.
            AgentMode.objects.filter(is_default=True).update(is_default=False)
        for row in to_save:
            row.save()
    result.revision = CatalogHead.objects.values_list("latest", flat=True).get(pk=1)
    return result


def _plan(mode_file: ModeFile, *, update, ids_follow_keys):
    """What importing mode_file does: its result, and the rows to save."""
    problems, result, to_save = list(mode_file.problems), ImportResult(), []
    tools = {tool.name: tool for tool in DeclaredTool.objects.all()}
    modes = {mode.key: mode for mode in AgentMode.objects.all()}
    current_default = next((key for key, mode in modes.items() if mode.is_default), None)
    ids_in_use, seen_ids = {mode.pk: key for key, mode in modes.items()}, {}

    def vet(entry, mode) -> bool:
        """A mode's id never changes: False when the rest would be checked against the wrong row. With
        ids_follow_keys, the entry's id is dropped for a mode that exists, which keeps its own."""
        entry_id = entry.fields.get("id")
        if entry_id is None:
            return True
        if ids_follow_keys and mode is not None:
            del entry.fields["id"]  # the mode keeps its own
            return True
        problem = None
        if entry_id in seen_ids:
            problem = f"{entry_id!r} appears again, first at modes[{seen_ids[entry_id]}]."
        elif mode is not None and entry_id != mode.pk:
            kind = "built-in " if mode.source == AgentMode.Source.BUILTIN else ""
            problem = f"the {kind}mode {mode.key!r} has id {mode.pk}; ids never change."
        elif mode is None and entry_id in ids_in_use:
            problem = f"{entry_id} belongs to mode {ids_in_use[entry_id]!r}; import cannot rename a mode."
        seen_ids.setdefault(entry_id, entry.index)
        if problem:
            problems.append(f"{entry.where}: id: {problem}")
        return problem is None

    def planned(section, name, row, changed_fields):
        adding = row._state.adding
        if adding or changed_fields:
            to_save.append(row)
        action = "created" if adding else "updated" if changed_fields else "unchanged"
        result.entries.append(PlannedEntry(section.noun, name, action, () if adding else tuple(changed_fields)))

    for _, name, tool, changed_fields in _checked_rows(mode_file.tools, TOOL_SECTION, tools, update, problems):
        tools[name] = tool
        planned(TOOL_SECTION, name, tool, changed_fields)
    declared = Catalog(None, (), tuple(tools.values()))  # the tools the import would leave
    marked_default = []
    for entry, key, mode, changed_fields in _checked_rows(
        mode_file.entries, MODE_SECTION, modes, update, problems, vet=vet
    ):
        modes[key] = mode
        planned(MODE_SECTION, key, mode, changed_fields)
        unresolved = declared.unresolved_tool_ids(mode.associated_tool_ids)
        if unresolved:
            result.unresolved_tool_ids[key] = unresolved
        if entry.fields.get("is_default") is True:
            marked_default.append(key)
    if marked_default:  # the default moves to the mode the file marks (to more than one: modes.E006 refuses it)
        for mode in modes.values():
            mode.is_default = mode.key in marked_default
    if not problems:
        problems = [f"{error.id}: {error.msg}" for error in catalog_errors(list(modes.values()))]
    if problems:
        raise PortableFileError(problems)
    result.default = next((key for key in marked_default if key != current_default), None)
    # A new mode with no position goes last, in the file's order, as AgentMode.save() places one; it asks the
    # database for the last position, once per mode, over the table the import makes grow.
    last = max((mode.position for mode in modes.values() if mode.position is not None), default=None)
    for row in to_save:
        if isinstance(row, AgentMode) and row.position is None:
            last = row.position = AgentMode.position_after(last)
    return result, to_save


def _checked_rows(entries, section: Section, existing: dict, update, problems, *, vet=lambda entry, row: True):
    """
    (entry, name, row, changed fields) for each entry of one section of the file that passes the checks the admin
    makes of a row, and vet(entry, the existing row or None); the others add their problems.
    """
    naming, seen = section.naming_field, {}
    for entry in entries:
        where, fields = entry.where, entry.fields
        problems += [f"{where}: {problem}" for problem in entry.problems]
        if fields is None:
            continue
        name = fields.get(naming)
        if not name:
            if naming not in entry.rejected:
                problems.append(f"{where}: {naming}: every {section.noun} needs a {naming}.")
            continue
        if name in seen:
            problems.append(f"{where}: {naming}: {name!r} appears again, first at {section.name}[{seen[name]}].")
            continue
        seen[name] = entry.index
        row = existing.get(name)
        if row is not None and not update:
            exists = section.exists.format(name=name)
            problems.append(f"{where}: {naming}: {exists}; import with {UPDATE} to update it.")
            continue
        if not vet(entry, row):
            continue
        row = row or section.model()
        changed_fields = _apply(row, fields)
        try:
            # A field given with a wrong type is reported already, and was not set: not checked again. The default
            # is judged on the whole catalog the import leaves (modes.E005, E006), not against the rows as they are.
            # Each check constraint repeats a field's validator (models.regex_check, choices), and Django checks one
            # with a query: five per mode made an import of 20,000 modes 100,000 queries.
            row.full_clean(exclude={*entry.rejected, "is_default"}, validate_unique=False, validate_constraints=False)
        except ValidationError as error:
            problems += [
                f"{where}: {message}" if field_name == NON_FIELD_ERRORS else f"{where}: {field_name}: {message}"
                for field_name, messages in error.message_dict.items()
                for message in messages
            ]
            continue
        yield entry, name, row, changed_fields


def _apply(row, fields) -> list[str]:
    """Set the given fields on row; the names of those whose value changes."""
    changed = [name for name, value in fields.items() if getattr(row, name) != value]
    for name in changed:
        setattr(row, name, fields[name])
    return changed
