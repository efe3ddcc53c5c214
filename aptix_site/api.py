"""Plumbing shared by every REST endpoint: strict request serializers, pagination, the error handler."""

import logging

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse
from rest_framework import exceptions, serializers, status
from rest_framework.pagination import PageNumberPagination
from rest_framework.parsers import JSONParser
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import exception_handler

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


class Pagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "pageSize"
    max_page_size = 200


def api_exception_handler(exc, context):
    response = exception_handler(exc, context)
    if response is None:
        logger.exception("unhandled error in %s", context["view"].__class__.__name__, exc_info=exc)
        response = Response(
            {"detail": "The server failed to handle this request."}, status=status.HTTP_500_INTERNAL_SERVER_ERROR
        )
    return response


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()


_ERROR_DESCRIPTIONS = {
    400: "The request is invalid; the body says which field and why.",
    401: "No valid token or session.",
    403: "Not allowed for this session.",
    404: "Not found (or not yours).",
    413: "The request body is too large.",
    429: "Too many requests; retry after the Retry-After header's seconds.",
    500: "The server failed; the message is generic and reveals no internals.",
}


def error_responses(*codes: int) -> dict:
    """OpenAPI responses for the error statuses an operation can return (for extend_schema)."""
    return {
        code: OpenApiResponse(
            response=OpenApiTypes.OBJECT if code in (400, 500) else ErrorSerializer,
            description=_ERROR_DESCRIPTIONS[code],
        )
        for code in codes
    }
