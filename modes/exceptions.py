"""API errors about the mode catalog."""

from rest_framework import exceptions, status


class ModeNotFound(exceptions.NotFound):
    default_detail = "No such mode."
    default_code = "unknown_mode"


class RevisionNotFound(exceptions.NotFound):
    default_detail = "No such catalog revision."
    default_code = "unknown_revision"


class ReleaseNotAllowed(exceptions.PermissionDenied):
    default_code = "release_not_allowed"


class ReleaseBlocked(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The catalog's release does not allow this now."
    default_code = "release_conflict"
