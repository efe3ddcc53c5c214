"""Admin for agent sessions. Staff see every session here; mode changes are shown, never edited."""

from django.contrib import admin

from aptix_site.admin import ReadOnlyAdmin

from .models import AgentSession, ModeChange


class ModeChangeInline(admin.TabularInline):
    model = ModeChange
    fk_name = "session"
    fields = [
        "changed_at", "from_mode", "to_mode", "reason", "branch", "branch_session", "changed_by", "org", "catalog_revision"
    ]
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ["id"]

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(AgentSession)
class AgentSessionAdmin(admin.ModelAdmin):
    list_display = ["id", "title", "owner", "org", "mode", "created_at", "updated_at"]
    list_select_related = ["owner", "org", "mode"]
    list_filter = ["mode", "org"]
    search_fields = ["id", "title", "owner__username"]
    readonly_fields = ["id", "owner", "org", "mode", "parent", "catalog_revision", "created_at", "updated_at"]
    fields = ["id", "title", "owner", "org", "mode", "parent", "catalog_revision", "created_at", "updated_at"]
    inlines = [ModeChangeInline]

    def has_add_permission(self, request):
        # Sessions are created by their owners through the API.
        return False


@admin.register(ModeChange)
class ModeChangeAdmin(ReadOnlyAdmin):
    list_display = ["changed_at", "session", "from_mode", "to_mode", "branch", "changed_by", "catalog_revision"]
    list_select_related = ["session", "from_mode", "to_mode", "changed_by"]
    list_filter = ["to_mode", "branch"]
    search_fields = ["session__id", "reason", "changed_by__username"]
