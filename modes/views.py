"""
REST endpoints over the mode catalog: the published catalog for agents, read-only, and as coding agents' files; for
staff, its revisions, what each changes, their release (approve, publish), and the import of coding agents' files,
the one way the API writes the catalog's rows.
"""

from django.db.models import Prefetch
from django.http import HttpResponse
from django.utils.decorators import method_decorator
from django.views.decorators.http import condition
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import generics
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param
from rest_framework.views import APIView

from aptix_site.api import CursorPagination, NoBody, error_responses
from aptix_site.service_errors import NotFound

from .catalog import UnknownRevisionError, catalog_at_revision, revision_number
from .coding_agents.base import AgentFile
from .coding_agents.formats import FORMATS as AGENT_FORMATS
from .coding_agents.importing import import_agent_files
from .listing import ModeDetailResponse, ModeListResponse, mode_detail_payload
from .models import CatalogApproval, CatalogRevision
from .portable import PortableFileError, export_document
from .permissions import MayViewRevisions, may
from .releases import (
    abort_rollout, approve_revision, catalog_head, get_revision, promote_rollout, publish_revision,
    revision_diff
)
from .serializers import (
    AbortRequest, CatalogExportQuery, CatalogExportResponse, CatalogImportRequest, CatalogImportResponse,
    CatalogRevisionSummary, ModeListQuery, ModeToolsResponse, PromoteRequest, PublishRequest, RevisionDiffQuery,
    RevisionDiffResponse, RolloutResponse, SystemPromptQuery
)


def conditional_on_catalog(validate):
    """
    A GET whose answer is the published catalog's, whose every representation changes exactly when another revision
    is published: a matching If-None-Match is answered 304 before the body is built. validate(request, ...) raises
    the request's own errors first, for a precondition stands only for a 2xx (RFC 9110 §13.2.1); a request without
    one is validated once, by the view.
    """

    def catalog_etag(request, *args, **kwargs):
        if "If-None-Match" in request.headers or "If-Match" in request.headers:
            validate(request, *args, **kwargs)
        catalog = request.catalog
        return f"catalog-{catalog.revision}-{catalog.published_at.timestamp()}" if catalog.published_at else None

    return method_decorator(condition(etag_func=catalog_etag))

NOT_MODIFIED = {304: OpenApiResponse(description="The catalog has not changed since the ETag sent in If-None-Match.")}


class ModeListView(APIView):
    @extend_schema(
        operation_id="listModes",
        parameters=[ModeListQuery],
        responses={200: ModeListResponse, **NOT_MODIFIED, **error_responses(400, 401)},
    )
    @conditional_on_catalog(lambda request: ModeListQuery.from_query(request.query_params))
    def get(self, request):
        query = ModeListQuery.from_query(request.query_params)
        return Response(request.catalog.listing(text=query["filter"], include_examples=query["includeExamples"]))


class ModeDetailView(APIView):
    @extend_schema(
        operation_id="getMode", responses={200: ModeDetailResponse, **NOT_MODIFIED, **error_responses(400, 401, 404)}
    )
    @conditional_on_catalog(lambda request, key: request.catalog.mode(key))
    def get(self, request, key):
        return Response(mode_detail_payload(request.catalog, request.catalog.mode(key)))


class ModeToolsView(APIView):
    @extend_schema(operation_id="getModeTools", responses={200: ModeToolsResponse, **error_responses(400, 401, 404)})
    def get(self, request, key):
        return Response({"mode": key, "tools": list(request.catalog.mode(key).associated_tool_ids)})


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
    @conditional_on_catalog(lambda request: SystemPromptQuery.from_query(request.query_params))
    def get(self, request):
        query = SystemPromptQuery.from_query(request.query_params)
        prompt = request.catalog.system_prompt(query["currentMode"])
        return HttpResponse(prompt, content_type="text/plain; charset=utf-8")


class RevisionPages(CursorPagination):
    ordering = "-number"  # newest first, by primary key


# Revisions name the admins who made them: they are for staff. Agents get the number they need to run (each
# answer's catalogRevision), and a session's owner rebuilds a served context with ?revision=N.
@extend_schema_view(
    get=extend_schema(
        operation_id="listCatalogRevisions",
        responses={200: CatalogRevisionSummary(many=True), **error_responses(400, 401, 403, 404)},
        description="Every catalog revision, newest first: who made it (null for a change made around the "
        "service, such as SQL), a one-line summary of the modes and fields that changed, and its release: "
        "status, approvals, who published it and when. For staff only.",
    )
)
class CatalogRevisionListView(generics.ListAPIView):
    serializer_class = CatalogRevisionSummary
    pagination_class = RevisionPages
    permission_classes = [MayViewRevisions]
    queryset = CatalogRevision.objects.select_related("created_by", "published_by").prefetch_related(
        Prefetch("approvals", CatalogApproval.objects.select_related("user"))
    )

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "head": catalog_head()}


class RevisionNotFound(NotFound):
    """A revision a URL names that does not exist, named as the URL gave it."""

    def __init__(self, number):
        super().__init__(f"There is no catalog revision {number}.")


def revision_from_url(text: str) -> int:
    """The revision a URL names; 404 naming it if it is not a number of one."""
    if (number := revision_number(text)) is None:
        raise RevisionNotFound(text)
    return number


def revision_body(number: int) -> dict:
    """A revision as GET /api/catalog/revisions/<n>/ shows it: its whole catalog and its release."""
    try:
        revision = get_revision(number)
        catalog = catalog_at_revision(number)
    except UnknownRevisionError:
        raise RevisionNotFound(number) from None
    release = CatalogRevisionSummary(revision, context={"head": catalog_head()}).data
    # Rebuilt from the rows rather than passed through: PostgreSQL's jsonb keeps no key order.
    return {**export_document(modes=list(catalog.modes), declared_tools=list(catalog.declared_tools)), **release}


REVISION_BODY = OpenApiResponse(
    OpenApiTypes.OBJECT,
    description="The whole catalog at this revision in the portable format (format, version, modes and "
    "declared_tools), with the revision's fields as the list shows them (revision, createdAt, createdBy, "
    "summary, status, approvals, publishedAt, publishedBy, unreviewed). For staff only.",
)


class CatalogRevisionDetailView(APIView):
    permission_classes = [MayViewRevisions]

    @extend_schema(operation_id="getCatalogRevision", responses={200: REVISION_BODY, **error_responses(400, 401, 403, 404)})
    def get(self, request, number):
        return Response(revision_body(revision_from_url(number)))


class CatalogRevisionDiffView(APIView):
    permission_classes = [MayViewRevisions]

    @extend_schema(
        operation_id="diffCatalogRevision",
        parameters=[RevisionDiffQuery],
        responses={200: RevisionDiffResponse, **error_responses(400, 401, 403, 404)},
        description="What revision n changes against another (the published one by default): the Mode Catalog "
        "block once (unified diff lines), then mode by mode, a page at a time, its fields, its own lines of the block "
        "and the tools it enables, and each declared tool's fields. For staff with modes.view_catalogrevision.",
    )
    def get(self, request, number):
        query = RevisionDiffQuery.from_query(request.query_params)
        diff = revision_diff(number=revision_from_url(number), against=query["against"])
        keys = [mode["key"] for mode in diff["modes"]]
        if query["after"] is not None and query["after"] not in keys:
            raise NotFound(f"No mode {query['after']!r} is in this diff: follow its next link as given.")
        start = keys.index(query["after"]) + 1 if query["after"] is not None else 0
        diff["modes"] = page = diff["modes"][start:start + query["pageSize"]]
        more = start + len(page) < len(keys)
        diff["next"] = replace_query_param(request.build_absolute_uri(), "after", page[-1]["key"]) if more else None
        return Response(diff)


class ReleaseActionView(APIView):
    """POST approves or publishes revision n (act); 200 with the revision as GET shows it."""

    # The answer is the revision as GET shows it: it needs the view permission, as the releases page does; then the
    # services say which release permission is missing.
    permission_classes = [MayViewRevisions]

    def post(self, request, number):
        number = revision_from_url(number)
        try:
            revision = self.act(request, number)
        except UnknownRevisionError:
            raise RevisionNotFound(number) from None
        return Response(revision_body(revision.number))


def release_action_schema(operation_id: str, description: str, request=None):
    """The OpenAPI description of a release action's POST: the revision, or why not (403, 409)."""
    responses = {200: REVISION_BODY, **error_responses(400, 401, 403, 404, 409, 411, 413, 415)}
    return extend_schema_view(
        post=extend_schema(operation_id=operation_id, request=request, responses=responses, description=description)
    )


@release_action_schema(
    "approveCatalogRevision",
    "Approve the pending revision n: 403 without modes.approve_revision or for one of its authors, 409 if n is "
    "not pending. Approving twice changes nothing.",
)
class ApproveRevisionView(ReleaseActionView):
    def act(self, request, number):
        NoBody.validated(request.data)
        return approve_revision(number=number, user=request.user)


@release_action_schema(
    "publishCatalogRevision",
    "Publish revision n to agents: the pending one once approved (modes.publish_revision; "
    "modes.publish_unreviewed_revision without its approvals), or one published before (a rollback, "
    "answered with the new revision that restores it). 409 when approvals are missing or n was replaced "
    "before it was published. Publishing the published revision changes nothing. With a share or organizations, "
    "the pending revision is staged: served to that share of the sessions and to those organizations' sessions "
    "(status staged), until promoted or aborted; for the revision being rolled out, its share is raised (never "
    "lowered: 409). Another publication or a rollback while a rollout is in flight is a 409 naming it.",
    request=PublishRequest,
)
class PublishRevisionView(ReleaseActionView):
    def act(self, request, number):
        return publish_revision(number=number, user=request.user, staging=PublishRequest.staging(request.data))


class RolloutPromoteView(APIView):
    permission_classes = [MayViewRevisions]  # as ReleaseActionView's

    @extend_schema(
        operation_id="promoteCatalogRollout", request=PromoteRequest,
        responses={200: REVISION_BODY, **error_responses(400, 401, 403, 409, 411, 413, 415)},
        description="Publish the revision being rolled out to every session, from every worker's next request; its "
        "approvals and the routing gate are judged as for any publication. 409 when no rollout is in flight. Needs the "
        "publish permission.",
    )
    def post(self, request):
        number = PromoteRequest.validated(request.data)["revision"]
        return Response(revision_body(promote_rollout(user=request.user, number=number).number))


class RolloutAbortView(APIView):
    permission_classes = [MayViewRevisions]  # as ReleaseActionView's

    @extend_schema(
        operation_id="abortCatalogRollout", request=AbortRequest,
        responses={200: RolloutResponse, **error_responses(400, 401, 403, 409, 411, 413, 415)},
        description="Every session back on the published (control) revision from every worker's next request; the "
        "sessions' audit trails keep every change made meanwhile. 409 when no rollout is in flight. Needs the publish "
        "permission.",
    )
    def post(self, request):
        body = AbortRequest.validated(request.data)
        rollout = abort_rollout(user=request.user, number=body["revision"], reason=body["reason"])
        return Response(RolloutResponse(rollout).data)


class MayImportModes(BasePermission):
    """Staff who may add and change modes, as the admin's import page asks."""

    def has_permission(self, request, view):
        return may(request.user, "add_agentmode") and may(request.user, "change_agentmode")


class CatalogImportView(APIView):
    permission_classes = [MayImportModes]

    @extend_schema(
        operation_id="importCodingAgentFiles",
        request=CatalogImportRequest,
        responses={200: CatalogImportResponse, **error_responses(400, 401, 403, 411, 413, 415)},
        description="Import the modes of coding agents' files (Roo Code, Kilo, OpenCode, Claude Code), all or none, "
        "as one revision: 400 lists every problem under files, each naming its file and mode. The body may be "
        "API_MAX_IMPORT_BYTES (5 MiB). Needs modes.add_agentmode and modes.change_agentmode.",
    )
    def post(self, request):
        query = CatalogImportRequest.validated(request.data)
        files = [AgentFile(file["path"], file["content"]) for file in query["files"]]
        try:
            imported = import_agent_files(
                files=files, from_format=query["format"], update=query["update"], dry_run=query["dryRun"],
                imported_by=request.user,
            )
        except PortableFileError as error:
            raise ValidationError({"files": error.problems}) from None
        return Response(CatalogImportResponse(imported).data)


class CatalogExportView(APIView):
    @extend_schema(
        operation_id="exportCodingAgentFiles",
        parameters=[CatalogExportQuery],
        responses={200: CatalogExportResponse, **error_responses(400, 401)},
        description="The published catalog's modes as one coding agent's files, with the fidelity report.",
    )
    def get(self, request):
        query = CatalogExportQuery.from_query(request.query_params)
        writing = AGENT_FORMATS[query["format"]].write(request.catalog.exported_modes(custom_only=query["customOnly"]))
        return Response(CatalogExportResponse(writing).data)
