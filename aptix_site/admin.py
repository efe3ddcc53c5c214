"""Admin plumbing the apps share, and the admin site itself (installed by aptix_site.apps.AdminConfig)."""

from itertools import islice

from django.contrib import admin
from django.contrib.admin.exceptions import DisallowedModelAdminLookup
from django.contrib.admin.views.main import ChangeList
from django.core.paginator import Paginator
from django.db import connections
from django.template.response import TemplateResponse
from django.utils.functional import cached_property
from django.utils.text import smart_split


class FiltersOnlyChangeList(ChangeList):
    """A list whose query string may only use its own filters (and date hierarchy): whatever they leave is refused."""

    def get_filters(self, request):
        filters = super().get_filters(request)
        # The date hierarchy turns its year, month and day into these two, which it leaves.
        hierarchy = {f"{self.date_hierarchy}__{bound}" for bound in ("gte", "lt")} if self.date_hierarchy else set()
        if unfiltered := sorted(set(filters[2]) - hierarchy):
            raise DisallowedModelAdminLookup(f"No filter of this list filters by {', '.join(unfiltered)}.")
        return filters


# Words of one search of a list: each is looked for in every search field, one query parameter a field.
SEARCH_MAX_WORDS = 20


class ListFiltersOnly:
    """
    A list filtered only as its own filters filter it. Django lets a query string use any lookup on a local field;
    one the database refuses (?key__regex=( on PostgreSQL, ?position__range=1) was a 500. Any other is a 400 now, as
    is a search of more than SEARCH_MAX_WORDS words (4,000 took 6 s on the modes' list, 4,700 passed SQLite's bound
    on query parameters: a 500).
    """

    def get_changelist(self, request, **kwargs):
        return FiltersOnlyChangeList

    def get_search_results(self, request, queryset, search_term):
        if len(list(islice(smart_split(search_term), SEARCH_MAX_WORDS + 1))) > SEARCH_MAX_WORDS:
            raise DisallowedModelAdminLookup(f"A search takes at most {SEARCH_MAX_WORDS} words.")
        return super().get_search_results(request, queryset, search_term)


class AdminSite(admin.AdminSite):
    """The admin: every app's lists, Django's own among them, are filtered only by their filters (ListFiltersOnly)."""

    site_header = "Aptix Modes administration"
    site_title = "Aptix Modes admin"
    index_title = "Modes, tools, sessions and accounts"

    def get_urls(self):
        # No model here has a page on the site (get_absolute_url): Django's "view on site" redirect, r/<type>/<id>/, has
        # nothing to lead to, and an id it could not read as a UUID key was a 500 there.
        return [url for url in super().get_urls() if getattr(url, "name", None) != "view_on_site"]

    def register(self, model_or_iterable, admin_class=None, **options):
        admin_class = admin_class or admin.ModelAdmin
        if not issubclass(admin_class, ListFiltersOnly):
            bases, module = (ListFiltersOnly, admin_class), admin_class.__module__
            admin_class = type(admin_class.__name__, bases, {"__module__": module})
        super().register(model_or_iterable, admin_class, **options)


class ReadOnlyAdmin(admin.ModelAdmin):
    """For rows the service writes itself and nobody edits (audit rows, catalog revisions): listed and shown only."""

    def has_change_permission(self, request, obj=None):
        return False

    has_add_permission = has_delete_permission = has_change_permission


def admin_page(model_admin, request, template: str, **context) -> TemplateResponse:
    """A page of model_admin's own beyond Django's views, with the context the admin's templates expect."""
    context = {**model_admin.admin_site.each_context(request), "opts": model_admin.opts, **context}
    return TemplateResponse(request, template, context)


class EstimatedCountPaginator(Paginator):
    """An unfiltered list of a large table counted by PostgreSQL's estimate (`pg_class.reltuples`), not a COUNT(*) that
    reads millions of rows per page load. A filtered list, a table under ESTIMATED_FROM rows, and SQLite: exactly."""

    ESTIMATED_FROM = 100_000

    @cached_property
    def count(self):
        queryset = self.object_list
        connection = connections[queryset.db]
        if connection.vendor == "postgresql" and not queryset.query.where:
            with connection.cursor() as cursor:
                table = queryset.model._meta.db_table
                cursor.execute("SELECT reltuples::bigint FROM pg_class WHERE oid = %s::regclass", [table])
                estimate = cursor.fetchone()[0]
            if estimate >= self.ESTIMATED_FROM:
                return estimate
        return super().count


class LargeTableAdmin(admin.ModelAdmin):
    """For tables that grow without bound: an estimated count, and no second count of the whole table."""

    paginator = EstimatedCountPaginator
    show_full_result_count = False
