"""
Admin for organizations (deleted by accounts.services, which locks them first), memberships, API tokens (listed and
revoked here, never shown or minted) and the login attempts django-axes records, whose "Clean up expired attempts"
action takes the delete permission like any deletion.
"""

from axes import admin as axes_admin
from axes.models import AccessAttempt
from django import forms
from django.contrib import admin
from django.contrib.admin.actions import delete_selected as django_delete_selected
from django.db import transaction
from django.utils.translation import gettext_lazy as _

from aptix_site.admin import LargeTableAdmin, ReadOnlyAdmin

from .models import ApiToken, Membership, Organization
from .services import delete_organizations, organization_kept, organizations_to_delete


@admin.register(Organization)
class OrganizationAdmin(admin.ModelAdmin):
    list_display = ["name", "slug"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    actions = ["delete_selected"]

    def get_deleted_objects(self, objs, request):
        # A deletion posted locks the organizations before Django looks for what names them, and keeps them locked
        # until they are deleted (organizations_to_delete); a page only shown locks nothing.
        if request.method == "POST":
            objs = organizations_to_delete(organizations=objs)
        return super().get_deleted_objects(objs, request)

    @admin.action(description=_("Delete selected %(verbose_name_plural)s"), permissions=["delete"])
    def delete_selected(self, request, queryset):
        # Django's action runs outside a transaction: in one, the lock taken for its page lasts until the deletion.
        with transaction.atomic():
            return django_delete_selected(self, request, queryset)

    def delete_model(self, request, obj):
        delete_organizations(organizations=[obj])

    def delete_queryset(self, request, queryset):
        delete_organizations(organizations=queryset)


class MembershipForm(forms.ModelForm):
    def clean_organization(self):
        # Validated in the transaction that saves the membership (the admin's): locked until then.
        organization = self.cleaned_data["organization"]
        if organization is not None and not organization_kept(organization=organization):
            raise forms.ValidationError("This organization was deleted meanwhile; choose another.")
        return organization


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "organization"]
    list_select_related = ["user", "organization"]
    autocomplete_fields = ["organization"]
    form = MembershipForm


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
