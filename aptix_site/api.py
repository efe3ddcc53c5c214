"""Plumbing shared by every REST endpoint: strict request serializers, pagination, the error handler (where the
services' errors become HTTP answers) and the errors' OpenAPI responses."""

import base64
import logging
import re
from datetime import datetime
from datetime import timezone as dt_timezone
from urllib import parse

from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import QueryDict
from django.utils import timezone
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse
from rest_framework import exceptions, pagination, serializers, status
from rest_framework.fields import empty
from rest_framework.response import Response
from rest_framework.views import exception_handler

from .errors import SERVER_ERROR_DETAIL, database_unavailable_response, error_body, refusal_detail
from .service_errors import Conflict, Expired, InvalidInput, NotAllowed, NotFound, RateLimited, ServiceError
from .text import whole_number

logger = logging.getLogger("aptix_site.api")


class RequestSerializer(serializers.Serializer):
    """A serializer that only reads requests: a view asks for the validated data, and a 400 answers anything else."""

    @classmethod
    def validated(cls, data, **context) -> dict:
        serializer = cls(data=data, context=context)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data

    @classmethod
    def from_query(cls, query: QueryDict, **context) -> dict:
        """The validated query parameters. One present but empty is a value to validate, as in a JSON body, where
        DRF's rules for HTML forms would take it for absent. (Each has one value; the last counts, as in Django.)"""
        return cls.validated(query.dict(), **context)


class StrictSerializer(RequestSerializer):
    """Refuses fields it does not know, naming them, instead of silently dropping them."""

    def to_internal_value(self, data):
        if isinstance(data, dict) and (unknown := sorted(set(data) - set(self.fields))):
            accepted = f"accepted fields are {', '.join(self.fields)}" if self.fields else "this request takes none"
            raise serializers.ValidationError({name: [f"Unknown field; {accepted}."] for name in unknown})
        return super().to_internal_value(data)


class NoBody(StrictSerializer):
    """
    The body of a POST that takes none: left out, or an empty object. Anything else is refused as any body is (not
    JSON, not an object, a field), rather than ignored while the POST acts: a field sent is something the caller means.
    """


class WholeNumberField(serializers.IntegerField):
    """A whole number, from 1 to max_value, by whole_number's rule (a URL's and a command's too): in a query, or in a
    body (a rollout's minSessions), where a JSON number is taken as well."""

    default_error_messages = {"invalid": "Must be a whole number from 1 to {max_value}."}

    def __init__(self, *, max_value: int, **kwargs):
        super().__init__(min_value=1, max_value=max_value, **kwargs)  # for the schema

    def to_internal_value(self, data):
        if (number := whole_number(str(data), at_most=self.max_value)) is None:
            self.fail("invalid", max_value=self.max_value)
        return number


class RevisionNumberField(WholeNumberField):
    default_error_messages = {"invalid": "Must be a catalog revision number (1, 2, 3, ...)."}

    def __init__(self, **kwargs):
        super().__init__(max_value=2**31 - 1, **kwargs)  # an integer column's range


class StrictCharField(serializers.CharField):
    """Refuses numbers and booleans instead of turning them into text; max_length counts what was sent, untrimmed."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        if self.max_length is not None and len(data) > self.max_length:
            self.fail("max_length", max_length=self.max_length)
        return super().to_internal_value(data)


class StrictDecimalField(serializers.DecimalField):
    """
    A number as JSON writes it, or as text in ASCII: digits with a sign and a decimal point. Python's Decimal() also
    reads other scripts' digits ("٥٠", "５０") and "1_0", which the schema's number is not and no client means.
    """

    def to_internal_value(self, data):
        if isinstance(data, str) and not ASCII_DECIMAL.fullmatch(data.strip()):
            self.fail("invalid")
        return super().to_internal_value(data)


# The digits after the point only with the point: "[0-9]+\.?[0-9]*" splits a run of digits in as many ways as it has
# digits, so that text of many digits that is no number took time growing with its square to refuse.
ASCII_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


class StrictBooleanField(serializers.BooleanField):
    """Refuses numbers and text instead of turning them into true or false."""

    default_error_messages = {"invalid": "Must be true or false."}

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class CursorPagination(pagination.CursorPagination):
    """By cursor, so that a page deep in millions of rows costs what the first one does (an OFFSET reads every row
    before it); subclasses set `ordering`, which an index should lead with. A bad pageSize, or a page number, is a 400
    and a cursor it did not give a 404: never another page."""

    page_size = 50
    page_size_query_param = "pageSize"
    max_page_size = 200
    invalid_cursor_message = "No page has this cursor: use a next or previous link as the list gave it."

    def paginate_queryset(self, queryset, request, view=None):
        if "page" in request.query_params:
            raise exceptions.ValidationError(
                {"page": ["This list is paged by cursor: follow the answer's next and previous links."]}
            )
        # The field the cursor's position is a value of, for decode_cursor to check it.
        self.position_field = queryset.model._meta.get_field(self.ordering.lstrip("-"))
        return super().paginate_queryset(queryset, request, view)

    def get_page_size(self, request):
        field = WholeNumberField(max_value=self.max_page_size, default=self.page_size)
        try:
            return field.run_validation(request.query_params.get(self.page_size_query_param, empty))
        except exceptions.ValidationError as error:
            raise exceptions.ValidationError({self.page_size_query_param: error.detail}) from None

    def decode_cursor(self, request):
        # DRF takes any text that decodes, even to nothing, as the first page; a client that mangled its link
        # should hear so. The cursors given are base64 of a query string of o, r and p.
        encoded = request.query_params.get(self.cursor_query_param)
        if encoded is None:
            return None
        try:
            text = base64.b64decode(encoded.encode("ascii"), validate=True).decode("ascii")
            fields = parse.parse_qs(text, keep_blank_values=True, strict_parsing=True)
            if not fields or not fields.keys() <= {"o", "r", "p"}:
                raise ValueError(text)
            cursor = super().decode_cursor(request)
            if cursor.position is not None:  # one made by hand may hold what no row of the column could
                position = self.position_field.clean(cursor.position, None)
                if isinstance(position, datetime):
                    # Nor an instant outside years 1 to 9999 in UTC (9999-12-31 at -14:00): OverflowError, which
                    # SQLite's adapter raised as the page was read.
                    aware = timezone.make_aware(position) if timezone.is_naive(position) else position
                    aware.astimezone(dt_timezone.utc)
            return cursor
        except (ValueError, OverflowError, DjangoValidationError):  # binascii.Error and UnicodeError are ValueErrors
            raise exceptions.NotFound(self.invalid_cursor_message) from None

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"].update(minimum=1, maximum=self.max_page_size)
        return parameters


class ConflictError(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_code = "conflict"


class GoneError(exceptions.APIException):
    status_code = status.HTTP_410_GONE
    default_code = "gone"


def rest_exception(error: ServiceError) -> exceptions.APIException:
    """The HTTP answer to a service's refusal: the one place REST translates them."""
    message = str(error)
    if isinstance(error, RateLimited):
        return exceptions.Throttled(wait=error.retry_after, detail=message)
    if isinstance(error, NotFound):
        return exceptions.NotFound(message)
    if isinstance(error, NotAllowed):
        return exceptions.PermissionDenied(message)
    if isinstance(error, Conflict):
        return ConflictError(message)
    if isinstance(error, Expired):
        return GoneError(message)
    # InvalidInput, or a refusal of no narrower kind: a 400, naming the field if there is one.
    field = error.field if isinstance(error, InvalidInput) else None
    return exceptions.ValidationError({field: [message]} if field else {"detail": message})


def api_exception_handler(exc, context):
    view = context.get("view")
    if isinstance(exc, ServiceError):
        exc = rest_exception(exc)
    if isinstance(exc, SuspiciousOperation):
        # Django's request limits, met as a view reads the query or body: answered and logged as Django does outside
        # a view (django.security.*, so that alerts keep working), but 413 for a body over the limit.
        logging.getLogger(f"django.security.{type(exc).__name__}").error(str(exc))
        status_code = 413 if isinstance(exc, RequestDataTooBig) else 400
        return Response(error_body(view, refusal_detail(exc), status_code), status=status_code)
    if unavailable := database_unavailable_response(context["request"], exc, view):
        return unavailable
    response = exception_handler(exc, context)
    if response is None:
        logger.exception("unhandled error in %s", view.__class__.__name__, exc_info=exc)
        return Response(error_body(view, SERVER_ERROR_DETAIL, 500), status=status.HTTP_500_INTERNAL_SERVER_ERROR)
    response.data = error_body(view, response.data, response.status_code)
    return response


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()


_ERROR_DESCRIPTIONS = {
    400: "The request is invalid; the message says which field and why.",
    401: "No valid token or session.",
    403: "Refused: the caller is not staff (catalog revisions), the session's mode does not enable this tool, "
    "or a request authenticated by a login cookie lacks its CSRF token.",
    404: "Not found (or not yours).",
    405: "The operation does not take this HTTP method.",
    409: "The state of things does not allow this now; the message says why (a tool that the agent's client "
    "executes, a revision that is not pending, a user who holds as many API tokens as allowed).",
    410: "What the request answers has expired (a mode change's confirmation, after ten minutes).",
    411: "The body reached the app without a Content-Length (chunked, where no proxy read it whole first).",
    413: "The request body is too large.",
    415: "The body is not in a media type this operation reads (JSON).",
    429: "Too many requests; retry after the Retry-After header's seconds.",
    500: "The server failed; the message is generic and reveals no internals.",
    503: "The database is busy or out of reach just now; retry after the Retry-After header's seconds.",
}


# nginx answers it before the app (deploy/nginx.conf), to any operation, in the app's error shape.
LONG_REQUEST_LINE = {
    "description": "The request line (the path and query) is over the server's limit of 8 KiB; answered by nginx "
    "under make serve.",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
}


def document_long_request_lines(result, generator, **kwargs):
    """A drf-spectacular postprocessing hook: every operation may be answered 414 (LONG_REQUEST_LINE)."""
    for path in result["paths"].values():
        for operation in path.values():  # drf-spectacular's path items hold operations only
            operation["responses"].setdefault("414", LONG_REQUEST_LINE)
    return result


class StrictSerializerSchema(OpenApiSerializerExtension):
    """Documentation only: the schema of a StrictSerializer read from a request says what it enforces, no fields but
    its own (one that also shapes an answer, AgentFileShape, promises nothing of it there)."""

    target_class = StrictSerializer
    match_subclasses = True

    def map_serializer(self, auto_schema, direction):
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        return {**schema, "additionalProperties": False} if direction == "request" else schema


def error_responses(*codes: int, body=None) -> dict:
    """extend_schema's responses for these error statuses; body, if given, is the shape of all of them."""
    return {
        code: OpenApiResponse(
            response=body or (OpenApiTypes.OBJECT if code in (400, 500) else ErrorSerializer),
            description=_ERROR_DESCRIPTIONS[code],
        )
        for code in codes
    }
