"""Read-only REST endpoints over the mode catalog; the catalog is never written through the API."""

from django.http import HttpResponse
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from .catalog import UnknownModeError, build_system_prompt, find_modes, get_mode, get_tools_for_mode
from .listing import mode_detail_payload, mode_list_payload
from .tools import FILTER_MAX_LENGTH


class ModeNotFound(exceptions.NotFound):
    default_detail = "No such mode."
    default_code = "unknown_mode"


class ModeListQuery(serializers.Serializer):
    filter = serializers.CharField(required=False, allow_blank=True, max_length=FILTER_MAX_LENGTH, default="")
    includeExamples = serializers.BooleanField(required=False, default=False)


class SystemPromptQuery(serializers.Serializer):
    currentMode = serializers.CharField(required=False, allow_blank=True, max_length=64, default="")


def _by_key(lookup, key):
    """lookup(key), with an unknown key answered 404 naming it and the valid keys."""
    try:
        return lookup(key)
    except UnknownModeError as error:
        raise ModeNotFound(str(error)) from None


class ModeListView(APIView):
    def get(self, request):
        query = ModeListQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        modes = find_modes(text=query.validated_data["filter"])
        return Response(mode_list_payload(modes, include_examples=query.validated_data["includeExamples"]))


class ModeDetailView(APIView):
    def get(self, request, key):
        return Response(mode_detail_payload(_by_key(get_mode, key)))


class ModeToolsView(APIView):
    def get(self, request, key):
        return Response({"mode": key, "tools": _by_key(get_tools_for_mode, key)})


class SystemPromptView(APIView):
    def get(self, request):
        query = SystemPromptQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        return HttpResponse(
            build_system_prompt(query.validated_data["currentMode"]), content_type="text/plain; charset=utf-8"
        )
