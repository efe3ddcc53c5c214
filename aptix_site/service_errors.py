"""The kinds of refusal a service raises: plain exceptions, no HTTP. The app that owns a rule defines a class per error,
under one of these kinds, with its message; each way of serving translates a kind once (REST in aptix_site.api, MCP
in mcp_server.server, commands in aptix_site.commands). Nothing changed when one is raised."""

import math


class ServiceError(Exception):
    """A request a rule refuses; str() is the message for a person. Subclasses may set a default message."""

    message = "The request was refused."

    def __init__(self, message: str | None = None):
        super().__init__(message or self.message)


class NotFound(ServiceError):
    """What the request names does not exist (or is not the caller's)."""


class NotAllowed(ServiceError):
    """The caller may not do this."""


class Conflict(ServiceError):
    """The state of things does not allow this now."""


class Expired(ServiceError):
    """What the request names existed, but its time is over."""


class InvalidInput(ServiceError):
    """A value the caller gave is not acceptable; field names it, if it is one of the request's fields."""

    field: str | None = None

    def __init__(self, message: str | None = None, *, field: str | None = None):
        super().__init__(message)
        if field is not None:
            self.field = field


class RateLimited(ServiceError):
    """The caller has spent a limit this request counts against; retry after retry_after seconds."""

    def __init__(self, message: str | None = None, *, retry_after: float | None):
        super().__init__(message)
        self.retry_after = retry_after if retry_after is None else math.ceil(retry_after)


def one_line(error: ServiceError) -> str:
    """The error as one line for a person, naming the field it is about (as REST's error bodies do)."""
    field = getattr(error, "field", None)
    return f"{field}: {error}" if field else str(error)
