"""Read-only REST endpoints over the mode catalog; the catalog is never written through the API."""

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import APIView

from aptix_site.api import error_responses

from .catalog import UnknownModeError, build_system_prompt, find_modes, get_mode, get_tools_for_mode
from .listing import mode_detail_payload, mode_list_payload
from .serializers import (
    ModeDetailResponse,
    ModeListQuery,
    ModeListResponse,
    ModeToolsResponse,
    SystemPromptQuery,
)


class ModeNotFound(exceptions.NotFound):
    default_detail = "No such mode."
    default_code = "unknown_mode"


def _by_key(lookup, key):
    """lookup(key), with an unknown key answered 404 naming it and the valid keys."""
    try:
        return lookup(key)
    except UnknownModeError as error:
        raise ModeNotFound(str(error)) from None


class ModeListView(APIView):
    @extend_schema(
        operation_id="listModes",
        parameters=[ModeListQuery],
        responses={200: ModeListResponse, **error_responses(400, 401)},
    )
    def get(self, request):
        query = ModeListQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        modes = find_modes(text=query.validated_data["filter"])
        return Response(mode_list_payload(modes, include_examples=query.validated_data["includeExamples"]))


class ModeDetailView(APIView):
    @extend_schema(operation_id="getMode", responses={200: ModeDetailResponse, **error_responses(401, 404)})
    def get(self, request, key):
        return Response(mode_detail_payload(_by_key(get_mode, key)))


class ModeToolsView(APIView):
    @extend_schema(operation_id="getModeTools", responses={200: ModeToolsResponse, **error_responses(401, 404)})
    def get(self, request, key):
        return Response({"mode": key, "tools": _by_key(get_tools_for_mode, key)})


class SystemPromptView(APIView):
    @extend_schema(
        operation_id="getSystemPrompt",
        parameters=[SystemPromptQuery],
        responses={
            (200, "text/plain"): OpenApiResponse(OpenApiTypes.STR, description="The Mode Catalog block."),
            **error_responses(400, 401),
        },
    )
    def get(self, request):
        query = SystemPromptQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        return HttpResponse(
            build_system_prompt(query.validated_data["currentMode"]), content_type="text/plain; charset=utf-8"
        )
