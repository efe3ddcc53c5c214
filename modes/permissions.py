"""What a staff permission of the catalog's means: one rule, used by the releases, the gate and the API."""

from rest_framework.permissions import BasePermission


def may(user, permission: str) -> bool:
    """Whether user, active staff, holds modes.<permission>."""
    return user is not None and user.is_active and user.is_staff and user.has_perm(f"modes.{permission}")


class MayViewRevisions(BasePermission):
    """Staff holding modes.view_catalogrevision, as the admin's revision list and releases page ask."""

    def has_permission(self, request, view):
        return may(request.user, "view_catalogrevision")
