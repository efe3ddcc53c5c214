"""API errors about the mode catalog."""

from rest_framework import exceptions


class ModeNotFound(exceptions.NotFound):
    default_detail = "No such mode."
    default_code = "unknown_mode"


class RevisionNotFound(exceptions.NotFound):
    default_detail = "No such catalog revision."
    default_code = "unknown_revision"
