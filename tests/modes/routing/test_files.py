"""Routing cases as JSON Lines and CSV: read back as written, imported all or none, by the commands too."""

import json
import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from modes.models import RoutingCase
from modes.routing import files
from modes.routing.cases import InvalidRoutingCase
from modes.routing.files import export_cases, import_cases

pytestmark = pytest.mark.django_db

CASES = [
    {"utterance": "Draft a DDR for the cache, with \"quotes\", commas, and a\nsecond line", "currentMode": "",
     "expected": "ddr_authoring"},
    {"utterance": "Thanks, that is all.", "currentMode": "workflow_authoring", "expected": "stay"},
]


def stored():
    return [(case.utterance, case.current_mode, case.expected) for case in RoutingCase.objects.all()]


@pytest.mark.parametrize("file_format", ["jsonl", "csv"])
def test_an_export_imports_back_into_an_empty_set_as_it_was(file_format):
    import_cases(text="".join(json.dumps(case) + "\n" for case in CASES), file_format="jsonl")
    before, text = stored(), export_cases(file_format=file_format)
    RoutingCase.objects.all().delete()
    assert import_cases(text=text, file_format=file_format) == {"created": 2, "updated": 0, "unchanged": 0}
    assert stored() == before


def test_a_csv_may_leave_the_current_mode_out():
    import_cases(text="utterance,expected\nWrite a DDR,ddr_authoring\n", file_format="csv")
    assert stored() == [("Write a DDR", "", "ddr_authoring")]


def test_one_bad_line_stores_nothing_and_every_problem_names_its_line():
    text = "\n".join([
        json.dumps({"utterance": "Write a DDR", "expected": "ddr_authoring"}),
        json.dumps({"utterance": "Hi", "expected": "nope"}),
        "{not json",
        "[1, 2]",
        json.dumps({"utterance": "Hi", "expected": "stay", "weight": 2}),
        json.dumps({"utterance": 5, "expected": "stay"}),
        json.dumps({"utterance": "Write a DDR", "expected": "general"}),
        json.dumps({"expected": "stay"}),
    ])
    with pytest.raises(InvalidRoutingCase) as refused:
        import_cases(text=text, file_format="jsonl")
    assert refused.value.problems == [
        "line 3: not JSON: Expecting property name enclosed in double quotes.",
        "line 4: must be one JSON object.",
        "line 5: weight: not a field of a case (utterance, currentMode, expected).",
        "line 6: utterance: must be text.",
        "line 8: utterance: every case needs one.",
        "line 2: expected: There is no mode 'nope'; name a mode's key or stay.",
        "line 7: this utterance from this mode is given again, first at line 1.",
    ]
    assert stored() == []


def test_a_case_that_exists_is_a_problem_unless_update_changes_its_expected_mode():
    import_cases(text='{"utterance": "Hi", "expected": "stay"}\n', file_format="jsonl")
    changed = '{"utterance": "Hi", "expected": "workflow_authoring"}\n'
    with pytest.raises(InvalidRoutingCase, match=re.escape("line 1: a case with this utterance from this mode exists; import with update on (--update) to change it")):
        import_cases(text=changed, file_format="jsonl")
    assert import_cases(text=changed, file_format="jsonl", update=True, dry_run=True)["updated"] == 1
    assert stored() == [("Hi", "", "stay")]
    assert import_cases(text=changed, file_format="jsonl", update=True) == {"created": 0, "updated": 1, "unchanged": 0}
    assert stored() == [("Hi", "", "workflow_authoring")]


def test_an_oversized_import_is_refused_whole(monkeypatch, settings):
    monkeypatch.setattr(files, "MAX_STORED", 2)
    three = "".join(json.dumps({"utterance": f"Case {n}", "expected": "stay"}) + "\n" for n in range(3))
    with pytest.raises(InvalidRoutingCase, match="The file holds more than 2 cases, which an import takes at most."):
        import_cases(text=three, file_format="jsonl")
    settings.API_MAX_IMPORT_BYTES = 50
    with pytest.raises(InvalidRoutingCase, match="larger than the 50 bytes"):
        import_cases(text=three, file_format="jsonl")
    assert stored() == []


def test_a_csv_row_with_more_values_than_columns_is_a_problem():
    with pytest.raises(InvalidRoutingCase, match="line 2: has more values than the header has columns"):
        import_cases(text="utterance,expected\nHi,stay,extra\n", file_format="csv")


def test_the_commands_import_and_export_and_refuse_in_one_line_changing_nothing(tmp_path):
    good, bad = tmp_path / "cases.jsonl", tmp_path / "bad.csv"
    good.write_text("".join(json.dumps(case) + "\n" for case in CASES))
    bad.write_text("utterance,expected\nHi,nope\n")
    out = StringIO()
    call_command("import_routing_cases", str(good), stdout=out)
    assert out.getvalue() == "Created 2, updated 0, left 0 unchanged.\n"
    with pytest.raises(CommandError) as refused:
        call_command("import_routing_cases", str(bad))
    assert str(refused.value) == "line 2: expected: There is no mode 'nope'; name a mode's key or stay."
    with pytest.raises(CommandError, match="Cannot tell the format"):
        call_command("import_routing_cases", str(tmp_path / "cases.txt"))
    out = StringIO()
    call_command("export_routing_cases", "--format", "csv", stdout=out)
    assert out.getvalue().splitlines()[0] == "utterance,currentMode,expected"
    assert len(stored()) == 2


def test_an_export_of_cases_holding_line_separators_imports_back():
    for text in ("a\u2028b", "c\x85d", "e\x0cf"):
        RoutingCase.objects.create(utterance=text, expected="stay")
    text = export_cases(file_format="jsonl")
    RoutingCase.objects.all().delete()
    assert import_cases(text=text, file_format="jsonl")["created"] == 3


@pytest.mark.parametrize(
    "text, file_format, problems",
    [
        ('{"utterance": "Hi", "utterance": "Ho", "expected": "stay"}', "jsonl",
         ["line 1: not JSON: the key 'utterance' appears twice in one object."]),
        ('{"utt\\ud800": "Hi", "expected": "stay"}', "jsonl",
         ["line 1: 'utt\\ud800': not a field of a case (utterance, currentMode, expected).",
          "line 1: utterance: every case needs one."]),
        # In words for whoever wrote the file, not Python's (its advice on sys.set_int_max_str_digits()).
        ('{"utterance": ' + "9" * 5000 + ', "expected": "stay"}', "jsonl",
         ["line 1: not JSON: a number in the line has too many digits."]),
        ("[" * 100_000 + "]" * 100_000, "jsonl", ["line 1: not JSON: the line is nested too deeply."]),
        ("utterance,expected,expected\nHi,stay,stay\nHo,stay,stay\n", "csv", ["the header: expected: named twice."]),
        ("utterance ,expected\nHi,stay\nHo,stay\n", "csv",
         ["the header: utterance : not a column of a case (utterance, currentMode, expected). "
          "utterance: every case needs this column."]),
        # Named as the last row before it, blank lines aside.
        ("utterance,expected\nHi,stay\n\n\n" + "x" * 200_000 + ",stay\n", "csv",
         ["line 5: not CSV: field larger than field limit (131072)."]),
    ],
)
def test_a_malformed_file_is_refused_once_per_problem_naming_it_printably(text, file_format, problems):
    with pytest.raises(InvalidRoutingCase) as refused:
        import_cases(text=text, file_format=file_format)
    assert refused.value.problems == problems


def test_a_csv_with_old_mac_line_endings_is_read():
    assert import_cases(text="utterance,expected\rHi,stay\rHo,stay\r", file_format="csv")["created"] == 2


def test_reading_stops_at_the_hundredth_problem():
    with pytest.raises(InvalidRoutingCase) as refused:
        import_cases(text="{}\n" * 5000, file_format="jsonl")
    assert len(refused.value.problems) == 101  # two for each of 50 lines, and where reading stopped
    assert refused.value.problems[-1] == "Reading stopped at line 51, after 100 problems."
