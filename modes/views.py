"""Read-only REST endpoints over the mode catalog; the catalog is never written through the API."""

from django.http import HttpResponse
from django.utils.decorators import method_decorator
from django.views.decorators.http import condition
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics
from rest_framework.permissions import IsAdminUser
from rest_framework.response import Response
from rest_framework.views import APIView

from aptix_site.api import CursorPagination, error_responses

from .catalog import (
    UnknownModeError,
    UnknownRevisionError,
    catalog_at_revision,
    build_system_prompt,
    current_catalog,
    get_mode,
    get_tools_for_mode,
    list_modes_json,
)
from .exceptions import ModeNotFound, RevisionNotFound
from .listing import mode_detail_payload
from .models import CatalogRevision
from .portable import export_document
from .serializers import (
    CatalogRevisionSummary,
    ModeDetailResponse,
    ModeListQuery,
    ModeListResponse,
    ModeToolsResponse,
    SystemPromptQuery,
)


def catalog_etag(request, *args, **kwargs):
    """Every catalog representation changes exactly when the catalog version does."""
    version = current_catalog().version
    return f"catalog-{version}" if version else None


# A matching If-None-Match is answered 304 before the body is built.
conditional_on_catalog = method_decorator(condition(etag_func=catalog_etag))
NOT_MODIFIED = {304: OpenApiResponse(description="The catalog has not changed since the ETag sent in If-None-Match.")}


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
        responses={200: ModeListResponse, **NOT_MODIFIED, **error_responses(400, 401)},
    )
    @conditional_on_catalog
    def get(self, request):
        query = ModeListQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        return HttpResponse(
            list_modes_json(
                text=query.validated_data["filter"], include_examples=query.validated_data["includeExamples"]
            ),
            content_type="application/json",
        )


class ModeDetailView(APIView):
    @extend_schema(
        operation_id="getMode", responses={200: ModeDetailResponse, **NOT_MODIFIED, **error_responses(400, 401, 404)}
    )
    @conditional_on_catalog
    def get(self, request, key):
        return Response(mode_detail_payload(_by_key(get_mode, key)))


class ModeToolsView(APIView):
    @extend_schema(operation_id="getModeTools", responses={200: ModeToolsResponse, **error_responses(400, 401, 404)})
    def get(self, request, key):
        return Response({"mode": key, "tools": _by_key(get_tools_for_mode, key)})


class SystemPromptView(APIView):
    @extend_schema(
        operation_id="getSystemPrompt",
        parameters=[SystemPromptQuery],
        responses={
            (200, "text/plain"): OpenApiResponse(OpenApiTypes.STR, description="The Mode Catalog block."),
            **NOT_MODIFIED,
            **error_responses(400, 401),
        },
    )
    @conditional_on_catalog
    def get(self, request):
        query = SystemPromptQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        return HttpResponse(
            build_system_prompt(query.validated_data["currentMode"]), content_type="text/plain; charset=utf-8"
        )


class RevisionPages(CursorPagination):
    ordering = "-number"  # newest first, by primary key


# Revisions name the admins who made them: they are for staff. Agents get the number they need to run (each
# answer's catalogRevision), and a session's owner rebuilds a served context with ?revision=N.
class CatalogRevisionListView(generics.ListAPIView):
    serializer_class = CatalogRevisionSummary
    pagination_class = RevisionPages
    permission_classes = [IsAdminUser]

    def get_queryset(self):
        current_catalog()  # a change made around the service is recorded before the revisions are listed
        return CatalogRevision.objects.select_related("created_by").defer("catalog")

    @extend_schema(
        operation_id="listCatalogRevisions",
        responses={200: CatalogRevisionSummary(many=True), **error_responses(400, 401, 403, 404)},
        description="Every catalog revision, newest first: who made it (null for a change made around the "
        "service, such as SQL) and a one-line summary of the modes and fields that changed. For staff only.",
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class CatalogRevisionDetailView(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="getCatalogRevision",
        responses={
            200: OpenApiResponse(
                OpenApiTypes.OBJECT,
                description="The whole catalog at this revision in the portable format that export_modes writes "
                "and import_modes reads: format, version, modes and declared_tools. For staff only.",
            ),
            **error_responses(400, 401, 403, 404),
        },
    )
    def get(self, request, number):
        try:
            catalog = catalog_at_revision(int(number)) if number.isascii() and number.isdigit() else None
        except UnknownRevisionError:
            catalog = None
        if catalog is None:
            raise RevisionNotFound(f"There is no catalog revision {number}.")
        # Rebuilt from the rows rather than passed through: PostgreSQL's jsonb keeps no key order.
        return Response(export_document(modes=list(catalog.modes), declared_tools=list(catalog.declared_tools)))
