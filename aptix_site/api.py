"""Plumbing shared by every REST endpoint: strict request serializers, pagination, the error handler."""

import logging

from rest_framework import serializers, status
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response
from rest_framework.views import exception_handler

logger = logging.getLogger("aptix_site.api")


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
