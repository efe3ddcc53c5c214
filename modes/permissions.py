"""What a staff permission of the catalog's means: one rule, used by the releases, the gate and the API."""


def may(user, permission: str) -> bool:
    """Whether user, active staff, holds modes.<permission>."""
    return user is not None and user.is_active and user.is_staff and user.has_perm(f"modes.{permission}")
