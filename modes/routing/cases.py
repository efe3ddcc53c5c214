"""
Routing cases: the stored ones (RoutingCase, written here) and each mode's example utterances, as the list of Case a
catalog is scored on. A stored case names modes by key, so it is judged against a catalog when it is scored: one naming
a mode the catalog lacks is skipped, and said so.
"""

import hashlib
import json
from dataclasses import dataclass

from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.db import IntegrityError, transaction

from aptix_site.service_errors import InvalidInput

from ..catalog import Catalog
from ..models import ROUTING_STAY, AgentMode, CatalogHead, RoutingCase


@dataclass(frozen=True)
class Case:
    utterance: str
    current_mode: str  # a key of the catalog scored
    expected: str  # a key of the catalog scored, or ROUTING_STAY
    source: str = "case"  # "case" (stored) or the key of the mode whose example utterance it is

    def shown(self, predicted: str | None) -> dict:
        """As an evaluation's failures list it."""
        return {"utterance": self.utterance, "current_mode": self.current_mode, "expected": self.expected,
                "predicted": predicted}

    @property
    def identity(self) -> tuple[str, str, str]:
        return self.utterance, self.current_mode, self.expected


class InvalidRoutingCase(InvalidInput):
    """A case that cannot be stored: each problem, one line, naming its field."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__(" ".join(problems))


def case_problems(case: RoutingCase, *, keys: dict[str, bool], unique: bool = True) -> list[str]:
    """Why case cannot be stored (its fields' rules, mode_problems), one line each, naming the field as files do."""
    try:
        case.full_clean(validate_unique=unique, validate_constraints=unique)
    except ValidationError as error:
        return [f"{PUBLIC[name]}: {message}" for name, messages in error.message_dict.items() for message in messages]
    return [f"{PUBLIC[name]}: {message}" for name, message in mode_problems(case, keys=keys).items()]


# A case's fields as files and the API name them, and as the model does: the one mapping between the two.
FIELDS = {"utterance": "utterance", "currentMode": "current_mode", "expected": "expected"}
PUBLIC = {**{field: name for name, field in FIELDS.items()}, NON_FIELD_ERRORS: "case"}


def mode_problems(case: RoutingCase, *, keys: dict[str, bool]) -> dict[str, str]:
    """Per field, why the modes case names do not fit the catalog's rows (keys: mode_keys())."""
    problems = {}
    if case.current_mode and case.current_mode not in keys:
        problems["current_mode"] = f"There is no mode {case.current_mode!r}."
    if case.expected != ROUTING_STAY and case.expected not in keys:
        problems["expected"] = f"There is no mode {case.expected!r}; name a mode's key or {ROUTING_STAY}."
    elif case.expected == case.current_mode or (not case.current_mode and keys.get(case.expected)):
        problems["expected"] = f"A session already in {case.expected!r} stays there: write {ROUTING_STAY}."
    return problems


def mode_keys() -> dict[str, bool]:
    """Each mode's key, and whether it is the default: what a case may name."""
    return dict(AgentMode.objects.values_list("key", "is_default"))


MAX_STORED = 10_000  # every evaluation scores every case: a bound on what one request costs


def room_problems(*, adding: bool) -> list[str]:
    """
    Why one more case cannot be stored, if adding one, counted under the catalog's lock (CatalogHead.locked, held
    until the caller's transaction ends): a request counting the stored cases waits for one adding a case, and counts
    it, so that together they never pass MAX_STORED. An edit takes no lock: it cannot pass the bound, so it does not
    queue behind catalog writes and releases.
    """
    if not adding:
        return []
    CatalogHead.locked()
    if RoutingCase.objects.count() >= MAX_STORED:
        return [f"There are {MAX_STORED:,} cases, as many as an evaluation takes: delete some first."]
    return []


def save_case(case: RoutingCase) -> RoutingCase:
    """Store a new or changed case; InvalidRoutingCase, nothing stored, if a rule refuses it."""
    if problems := case_problems(case, keys=mode_keys()):
        raise InvalidRoutingCase(problems)
    try:
        with transaction.atomic():
            if problems := room_problems(adding=case._state.adding):
                raise InvalidRoutingCase(problems)
            case.save()
    except IntegrityError:  # the same case, added at the same moment by another request
        raise InvalidRoutingCase(["case: A case with this utterance from this mode exists already."]) from None
    return case


def catalog_cases(catalog: Catalog, stored) -> tuple[list[Case], list[dict]]:
    """
    (the cases to score catalog on, the stored ones it cannot score, each with why). Each mode's example utterances
    are cases too: the mode expected from the default mode, and stay from the mode itself. A stored case replaces an
    example one with the same utterance and current mode.
    """
    default = catalog.default.key
    cases, skipped = {}, []
    for mode in catalog.modes:
        for utterance in mode.example_utterances:
            if mode.key != default:
                cases[utterance, default] = Case(utterance, default, mode.key, source=mode.key)
            cases[utterance, mode.key] = Case(utterance, mode.key, ROUTING_STAY, source=mode.key)
    stored_here = set()
    for row in stored:
        case = Case(row.utterance, row.current_mode or default, row.expected)
        if case.current_mode not in catalog.by_key or case.expected not in {*catalog.by_key, ROUTING_STAY}:
            reason = "It names a mode this revision lacks."
        elif case.expected == case.current_mode:
            reason = f"It expects {case.expected}, the mode it starts in (the default here), which is staying."
        elif (case.utterance, case.current_mode) in stored_here:
            reason = "Another case has its utterance from the same mode (the default here)."
        else:
            stored_here.add((case.utterance, case.current_mode))
            cases[case.utterance, case.current_mode] = case
            continue
        skipped.append({**case.shown(None), "reason": reason})
    return list(cases.values()), skipped


def cases_digest(stored) -> str:
    """What the stored cases are, as a SHA-256: an evaluation made on other cases than these is out of date."""
    lines = sorted(json.dumps([row.utterance, row.current_mode, row.expected]) for row in stored)
    return hashlib.sha256("\n".join(lines).encode("utf-8", "surrogatepass")).hexdigest()
