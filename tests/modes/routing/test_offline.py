"""The offline scorer: no network and nothing downloaded; the closest mode, or stay."""

import os

import pytest

from modes.catalog import Catalog
from modes.models import AgentMode
from modes.routing.cases import Case
from modes.routing.offline import OfflineScorer

from ...servers import django_process

# A fresh process with every way out to the network closed, and an empty home: no cache to find a model in.
OFFLINE = """
import socket
def refuse(*args, **kwargs):
    raise OSError("the network is closed to this test")
socket.socket.connect = socket.socket.connect_ex = socket.create_connection = socket.getaddrinfo = refuse
from modes.catalog import Catalog
from modes.models import AgentMode
from modes.routing.cases import Case
from modes.routing.offline import OfflineScorer
catalog = Catalog(1, (
    AgentMode(key="general", is_default=True, when_to_use="Use this mode for general questions and small talk."),
    AgentMode(key="sql_help", when_to_use="Use this mode when the user wants a SQL query written or fixed."),
))
case = Case("Write me a SQL query that joins orders to customers.", "general", "sql_help")
print(*(outcome.predicted for outcome in OfflineScorer().outcomes(catalog, [case])))
"""


def test_it_scores_with_no_network_and_downloads_nothing(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"), "HF_HOME": str(home / "hf"),
           "DATABASE_URL": "sqlite:///" + str(tmp_path / "unused.sqlite3")}
    done = django_process(env, OFFLINE)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["sql_help"]
    assert list(home.iterdir()) == []  # no cache written: the model came from the wheel


def catalog(*modes):
    return Catalog(1, tuple(modes))


GENERAL = AgentMode(key="general", is_default=True, when_to_use="Use this mode for general questions and small talk.")
SQL = AgentMode(key="sql_help", when_to_use="Use this mode when the user wants a SQL query written or fixed.",
                example_utterances=["Fix my SQL join."])


@pytest.mark.parametrize(
    "case, predicted",
    [
        (Case("Write a SQL query joining orders to customers.", "general", "sql_help"), "sql_help"),
        (Case("Write a SQL query joining orders to customers.", "sql_help", "stay"), "stay"),  # closest: its own
        (Case("zxqv wvut", "general", "stay"), "stay"),  # close to nothing: below the threshold
    ],
)
def test_it_proposes_the_closest_mode_unless_it_is_the_current_one_or_none_is_close(case, predicted):
    assert [outcome.predicted for outcome in OfflineScorer().outcomes(catalog(GENERAL, SQL), [case])] == [predicted]


def test_a_case_is_not_scored_by_its_own_text():
    own = Case("Fix my SQL join.", "general", "sql_help")
    # With its example utterance as the only text, the mode is found; without it, only the threshold stands.
    alone = AgentMode(key="sql_help", when_to_use="Use this mode for zxqv.", example_utterances=["Fix my SQL join."])
    assert [outcome.predicted for outcome in OfflineScorer(0.5).outcomes(catalog(GENERAL, alone), [own])] == ["stay"]


def test_two_modes_with_the_same_line_tie_and_the_first_in_the_catalog_wins_on_any_machine():
    line = "Use this mode when the user wants SQL queries, reports, dashboards or charts of sales figures."
    sql, reports = (AgentMode(key=key, when_to_use=line) for key in ("sql_help", "data_reports"))
    cases = [Case(text, "general", "data_reports") for text in (
        "Build me a dashboard of weekly sales figures.", "Make a monthly revenue report for the board.",
        "Chart this quarter's sales by region for the report.", "Write a SQL query that joins orders to customers.",
    )]
    # A matrix product rounds a column by where it falls in the kernel's blocks (4 to 16 wide): with 0 to 31 modes
    # before them, the two lines fall in every pair of places.
    for count in range(32):
        others = [AgentMode(key=f"other_{n}", when_to_use=f"Use this mode for topic number {n}.") for n in range(count)]
        for first, second in ((sql, reports), (reports, sql)):
            outcomes = OfflineScorer(0.1).outcomes(catalog(GENERAL, *others, first, second), cases)
            assert [outcome.predicted for outcome in outcomes] == [first.key] * len(cases), count
