"""Admin for organizations, memberships and API tokens (listed and revoked here, never shown or minted)."""

from django.contrib import admin

from .models import ApiToken, Membership, Organization


@admin.register(Organization)
class OrganizationAdmin(admin.ModelAdmin):
    list_display = ["name", "slug"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "organization"]
    list_select_related = ["user", "organization"]
    autocomplete_fields = ["organization"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """
    Tokens are listed, never their keys (not stored) nor their digests. None is added here: a key is shown
    once, to whoever creates it (create_token, create_agent_user, POST /api/token/). Deleting one revokes it.
    """

    list_display = ["name", "prefix", "user", "created", "last_used_at", "expiry"]
    list_select_related = ["user"]
    search_fields = ["name", "token_key", "user__username"]
    fields = list_display
    readonly_fields = list_display

    @admin.display(description="prefix", ordering="token_key")
    def prefix(self, token):
        """The key's first characters, to match a token against the key a client holds."""
        return f"{token.token_key}…"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        # Nothing of a token is edited: revoke it and create another.
        return False
