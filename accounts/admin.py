"""
Admin for organizations, memberships, API tokens (listed and revoked here, never shown or minted) and the login
attempts django-axes records, whose "Clean up expired attempts" action takes the delete permission like any deletion.
"""

from axes import admin as axes_admin
from axes.models import AccessAttempt
from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from aptix_site.admin import LargeTableAdmin, ReadOnlyAdmin

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


class AccessAttemptAdmin(axes_admin.AccessAttemptAdmin):
    """axes' admin, whose action declares no permission: Django offers such an action to whoever may view the list."""

    @admin.action(description=_("Clean up expired attempts"), permissions=["delete"])
    def cleanup_expired_attempts(self, request, queryset):
        return super().cleanup_expired_attempts(request, queryset)


if admin.site.is_registered(AccessAttempt):  # importing axes' admin registered it, unless AXES_ENABLE_ADMIN is off
    admin.site.unregister(AccessAttempt)
    admin.site.register(AccessAttempt, AccessAttemptAdmin)


@admin.register(ApiToken)
class ApiTokenAdmin(ReadOnlyAdmin, LargeTableAdmin):
    """
    Tokens are listed, never their keys (not stored) nor their digests. None is added here: a key is shown once, to
    whoever creates it (create_token, create_agent_user, POST /api/token/). None is edited: deleting revokes it.
    """

    list_display = ["name", "prefix", "user", "created", "last_used_at", "expiry"]
    list_select_related = ["user"]
    search_fields = ["name", "token_key", "user__username"]
    fields = list_display
    readonly_fields = list_display
    has_delete_permission = admin.ModelAdmin.has_delete_permission  # revoking: the one thing done to a token here

    @admin.display(description="prefix", ordering="token_key")
    def prefix(self, token):
        """The key's first characters, to match a token against the key a client holds."""
        return f"{token.token_key}…"
