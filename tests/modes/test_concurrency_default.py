"""
Two admins making different modes the default at the same moment (PostgreSQL, real concurrent transactions):
every time, exactly one mode ends up the default, neither admin gets an error, and nobody reading the catalog
meanwhile ever sees no default or two.
"""

import functools

import pytest

from modes.models import AgentMode
from modes.services import set_default_mode

ROUNDS = 20
GENERAL, DDR, WORKFLOW = "general", "ddr_authoring", "workflow_authoring"
# Each round pits two different modes against each other, the current default among them or not.
PAIRS = [(DDR, WORKFLOW), (GENERAL, DDR), (WORKFLOW, GENERAL), (DDR, GENERAL)]


def defaults():
    return list(AgentMode.objects.filter(is_default=True).values_list("key", flat=True))


@pytest.mark.postgres(reason="needs PostgreSQL row locks and concurrent transactions")
@pytest.mark.usefixtures("modes_restored_after_flush")
class TestTwoAdminsSwitchTheDefaultAtOnce:
    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_exactly_one_default_after_every_race_and_no_errors(self, at_once):
        winners, readings = [], []
        for round_number in range(ROUNDS):
            first, second = PAIRS[round_number % len(PAIRS)]
            admins = [AgentMode.objects.get(key=key) for key in (first, second)]
            at_once(
                *(functools.partial(set_default_mode, mode=mode) for mode in admins),
                watch=lambda: readings.append(len(defaults())),
            )
            current = defaults()
            assert len(current) == 1, f"round {round_number}: defaults {current}"
            assert current[0] in (first, second)
            winners.append(current[0])

        assert readings and set(readings) == {1}, "a reader saw no default, or two"
        assert len(winners) == ROUNDS
