"""
Admin for organizations and memberships, and for the login attempts that django-axes records: its
"Clean up expired attempts" action deletes rows, so here it takes the delete permission like any deletion.
"""

from axes import admin as axes_admin
from axes.models import AccessAttempt
from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from .models import Membership, Organization


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
