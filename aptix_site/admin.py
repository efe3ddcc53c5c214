"""Admin plumbing the apps share."""

from django.contrib import admin
from django.core.paginator import Paginator
from django.db import connections
from django.template.response import TemplateResponse
from django.utils.functional import cached_property


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
