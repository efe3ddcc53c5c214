"""Routing cases: the stored ones and the modes' example utterances, and the rules a stored case must meet."""

import pytest

from modes.catalog import published_catalog
from modes.models import RoutingCase
from modes.routing.cases import InvalidRoutingCase, catalog_cases, save_case

pytestmark = pytest.mark.django_db


def test_each_example_utterance_is_a_case_for_its_mode_from_the_default_and_stay_from_the_mode_itself():
    catalog = published_catalog()
    cases, skipped = catalog_cases(catalog, [])
    utterance = catalog.mode("ddr_authoring").example_utterances[0]
    assert {(case.current_mode, case.expected) for case in cases if case.utterance == utterance} == {
        ("general", "ddr_authoring"), ("ddr_authoring", "stay")
    }
    general_example = catalog.mode("general").example_utterances[0]  # the default: from itself, stay; once
    assert [(case.current_mode, case.expected) for case in cases if case.utterance == general_example] == [
        ("general", "stay")
    ]
    assert skipped == []


def test_a_stored_case_replaces_the_example_case_with_its_utterance_and_mode():
    catalog = published_catalog()
    utterance = catalog.mode("ddr_authoring").example_utterances[0]
    stored = RoutingCase(utterance=utterance, current_mode="", expected="workflow_authoring")
    cases, _ = catalog_cases(catalog, [stored])
    assert [case.expected for case in cases if (case.utterance, case.current_mode) == (utterance, "general")] == [
        "workflow_authoring"
    ]


def test_a_stored_case_naming_a_mode_the_revision_lacks_is_skipped_and_said_so():
    stored = RoutingCase(utterance="Plan the sprint.", current_mode="", expected="sprint_planning")
    cases, skipped = catalog_cases(published_catalog(), [stored])
    assert [(case["utterance"], case["reason"]) for case in skipped] == [
        ("Plan the sprint.", "It names a mode this revision lacks.")
    ]
    assert "Plan the sprint." not in {case.utterance for case in cases}


@pytest.mark.parametrize(
    "fields, problem",
    [
        ({"utterance": "Hi", "expected": "nope"}, "expected: There is no mode 'nope'"),
        ({"utterance": "Hi", "current_mode": "nope", "expected": "stay"}, "currentMode: There is no mode 'nope'."),
        ({"utterance": "  ", "expected": "stay"}, "utterance: "),
        ({"utterance": "Hi\x00", "expected": "stay"}, "utterance: Null characters are not allowed."),
        ({"utterance": "x" * 1001, "expected": "stay"}, "utterance: Ensure this value has at most 1000 characters"),
        ({"utterance": "Hi", "current_mode": "ddr_authoring", "expected": "ddr_authoring"}, "write stay"),
        ({"utterance": "Hi", "expected": "general"}, "A session already in 'general' stays there: write stay."),
        ({"utterance": "Hi", "expected": "Not A Key"}, "expected: A mode key is snake_case"),
    ],
)
def test_a_case_that_breaks_a_rule_is_refused_naming_its_field_and_nothing_is_stored(fields, problem):
    with pytest.raises(InvalidRoutingCase, match=problem.replace("(", r"\(")):
        save_case(RoutingCase(**fields))
    assert not RoutingCase.objects.exists()


def test_the_same_utterance_from_the_same_mode_is_refused_a_second_time():
    save_case(RoutingCase(utterance="Hi", expected="stay"))
    with pytest.raises(InvalidRoutingCase, match="exists already"):
        save_case(RoutingCase(utterance="Hi", expected="ddr_authoring"))
    save_case(RoutingCase(utterance="Hi", current_mode="ddr_authoring", expected="general"))  # from another mode
    assert RoutingCase.objects.count() == 2


def test_two_cases_that_start_in_the_same_mode_once_the_default_is_read_are_scored_once_and_the_other_said_so():
    stored = [RoutingCase(utterance="Hi", current_mode="", expected="stay"),
              RoutingCase(utterance="Hi", current_mode="general", expected="ddr_authoring")]
    cases, skipped = catalog_cases(published_catalog(), stored)
    assert [(case.current_mode, case.expected) for case in cases if case.utterance == "Hi"] == [("general", "stay")]
    assert [case["reason"] for case in skipped] == [
        "Another case has its utterance from the same mode (the default here)."
    ]


def test_no_mode_may_be_keyed_stay_which_routing_cases_read_as_no_switch(new_mode):
    from django.core.exceptions import ValidationError

    from tests.conftest import valid_mode

    with pytest.raises(ValidationError, match="no mode can have it as its key"):
        valid_mode("stay").full_clean()


def test_the_stored_cases_are_bounded(monkeypatch):
    from modes.routing import cases, files

    monkeypatch.setattr(cases, "MAX_STORED", 1)
    monkeypatch.setattr(files, "MAX_STORED", 1)
    save_case(RoutingCase(utterance="Hi", expected="stay"))
    with pytest.raises(InvalidRoutingCase, match="There are 1 cases, as many as an evaluation takes"):
        save_case(RoutingCase(utterance="Hello", expected="stay"))
    with pytest.raises(InvalidRoutingCase, match="would pass the 1 an evaluation takes"):
        files.import_cases(text='{"utterance": "Hello", "expected": "stay"}\n', file_format="jsonl")
    assert RoutingCase.objects.count() == 1
