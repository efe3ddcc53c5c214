"""Refusals about the mode catalog that its services do not raise themselves (aptix_site.service_errors)."""

from aptix_site.service_errors import NotFound


class RevisionNotFound(NotFound):
    """A revision a URL names that does not exist, named as the URL gave it."""

    def __init__(self, number):
        super().__init__(f"There is no catalog revision {number}.")
