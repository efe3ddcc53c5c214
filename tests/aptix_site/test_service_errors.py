"""
A service's refusal (aptix_site.service_errors) is answered by its kind, the same way wherever it comes from:
over REST with the status of that kind, and on the command line as one line naming the field it is about.
"""

import pytest
from django.core.management.base import CommandError

from aptix_site.api import rest_exception
from aptix_site.commands import ServiceCommand
from aptix_site.service_errors import Conflict, InvalidInput, NotAllowed, NotFound, RateLimited, ServiceError


@pytest.mark.parametrize(
    "error, status",
    [
        (NotFound("No such thing."), 404),
        (NotAllowed("Not for you."), 403),
        (Conflict("Not now."), 409),
        (InvalidInput("Not a number."), 400),
        (ServiceError("Refused."), 400),
        (RateLimited("Slow down.", retry_after=1.2), 429),
    ],
)
def test_each_kind_of_refusal_has_its_http_status_and_says_why(error, status):
    answer = rest_exception(error)
    assert answer.status_code == status
    assert str(error) in str(answer.detail)


def test_a_refusal_of_a_field_names_it_over_rest_and_on_the_command_line():
    error = InvalidInput("Must be a UUID.", field="sessionId")
    assert rest_exception(error).detail == {"sessionId": ["Must be a UUID."]}

    class Refusing(ServiceCommand):
        def handle(self, *args, **options):
            raise error

    with pytest.raises(CommandError, match=r"^sessionId: Must be a UUID\.$"):
        Refusing().execute(force_color=False, no_color=True, skip_checks=True)


def test_a_spent_limit_says_when_to_retry_in_whole_seconds():
    answer = rest_exception(RateLimited("Slow down.", retry_after=1.2))
    assert (answer.wait, str(answer.detail)) == (2, "Slow down. Expected available in 2 seconds.")
