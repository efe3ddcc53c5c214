"""
Admin for agent sessions, each with its latest mode changes (and how each was confirmed) and a link to all (never
edited), in the same number of queries however many it has; the mode graph page: the published catalog's graph (or
a revision's, ?revision=N), the last 30 days' switches on it; and the Catalog releases page of modes.admin, with how
a rollout's cohort fares against the control's, which only this app can read.
"""

from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.urls import path
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_safe

from aptix_site.admin import LargeTableAdmin, ReadOnlyAdmin, admin_page
from modes.admin import CatalogRevisionAdmin
from modes.catalog import catalog_at_revision, published_catalog, revision_number
from modes.graph_drawing import GraphUnavailable, mode_graph_dot, render_svg
from modes.models import AgentMode, CatalogRevision

from .models import AgentSession, ModeChange
from .rollout_cohorts import cohorts
from .selectors import InvalidSessionId, parse_session_id
from .transitions import transition_counts

LATEST_MODE_CHANGES = 20  # on a session's page; the rest are one link away, on the paginated list
GRAPH_DAYS = 30  # the period whose switches the mode graph's arrows count


class SessionFilter(admin.SimpleListFilter):
    """The mode changes of one session, as the link on its page opens them. It offers only the session chosen: a
    choice of every session would make the list's page grow with their number."""

    title = "session"
    parameter_name = "session__id__exact"

    def lookups(self, request, model_admin):
        if self.value() is None:
            return []
        try:
            session_id = parse_session_id(self.value())
        except InvalidSessionId as error:
            raise IncorrectLookupParameters(error) from None
        session = AgentSession.objects.filter(pk=session_id).first()
        return [(self.value(), str(session or f"{session_id} (no such session)"))]

    def queryset(self, request, queryset):
        return queryset.filter(session_id=self.value()) if self.value() else queryset


@admin.register(AgentSession)
class AgentSessionAdmin(LargeTableAdmin):
    list_display = ["id", "title", "owner", "org", "mode", "created_at", "updated_at"]
    list_select_related = ["owner", "org", "mode"]
    list_filter = ["mode", "org"]
    search_fields = ["id", "title", "owner__username"]
    readonly_fields = ["id", "owner", "org", "mode", "parent", "catalog_revision", "created_at", "updated_at"]
    fields = ["id", "title", "owner", "org", "mode", "parent", "catalog_revision", "created_at", "updated_at"]

    def has_add_permission(self, request):
        return False  # sessions are created by their owners through the API

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:  # shown under the form by admin/sessions_app/agentsession/change_form.html
            related = ("from_mode", "to_mode", "changed_by", "org", "confirmation")
            changes = obj.mode_changes.select_related(*related).order_by("-id")
            context.update(latest_mode_changes=list(changes[:LATEST_MODE_CHANGES]), mode_change_count=changes.count())
        return super().render_change_form(request, context, add, change, form_url, obj)


@admin.register(ModeChange)
class ModeChangeAdmin(ReadOnlyAdmin, LargeTableAdmin):
    list_display = [
        "changed_at", "session", "from_mode", "to_mode", "branch", "changed_by", "confirmed_by", "catalog_revision"
    ]
    list_select_related = ["session", "from_mode", "to_mode", "changed_by"]
    list_filter = [SessionFilter, "to_mode", "branch"]
    search_fields = ["session__id", "reason", "changed_by__username"]
    ordering = ["-id"]  # newest first: ids are taken in the order the changes were made

    def get_urls(self):
        view = self.admin_site.admin_view(require_safe(self.mode_graph_view))
        # First: the admin's own "<path:object_id>/" would otherwise take graph/ for a change's id.
        return [path("graph/", view, name="sessions_app_mode_graph"), *super().get_urls()]

    def mode_graph_view(self, request):
        if not (self.has_view_permission(request) and request.user.has_perm("modes.view_agentmode")):
            raise PermissionDenied
        revision = _revision_asked(request)
        catalog = published_catalog() if revision is None else catalog_at_revision(revision)
        counts = transition_counts(days=GRAPH_DAYS, revision=revision)
        dot = mode_graph_dot(modes=catalog.modes, default=catalog.default, counts=counts)
        try:
            # dot escapes every label it writes (and modes.graph_drawing every label it hands dot): text only.
            svg, problem = mark_safe(render_svg(dot)), None
        except GraphUnavailable as error:
            svg, problem = None, str(error)
        return admin_page(
            self, request, "admin/sessions_app/mode_graph.html", opts=AgentMode._meta, title="Mode graph", svg=svg,
            problem=problem, days=GRAPH_DAYS, revision=catalog.revision, filtered=revision is not None,
        )


def _revision_asked(request) -> int | None:
    """?revision=N: the graph of that revision with the switches made under it; 404 for one that does not exist."""
    text = request.GET.get("revision")
    if text is None:
        return None
    if (number := revision_number(text)) is None or not CatalogRevision.objects.filter(number=number).exists():
        raise Http404(f"There is no catalog revision {text!r}.")
    return number


admin.site.unregister(CatalogRevision)


@admin.register(CatalogRevision)
class CatalogReleasesAdmin(CatalogRevisionAdmin):
    """modes' revisions and releases page, with the cohorts of the rollout in flight (or the last one) compared."""

    def rollout_context(self, request, summary) -> dict:
        shown = summary["rollout"]
        return {"cohorts": [cohort.report() for cohort in cohorts(shown["rollout"])]} if shown else {}
