"""An evaluation's figures, exact on a hand-counted example, and eval_routing's table."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from modes.models import RoutingEvaluation
from modes.routing.cases import Case
from modes.routing.evaluation import Outcome, measure

LABELS = ["general", "sql_help", "data_reports", "stay"]


def test_accuracy_precision_recall_and_the_confusion_matrix_are_counted_exactly():
    cases = [
        Case("a", "general", "sql_help"), Case("b", "general", "sql_help"), Case("c", "general", "data_reports"),
        Case("d", "general", "data_reports"), Case("e", "sql_help", "stay"), Case("f", "general", "stay"),
    ]
    outcomes = [
        Outcome("sql_help"), Outcome("sql_help", called="sql_help"), Outcome("sql_help"), Outcome("data_reports"),
        Outcome("stay"), Outcome(None, error="Rate limited (429): the endpoint asks for fewer requests."),
    ]
    result = measure(cases, outcomes, labels=LABELS)
    assert (result["cases"], result["passed"], result["accuracy"], result["errors"]) == (6, 3, 0.5, 1)
    assert result["confusion"] == {
        "sql_help": {"sql_help": 2}, "data_reports": {"sql_help": 1, "data_reports": 1}, "stay": {"stay": 1},
    }
    # sql_help: predicted 3 times, right twice; expected twice, found twice (a violation still counts as found).
    assert result["per_mode"]["sql_help"] == {"precision": 0.6667, "recall": 1.0}
    assert result["per_mode"]["data_reports"] == {"precision": 1.0, "recall": 0.5}
    assert result["per_mode"]["general"] == {"precision": None, "recall": None}
    assert result["per_mode"]["stay"] == {"precision": 1.0, "recall": 0.5}
    assert [failure["utterance"] for failure in result["failures"]] == ["b", "c", "f"]
    assert result["failures"][2]["error"] == "Rate limited (429): the endpoint asks for fewer requests."
    assert result["violations"] == [
        {"utterance": "b", "current_mode": "general", "expected": "sql_help", "predicted": "sql_help",
         "called": "sql_help"}
    ]


@pytest.mark.django_db
def test_eval_routing_of_an_unknown_revision_says_so_in_one_line_and_draws_no_bar(capsys):
    # The progress bar was drawn first, on the error's line (on the process's stderr).
    with pytest.raises(CommandError, match=r"^There is no catalog revision 999; revisions run from 1 to \d+\.$"):
        call_command("eval_routing", "--revision", "999", stdout=StringIO(), stderr=StringIO())
    assert capsys.readouterr().err == ""


@pytest.mark.django_db
def test_eval_routing_prints_the_table_and_stores_the_evaluation(overlapping_modes):
    out = StringIO()
    call_command("eval_routing", stdout=out, stderr=StringIO())
    evaluation = RoutingEvaluation.objects.get()
    lines = out.getvalue().splitlines()
    assert lines[0] == (
        f"Revision {evaluation.revision_id}, offline scorer: {evaluation.result['passed']} of "
        f"{evaluation.result['cases']} cases routed right ({evaluation.result['accuracy']:.1%})."
    )
    row = next(line for line in lines if line.startswith("data_reports "))
    assert "sql_help 3" in row
    assert f"Failures ({len(evaluation.result['failures'])}):" in lines
