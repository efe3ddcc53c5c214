"""
Which web pages may call the MCP endpoints. The streamable HTTP transport requires a server to check the
Origin header a browser sends, so that a page on another site (or a DNS-rebound name) cannot drive a user's
MCP server: an Origin is accepted when it is the request's own (its scheme and Host), one of
CSRF_TRUSTED_ORIGINS (with their `https://*.example.com` wildcards, as Django reads them) or one of
MCP_ALLOWED_ORIGINS. A request without Origin comes from a program, not a page, and is served.
"""

from urllib.parse import urlsplit

from django.conf import settings
from django.utils.http import is_same_domain


def origin_allowed(request) -> bool:
    origin = request.headers.get("Origin")
    trusted = [*settings.CSRF_TRUSTED_ORIGINS, *settings.MCP_ALLOWED_ORIGINS]
    if origin is None or origin == f"{request.scheme}://{request.get_host()}" or origin in trusted:
        return True
    try:
        requested = urlsplit(origin)
    except ValueError:  # "http://[::1", which no browser sends: urlsplit refuses it
        return False
    return any(
        "*" in allowed
        and urlsplit(allowed).scheme == requested.scheme
        and is_same_domain(requested.netloc, urlsplit(allowed).netloc.removeprefix("*"))
        for allowed in trusted
    )
