"""Plumbing shared by every REST endpoint: strict request serializers, pagination, the error handler."""

import logging

from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse
from rest_framework import exceptions, serializers, status
from rest_framework.pagination import PageNumberPagination
from rest_framework.parsers import JSONParser
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import exception_handler

from .errors import SERVER_ERROR_DETAIL
from .text import unstorable_text

logger = logging.getLogger("aptix_site.api")


class StrictJSONParser(JSONParser):
    """JSON bodies whose text can be stored: no NUL characters, no lone surrogates, sane nesting."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
            problem = unstorable_text(data)
        except RecursionError:
            raise exceptions.ParseError("JSON parse error - the body is nested too deeply.") from None
        if problem:
            raise exceptions.ParseError(f"Text in the request body must not contain {problem}.")
        return data


class SettingsRateThrottle(ScopedRateThrottle):
    """ScopedRateThrottle reading its rates when asked, so changed settings take effect."""

    def get_rate(self):
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)


class StrictSerializer(serializers.Serializer):
    """Refuses fields it does not know, naming them, instead of silently dropping them."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {name: ["Unknown field; accepted fields are " + ", ".join(self.fields) + "."] for name in unknown}
                )
        return super().to_internal_value(data)


class StrictCharField(serializers.CharField):
    """
    A string field that refuses numbers and booleans instead of turning them into
    text, and applies max_length to what was sent, before whitespace is trimmed.
    """

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        if self.max_length is not None and len(data) > self.max_length:
            self.fail("max_length", max_length=self.max_length)
        return super().to_internal_value(data)


class Pagination(PageNumberPagination):
    """Page-number pagination that refuses a bad pageSize (400) instead of quietly using the default."""

    page_size = 50
    page_size_query_param = "pageSize"
    max_page_size = 200

    def get_page_size(self, request):
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        if not (raw.isascii() and raw.isdigit() and 1 <= int(raw) <= self.max_page_size):
            raise exceptions.ValidationError(
                {self.page_size_query_param: [f"Must be a whole number from 1 to {self.max_page_size}."]}
            )
        return int(raw)

    def get_page_number(self, request, paginator):
        raw = request.query_params.get(self.page_query_param, "1")
        if raw in self.last_page_strings:
            return raw
        if not (raw.isascii() and raw.isdigit() and int(raw) >= 1):
            raise exceptions.ValidationError({self.page_query_param: ["Must be a whole number, 1 or more."]})
        return raw

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"].update(minimum=1, maximum=self.max_page_size)
            elif parameter["name"] == self.page_query_param:
                parameter["schema"].update(minimum=1)
        return parameters


def api_exception_handler(exc, context):
    response = exception_handler(exc, context)
    if response is None:
        logger.exception("unhandled error in %s", context["view"].__class__.__name__, exc_info=exc)
        response = Response({"detail": SERVER_ERROR_DETAIL}, status=status.HTTP_500_INTERNAL_SERVER_ERROR)
    return response


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()


_ERROR_DESCRIPTIONS = {
    400: "The request is invalid; the body says which field and why.",
    401: "No valid token or session.",
    403: "Not allowed for this session.",
    404: "Not found (or not yours).",
    413: "The request body is too large.",
    415: "The body is not in a media type this operation reads (JSON).",
    429: "Too many requests; retry after the Retry-After header's seconds.",
    500: "The server failed; the message is generic and reveals no internals.",
}


class StrictSerializerSchema(OpenApiSerializerExtension):
    """Documentation only: the schema of a StrictSerializer says what it enforces, no fields but its own."""

    target_class = StrictSerializer
    match_subclasses = True

    def map_serializer(self, auto_schema, direction):
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        return {**schema, "additionalProperties": False}


def error_responses(*codes: int) -> dict:
    """OpenAPI responses for the error statuses an operation can return (for extend_schema)."""
    return {
        code: OpenApiResponse(
            response=OpenApiTypes.OBJECT if code in (400, 500) else ErrorSerializer,
            description=_ERROR_DESCRIPTIONS[code],
        )
        for code in codes
    }
