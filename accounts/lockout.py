"""
Password guessing, as django-axes sees it: which address a login comes from, and what a client locked out
of the admin login is told. (POST /api/token/ says it in JSON: accounts.views.TokenView.)
"""

from django.conf import settings
from django.shortcuts import render
from rest_framework.throttling import BaseThrottle


def client_address(request) -> str:
    """The address DRF's throttles identify a client by: X-Forwarded-For is trusted only from API_NUM_PROXIES."""
    return BaseThrottle().get_ident(getattr(request, "_request", request))


def lockout_message() -> str:
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    return (
        f"Too many failed logins for this user name from your address. Try again in {minutes} minutes, "
        "or ask an administrator to unlock it."
    )


def lockout_seconds() -> int:
    return int(settings.AXES_COOLOFF_TIME.total_seconds())


def admin_lockout_response(request, original_response=None, credentials=None):
    response = render(request, "accounts/lockout.html", {"message": lockout_message()}, status=429)
    response["Retry-After"] = str(lockout_seconds())
    return response
