"""Admin plumbing the apps share, and the admin site itself (installed by aptix_site.apps.AdminConfig)."""

from django.contrib import admin
from django.core.paginator import Paginator
from django.db import connections
from django.template.response import TemplateResponse
from django.utils.functional import cached_property


class ListFiltersOnly:
    """
    A list filtered only as its own filters filter it. Django lets a query string use any lookup on a local field;
    one the database refuses (?key__regex=( on PostgreSQL, ?position__range=1) was a 500. Any other is a 400 now.
    """

    FILTER_LOOKUPS = ("exact", "isnull", "id__exact", "gte", "lt")  # what Django's field filters send
    HIERARCHY_LOOKUPS = ("year", "month", "day")

    def lookup_allowed(self, lookup, value, request=None):
        allowed = {f"{self.date_hierarchy}__{kind}" for kind in self.HIERARCHY_LOOKUPS} if self.date_hierarchy else set()
        for item in self.list_filter:
            if isinstance(item, type):  # a SimpleListFilter, and its parameter
                allowed.add(item.parameter_name)
            else:  # a field, or (a field, its filter)
                field = item if isinstance(item, str) else item[0]
                allowed.update(f"{field}__{kind}" for kind in self.FILTER_LOOKUPS)
        return lookup in allowed and super().lookup_allowed(lookup, value, request)


class AdminSite(admin.AdminSite):
    """The admin: every app's lists, Django's own among them, are filtered only by their filters (ListFiltersOnly)."""

    site_header = "Aptix Modes administration"
    site_title = "Aptix Modes admin"
    index_title = "Modes, tools, sessions and accounts"

    def register(self, model_or_iterable, admin_class=None, **options):
        admin_class = admin_class or admin.ModelAdmin
        if not issubclass(admin_class, ListFiltersOnly):
            admin_class = type(admin_class.__name__, (ListFiltersOnly, admin_class), {"__module__": admin_class.__module__})
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
