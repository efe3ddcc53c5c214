"""Admin plumbing the apps share."""

from django.contrib import admin


class ReadOnlyAdmin(admin.ModelAdmin):
    """For rows the service writes itself and nobody edits (audit rows, catalog revisions): listed and shown only."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
