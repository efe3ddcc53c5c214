"""Admin for the mode catalog: review, search, reorder, add custom modes, switch the default."""

from django.contrib import admin, messages
from django.contrib.admin.actions import delete_selected as django_delete_selected
from django.http import HttpResponseRedirect
from django.urls import reverse

from .models import AgentMode
from .services import set_default_mode


def deletion_refusal(mode: AgentMode) -> str | None:
    """Why this mode must stay, or None if it may be deleted."""
    if mode.is_default:
        return f"'{mode.key}' is the default mode; make another mode the default first."
    if mode.source == AgentMode.Source.BUILTIN:
        return f"'{mode.key}' is a built-in mode that AGN-014 requires; set its status to deprecated instead."
    return None


@admin.register(AgentMode)
class AgentModeAdmin(admin.ModelAdmin):
    list_display = ["key", "display_name", "status", "is_default", "source", "version", "position"]
    list_display_links = ["key", "display_name"]
    list_editable = ["position"]
    list_filter = ["status", "source", "is_default"]
    search_fields = ["key", "display_name", "description", "when_to_use"]
    actions = ["make_default", "delete_selected"]
    fieldsets = [
        (None, {"fields": ["id", "key", "display_name", "description", "when_to_use"]}),
        ("Catalog", {"fields": ["is_default", "status", "version", "position", "source"]}),
        ("Behaviour", {"fields": ["mode_instructions", "behavior_hints", "human_role_hints", "example_utterances"]}),
        ("Tools and retrieval", {"fields": ["associated_tool_ids", "tool_group_hints", "rag_scope_hints"]}),
        ("Recognition (advisory)", {"fields": ["strong_signals", "weak_signals"]}),
        ("History", {"fields": ["created_at", "updated_at"]}),
    ]

    def get_readonly_fields(self, request, obj=None):
        readonly = ["id", "is_default", "source", "created_at", "updated_at"]
        if obj is not None and obj.source == AgentMode.Source.BUILTIN:
            readonly.append("key")
        return readonly

    def has_delete_permission(self, request, obj=None):
        if obj is not None and deletion_refusal(obj):
            return False
        return super().has_delete_permission(request, obj)

    def delete_view(self, request, object_id, extra_context=None):
        mode = self.get_object(request, object_id)
        refusal = mode and deletion_refusal(mode)
        if refusal:
            self.message_user(request, f"Not deleted: {refusal}", messages.ERROR)
            return HttpResponseRedirect(reverse("admin:modes_agentmode_change", args=[mode.pk]))
        return super().delete_view(request, object_id, extra_context)

    @admin.action(description="Make the selected mode the default", permissions=["change"])
    def make_default(self, request, queryset):
        if queryset.count() != 1:
            self.message_user(request, "Select exactly one mode to make the default.", messages.ERROR)
            return
        mode = queryset.get()
        set_default_mode(mode=mode)
        self.message_user(request, f"'{mode.key}' is now the default mode.", messages.SUCCESS)

    @admin.action(description="Delete selected agent modes", permissions=["delete"])
    def delete_selected(self, request, queryset):
        refusals = [reason for reason in map(deletion_refusal, queryset) if reason]
        if refusals:
            self.message_user(request, "Nothing deleted: " + " ".join(refusals), messages.ERROR)
            return None
        return django_delete_selected(self, request, queryset)
