"""
Routing cases: the stored ones (RoutingCase, written here) and each mode's example utterances, as the list of Case a
catalog is scored on. A stored case names modes by key, so it is judged against a catalog when it is scored: one naming
a mode the catalog lacks is skipped, and said so.
"""

from dataclasses import dataclass

from django.core.exceptions import NON_FIELD_ERRORS, ValidationError

from aptix_site.service_errors import InvalidInput

from ..catalog import Catalog
from ..models import ROUTING_STAY, AgentMode, RoutingCase


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


PUBLIC = {"utterance": "utterance", "current_mode": "currentMode", "expected": "expected", NON_FIELD_ERRORS: "case"}


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


def save_case(case: RoutingCase) -> RoutingCase:
    """Store a new or changed case; InvalidRoutingCase, nothing stored, if a rule refuses it."""
    if problems := case_problems(case, keys=mode_keys()):
        raise InvalidRoutingCase(problems)
    case.save()
    return case


def catalog_cases(catalog: Catalog, stored) -> tuple[list[Case], list[Case]]:
    """
    (the cases to score catalog on, the stored ones naming a mode it lacks). Each mode's example utterances are
    cases too: the mode expected from the default mode, and stay from the mode itself. A stored case replaces an
    example one with the same utterance and current mode.
    """
    default = catalog.default.key
    cases, skipped = {}, []
    for mode in catalog.modes:
        for utterance in mode.example_utterances:
            if mode.key != default:
                cases[utterance, default] = Case(utterance, default, mode.key, source=mode.key)
            cases[utterance, mode.key] = Case(utterance, mode.key, ROUTING_STAY, source=mode.key)
    for row in stored:
        case = Case(row.utterance, row.current_mode or default, row.expected)
        known = case.current_mode in catalog.by_key and case.expected in {*catalog.by_key, ROUTING_STAY}
        if known and case.expected != case.current_mode:
            cases[case.utterance, case.current_mode] = case
        else:
            skipped.append(case)
    return list(cases.values()), skipped
